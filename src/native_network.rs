//! `org.ferrodl.jni.NativeNetwork`: the multi-layer network behind a typed handle.
//! Thread safety: each handle's network is behind its own mutex (see `handles`).

use crate::arrays::{check_matrix, new_float_array, new_long_array, read_batch, read_floats};
use crate::boundary::{guard, invalid};
use crate::handles::Registry;
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork};
use jni::objects::{JClass, JFloatArray, JString};
use jni::sys::{jboolean, jdouble, jfloatArray, jint, jlong, jlongArray, jstring, JNI_TRUE};
use jni::JNIEnv;
use std::sync::OnceLock;

fn networks() -> &'static Registry<MultiLayerNetwork> {
    static NETWORKS: OnceLock<Registry<MultiLayerNetwork>> = OnceLock::new();
    NETWORKS.get_or_init(|| Registry::new(0x4e, "network"))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_create<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    conf_json: JString<'local>,
) -> jlong {
    guard(&mut env, |env| {
        if conf_json.as_raw().is_null() {
            return invalid("configuration JSON is null");
        }
        let json: String = env.get_string(&conf_json)?.into();
        let conf = MultiLayerConfiguration::from_json(&json)?;
        let network = MultiLayerNetwork::new(conf)?;
        Ok(networks().insert(network))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_destroy<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| networks().remove(handle))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_numParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    guard(&mut env, |_| {
        networks().with(handle, |n| Ok(n.num_params() as jlong))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_params<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let params = networks().with(handle, |n| Ok(n.params().to_vec()))?;
        Ok(new_float_array(env, &params)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_setParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    params: JFloatArray<'local>,
) {
    guard(&mut env, |env| {
        let params = read_floats(env, &params, "params")?;
        networks().with(handle, |n| Ok(n.set_params(&params)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_updaterState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let state = networks().with(handle, |n| Ok(n.updater_state().to_vec()))?;
        Ok(new_float_array(env, &state)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_setUpdaterState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    state: JFloatArray<'local>,
) {
    guard(&mut env, |env| {
        let state = read_floats(env, &state, "updater state")?;
        networks().with(handle, |n| Ok(n.set_updater_state(&state)?))
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_fit<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    labels: JFloatArray<'local>,
    l_cols: jint,
    mask: JFloatArray<'local>,
    mask_cols: jint,
) -> jdouble {
    guard(&mut env, |env| {
        let b = read_batch(
            env, &features, rows, f_cols, &labels, l_cols, &mask, mask_cols,
        )?;
        networks().with(handle, |n| {
            Ok(n.fit(&b.features, &b.labels, b.rows, b.mask())?)
        })
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_score<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    labels: JFloatArray<'local>,
    l_cols: jint,
    mask: JFloatArray<'local>,
    mask_cols: jint,
) -> jdouble {
    guard(&mut env, |env| {
        let b = read_batch(
            env, &features, rows, f_cols, &labels, l_cols, &mask, mask_cols,
        )?;
        networks().with(handle, |n| {
            Ok(n.score(&b.features, &b.labels, b.rows, b.mask())?)
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_output<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    train: jboolean,
) -> jfloatArray {
    guard(&mut env, |env| {
        let features = read_floats(env, &features, "features")?;
        let (rows, _) = check_matrix(&features, rows, f_cols, "features")?;
        let out = networks().with(handle, |n| {
            Ok(n.output(&features, rows, train == JNI_TRUE)?)
        })?;
        Ok(new_float_array(env, &out)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_counters<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let (it, ep) = networks().with(handle, |n| Ok((n.iteration_count(), n.epoch_count())))?;
        Ok(new_long_array(env, &[it as i64, ep as i64])?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_setCounters<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    iteration: jlong,
    epoch: jlong,
) {
    guard(&mut env, |_| {
        if iteration < 0 || epoch < 0 {
            return invalid(format!(
                "counters must be >= 0 (iteration {iteration}, epoch {epoch})"
            ));
        }
        networks().with(handle, |n| {
            n.set_counters(iteration as u64, epoch as u64);
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_configurationJson<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = networks().with(handle, |n| Ok(n.configuration().to_json()))?;
        Ok(env.new_string(json)?.into_raw())
    })
}
