//! Copies between Java primitive arrays and Rust vectors (short region copies; no JNI calls are
//! made while any array is pinned). Copies into native memory are checked against the native
//! memory budget first (their size comes from the caller's minibatch or file).

use crate::boundary::invalid;
use crate::errors::FerroResult;
use ferrodl_tensor::memory;
use jni::objects::{JByteArray, JFloatArray, JIntArray, JLongArray, JObject, JObjectArray};
use jni::sys::{jint, jsize};
use jni::JNIEnv;

/// Copies a non-null `float[]` into a Vec; `what` names the argument in errors.
pub fn read_floats(
    env: &mut JNIEnv<'_>,
    array: &JFloatArray<'_>,
    what: &str,
) -> FerroResult<Vec<f32>> {
    if array.as_raw().is_null() {
        return invalid(format!("{what} is null"));
    }
    let len = env.get_array_length(array)? as usize;
    let mut out = memory::try_filled(len, 0f32, || {
        format!("the native copy of {what} ({len} values)")
    })?;
    env.get_float_array_region(array, 0, &mut out)?;
    Ok(out)
}

/// Copies a non-null `byte[]` into a Vec, checked against the native memory budget; `what` names
/// it in errors.
pub fn read_bytes(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    what: &str,
) -> FerroResult<Vec<u8>> {
    if array.as_raw().is_null() {
        return invalid(format!("{what} are null"));
    }
    let len = env.get_array_length(array)? as usize;
    let mut out = memory::try_filled(len, 0i8, || format!("the native copy of {what}"))?;
    env.get_byte_array_region(array, 0, &mut out)?;
    // i8 -> u8 is a reinterpretation of the same bytes.
    Ok(out.into_iter().map(|b| b as u8).collect())
}

/// A native copy of engine values on their way to Java, checked against the native memory budget.
pub fn budgeted_copy(values: &[f32], what: &str) -> FerroResult<Vec<f32>> {
    let mut out = memory::try_with_capacity(values.len(), || format!("the copy of {what}"))?;
    out.extend_from_slice(values);
    Ok(out)
}

/// Like [`read_floats`] but a null array is `None`.
pub fn read_optional_floats(
    env: &mut JNIEnv<'_>,
    array: &JFloatArray<'_>,
    what: &str,
) -> FerroResult<Option<Vec<f32>>> {
    if array.as_raw().is_null() {
        Ok(None)
    } else {
        read_floats(env, array, what).map(Some)
    }
}

/// Reads a shape (`long[]`), refusing negative dimensions.
pub fn read_shape(
    env: &mut JNIEnv<'_>,
    array: &JLongArray<'_>,
    what: &str,
) -> FerroResult<Vec<usize>> {
    if array.as_raw().is_null() {
        return invalid(format!("{what} is null"));
    }
    let len = env.get_array_length(array)? as usize;
    let mut dims = vec![0i64; len];
    env.get_long_array_region(array, 0, &mut dims)?;
    dims.iter()
        .map(|&d| {
            usize::try_from(d)
                .or_else(|_| invalid(format!("{what} has a negative dimension {d}: {dims:?}")))
        })
        .collect()
}

pub fn new_float_array<'local>(
    env: &mut JNIEnv<'local>,
    data: &[f32],
) -> FerroResult<JFloatArray<'local>> {
    let len = java_len(data.len())?;
    let array = env.new_float_array(len)?;
    env.set_float_array_region(&array, 0, data)?;
    Ok(array)
}

pub fn new_long_array<'local>(
    env: &mut JNIEnv<'local>,
    data: &[i64],
) -> FerroResult<JLongArray<'local>> {
    let len = java_len(data.len())?;
    let array = env.new_long_array(len)?;
    env.set_long_array_region(&array, 0, data)?;
    Ok(array)
}

fn java_len(len: usize) -> FerroResult<jsize> {
    jsize::try_from(len).or_else(|_| {
        invalid(format!(
            "array of {len} elements is too large for a Java array"
        ))
    })
}

/// Checks that `rows * cols` matches the array length and that the dimensions are sane.
pub fn check_matrix(data: &[f32], rows: i32, cols: i32, what: &str) -> FerroResult<(usize, usize)> {
    if rows <= 0 || cols <= 0 {
        return invalid(format!(
            "{what}: rows ({rows}) and columns ({cols}) must be positive"
        ));
    }
    let (r, c) = (rows as usize, cols as usize);
    if r.checked_mul(c) != Some(data.len()) {
        return invalid(format!(
            "{what}: {} values do not form a {r} x {c} matrix",
            data.len()
        ));
    }
    Ok((r, c))
}

/// Features, labels and optional labels mask of one call, copied out of Java.
pub struct Batch {
    pub features: Vec<f32>,
    pub labels: Vec<f32>,
    pub rows: usize,
    pub mask: Option<(Vec<f32>, usize)>,
}

#[allow(clippy::too_many_arguments)]
pub fn read_batch(
    env: &mut JNIEnv<'_>,
    features: &JFloatArray<'_>,
    rows: jint,
    f_cols: jint,
    labels: &JFloatArray<'_>,
    l_cols: jint,
    mask: &JFloatArray<'_>,
    mask_cols: jint,
) -> FerroResult<Batch> {
    let features = read_floats(env, features, "features")?;
    let (rows, _) = check_matrix(&features, rows, f_cols, "features")?;
    let labels = read_floats(env, labels, "labels")?;
    check_matrix(&labels, rows as i32, l_cols, "labels")?;
    let mask = match read_optional_floats(env, mask, "labels mask")? {
        Some(m) => {
            let (_, cols) = check_matrix(&m, rows as i32, mask_cols, "labels mask")?;
            Some((m, cols))
        }
        None => None,
    };
    Ok(Batch {
        features,
        labels,
        rows,
        mask,
    })
}

impl Batch {
    pub fn mask(&self) -> Option<(&[f32], usize)> {
        self.mask.as_ref().map(|(m, c)| (m.as_slice(), *c))
    }
}

/// An optional features mask of `rows` rows (`[N, T]` or one value per example); the engine
/// checks its columns against the time steps of the features.
pub fn read_features_mask(
    env: &mut JNIEnv<'_>,
    mask: &JFloatArray<'_>,
    rows: usize,
    cols: jint,
) -> FerroResult<OwnedMask> {
    match read_optional_floats(env, mask, "features mask")? {
        Some(m) => {
            let (_, cols) = check_matrix(&m, rows as i32, cols, "features mask")?;
            Ok(Some((m, cols)))
        }
        None => Ok(None),
    }
}

/// Borrows an optional `(values, columns)` mask.
pub fn as_mask(m: &OwnedMask) -> Option<(&[f32], usize)> {
    m.as_ref().map(|(d, c)| (d.as_slice(), *c))
}

/// Reads a `float[][]` whose entries must all be non-null; `what` names the argument.
pub fn read_float_arrays(
    env: &mut JNIEnv<'_>,
    arrays: &JObjectArray<'_>,
    what: &str,
) -> FerroResult<Vec<Vec<f32>>> {
    if arrays.as_raw().is_null() {
        return invalid(format!("{what} is null"));
    }
    let n = env.get_array_length(arrays)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let element = JFloatArray::from(env.get_object_array_element(arrays, i)?);
        out.push(read_floats(env, &element, &format!("{what}[{i}]"))?);
        env.delete_local_ref(element)?;
    }
    Ok(out)
}

/// A mask read from Java: its values and column count.
pub type OwnedMask = Option<(Vec<f32>, usize)>;

/// Reads optional masks: a null `float[][]` is "no masks"; otherwise entry `i` is a
/// `rows × cols[i]` mask or null. `cols` must have one entry per mask.
pub fn read_masks(
    env: &mut JNIEnv<'_>,
    masks: &JObjectArray<'_>,
    cols: &JIntArray<'_>,
    rows: usize,
    what: &str,
) -> FerroResult<Vec<OwnedMask>> {
    if masks.as_raw().is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(masks)?;
    if cols.as_raw().is_null() || env.get_array_length(cols)? != n {
        return invalid(format!(
            "{what}: give one column count per mask ({n} masks)"
        ));
    }
    let mut widths = vec![0i32; n as usize];
    env.get_int_array_region(cols, 0, &mut widths)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let element = JFloatArray::from(env.get_object_array_element(masks, i)?);
        let name = format!("{what}[{i}]");
        match read_optional_floats(env, &element, &name)? {
            Some(m) => {
                let (_, c) = check_matrix(&m, rows as i32, widths[i as usize], &name)?;
                out.push(Some((m, c)));
            }
            None => out.push(None),
        }
        env.delete_local_ref(element)?;
    }
    Ok(out)
}

/// A new `float[][]` holding copies of `rows`.
pub fn new_float_arrays<'local>(
    env: &mut JNIEnv<'local>,
    rows: &[Vec<f32>],
) -> FerroResult<JObjectArray<'local>> {
    let array = env.new_object_array(java_len(rows.len())?, "[F", JObject::null())?;
    for (i, r) in rows.iter().enumerate() {
        let element = new_float_array(env, r)?;
        env.set_object_array_element(&array, i as jsize, &element)?;
        env.delete_local_ref(element)?;
    }
    Ok(array)
}

/// A Java `String[]` of `items`.
pub fn new_string_array<'local>(
    env: &mut JNIEnv<'local>,
    items: &[&str],
) -> FerroResult<JObjectArray<'local>> {
    let len = jni::sys::jsize::try_from(items.len())
        .or_else(|_| invalid(format!("{} strings do not fit a Java array", items.len())))?;
    let array = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, k) in items.iter().enumerate() {
        let s = env.new_string(k)?;
        env.set_object_array_element(&array, i as jni::sys::jsize, s)?;
    }
    Ok(array)
}

/// A non-null Java string argument; `what` names it in the error.
pub fn read_string(env: &mut JNIEnv<'_>, s: &jni::objects::JString<'_>, what: &str) -> FerroResult<String> {
    if s.as_raw().is_null() {
        return invalid(format!("{what} is null"));
    }
    Ok(env.get_string(s)?.into())
}

/// A positive row count from Java.
pub fn positive_rows(rows: jint, what: &str) -> FerroResult<usize> {
    match usize::try_from(rows) {
        Ok(r) if r > 0 => Ok(r),
        _ => invalid(format!("{what}: rows must be positive, got {rows}")),
    }
}
