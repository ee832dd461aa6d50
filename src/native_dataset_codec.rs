//! `org.ferrodl.jni.NativeDataSetCodec`: the DataSet and MultiDataSet binary formats (implemented
//! in ferrodl-data, documented in docs/DATASET_FORMAT.md) for Java's `save`/`load` of both.

use crate::arrays::{new_float_array, new_long_array, read_bytes, read_floats, read_shape};
use crate::boundary::{guard, invalid};
use crate::errors::FerroResult;
use ferrodl_data::{decode, decode_multi, encode, encode_multi, Array, DataSet, MultiDataSet};
use jni::objects::{JByteArray, JClass, JFloatArray, JLongArray, JObject, JObjectArray};
use jni::sys::{jbyteArray, jobjectArray};
use jni::JNIEnv;

fn read_array(
    env: &mut JNIEnv<'_>,
    data: &JFloatArray<'_>,
    shape: &JLongArray<'_>,
    what: &str,
) -> FerroResult<Array> {
    let data = read_floats(env, data, what)?;
    let shape = read_shape(env, shape, &format!("{what} shape"))?;
    Ok(Array { shape, data })
}

fn read_optional_array(
    env: &mut JNIEnv<'_>,
    data: &JFloatArray<'_>,
    shape: &JLongArray<'_>,
    what: &str,
) -> FerroResult<Option<Array>> {
    match (data.as_raw().is_null(), shape.as_raw().is_null()) {
        (true, true) => Ok(None),
        (false, false) => read_array(env, data, shape, what).map(Some),
        _ => invalid(format!(
            "{what}: data and shape must be both null or both set"
        )),
    }
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeDataSetCodec_encode<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    features: JFloatArray<'local>,
    features_shape: JLongArray<'local>,
    labels: JFloatArray<'local>,
    labels_shape: JLongArray<'local>,
    features_mask: JFloatArray<'local>,
    features_mask_shape: JLongArray<'local>,
    labels_mask: JFloatArray<'local>,
    labels_mask_shape: JLongArray<'local>,
) -> jbyteArray {
    guard(&mut env, |env| {
        let ds = DataSet {
            features: read_array(env, &features, &features_shape, "features")?,
            labels: read_array(env, &labels, &labels_shape, "labels")?,
            features_mask: read_optional_array(
                env,
                &features_mask,
                &features_mask_shape,
                "features mask",
            )?,
            labels_mask: read_optional_array(env, &labels_mask, &labels_mask_shape, "labels mask")?,
        };
        let bytes = encode(&ds)?;
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeDataSetCodec_decode<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    bytes: JByteArray<'local>,
) -> jobjectArray {
    guard(&mut env, |env| {
        if bytes.as_raw().is_null() {
            return invalid("DataSet bytes are null");
        }
        let raw = read_bytes(env, &bytes, "the DataSet bytes")?;
        let ds = decode(&raw)?;
        drop(raw);
        let out: JObjectArray = env.new_object_array(8, "java/lang/Object", JObject::null())?;
        let arrays = [
            Some(&ds.features),
            Some(&ds.labels),
            ds.features_mask.as_ref(),
            ds.labels_mask.as_ref(),
        ];
        for (i, array) in arrays.into_iter().enumerate() {
            if let Some(a) = array {
                let data = new_float_array(env, &a.data)?;
                env.set_object_array_element(&out, (2 * i) as i32, &data)?;
                env.delete_local_ref(data)?;
                let dims: Vec<i64> = a.shape.iter().map(|&d| d as i64).collect();
                let shape = new_long_array(env, &dims)?;
                env.set_object_array_element(&out, (2 * i + 1) as i32, &shape)?;
                env.delete_local_ref(shape)?;
            }
        }
        Ok(out.into_raw())
    })
}

/// Reads a `float[][]` with its `long[][]` shapes; `slots` allows null entries (mask lists).
fn read_array_list(
    env: &mut JNIEnv<'_>,
    data: &JObjectArray<'_>,
    shapes: &JObjectArray<'_>,
    what: &str,
    slots: bool,
) -> FerroResult<Vec<Option<Array>>> {
    if data.as_raw().is_null() || shapes.as_raw().is_null() {
        return invalid(format!("{what}: arrays and shapes must both be set"));
    }
    let n = env.get_array_length(data)?;
    let n_shapes = env.get_array_length(shapes)?;
    if n != n_shapes {
        return invalid(format!("{what}: {n} arrays but {n_shapes} shapes"));
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let d = JFloatArray::from(env.get_object_array_element(data, i)?);
        let s = JLongArray::from(env.get_object_array_element(shapes, i)?);
        let name = format!("{what}[{i}]");
        let a = if slots {
            read_optional_array(env, &d, &s, &name)?
        } else {
            Some(read_array(env, &d, &s, &name)?)
        };
        env.delete_local_ref(d)?;
        env.delete_local_ref(s)?;
        out.push(a);
    }
    Ok(out)
}

fn read_mask_list(
    env: &mut JNIEnv<'_>,
    data: &JObjectArray<'_>,
    shapes: &JObjectArray<'_>,
    what: &str,
) -> FerroResult<Option<Vec<Option<Array>>>> {
    match (data.as_raw().is_null(), shapes.as_raw().is_null()) {
        (true, true) => Ok(None),
        (false, false) => read_array_list(env, data, shapes, what, true).map(Some),
        _ => invalid(format!(
            "{what}: arrays and shapes must be both null or both set"
        )),
    }
}

/// Builds `float[][]` and `long[][]` for a list of arrays (null entries for absent slots).
fn new_array_list<'local>(
    env: &mut JNIEnv<'local>,
    arrays: &[Option<&Array>],
) -> FerroResult<(JObjectArray<'local>, JObjectArray<'local>)> {
    let n = arrays.len() as i32;
    let data_out = env.new_object_array(n, "[F", JObject::null())?;
    let shape_out = env.new_object_array(n, "[J", JObject::null())?;
    for (i, a) in arrays.iter().enumerate() {
        if let Some(a) = a {
            let data = new_float_array(env, &a.data)?;
            env.set_object_array_element(&data_out, i as i32, &data)?;
            env.delete_local_ref(data)?;
            let dims: Vec<i64> = a.shape.iter().map(|&d| d as i64).collect();
            let shape = new_long_array(env, &dims)?;
            env.set_object_array_element(&shape_out, i as i32, &shape)?;
            env.delete_local_ref(shape)?;
        }
    }
    Ok((data_out, shape_out))
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeDataSetCodec_encodeMulti<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    features: JObjectArray<'local>,
    features_shapes: JObjectArray<'local>,
    labels: JObjectArray<'local>,
    labels_shapes: JObjectArray<'local>,
    features_masks: JObjectArray<'local>,
    features_mask_shapes: JObjectArray<'local>,
    labels_masks: JObjectArray<'local>,
    labels_mask_shapes: JObjectArray<'local>,
) -> jbyteArray {
    guard(&mut env, |env| {
        let required = |v: Vec<Option<Array>>| v.into_iter().flatten().collect::<Vec<_>>();
        let m = MultiDataSet {
            features: required(read_array_list(
                env,
                &features,
                &features_shapes,
                "features",
                false,
            )?),
            labels: required(read_array_list(
                env,
                &labels,
                &labels_shapes,
                "labels",
                false,
            )?),
            features_masks: read_mask_list(
                env,
                &features_masks,
                &features_mask_shapes,
                "features masks",
            )?,
            labels_masks: read_mask_list(env, &labels_masks, &labels_mask_shapes, "labels masks")?,
        };
        let bytes = encode_multi(&m)?;
        Ok(env.byte_array_from_slice(&bytes)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeDataSetCodec_decodeMulti<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    bytes: JByteArray<'local>,
) -> jobjectArray {
    guard(&mut env, |env| {
        if bytes.as_raw().is_null() {
            return invalid("MultiDataSet bytes are null");
        }
        let raw = read_bytes(env, &bytes, "the MultiDataSet bytes")?;
        let m = decode_multi(&raw)?;
        drop(raw);
        let out: JObjectArray = env.new_object_array(8, "java/lang/Object", JObject::null())?;
        let lists: [Option<Vec<Option<&Array>>>; 4] = [
            Some(m.features.iter().map(Some).collect()),
            Some(m.labels.iter().map(Some).collect()),
            m.features_masks
                .as_ref()
                .map(|v| v.iter().map(Option::as_ref).collect()),
            m.labels_masks
                .as_ref()
                .map(|v| v.iter().map(Option::as_ref).collect()),
        ];
        for (i, list) in lists.iter().enumerate() {
            if let Some(list) = list {
                let (data, shapes) = new_array_list(env, list)?;
                env.set_object_array_element(&out, (2 * i) as i32, &data)?;
                env.set_object_array_element(&out, (2 * i + 1) as i32, &shapes)?;
                env.delete_local_ref(data)?;
                env.delete_local_ref(shapes)?;
            }
        }
        Ok(out.into_raw())
    })
}
