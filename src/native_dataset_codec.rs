//! `org.ferrodl.jni.NativeDataSetCodec`: the DataSet binary format (implemented in ferrodl-data,
//! documented in docs/DATASET_FORMAT.md) for Java's `DataSet.save`/`load`.

use crate::arrays::{new_float_array, new_long_array, read_floats, read_shape};
use crate::boundary::{guard, invalid};
use crate::errors::FerroResult;
use ferrodl_data::{decode, encode, Array, DataSet};
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
        let raw = env.convert_byte_array(&bytes)?;
        let ds = decode(&raw)?;
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
