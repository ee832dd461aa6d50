//! `org.ferrodl.jni.NativeNetwork`: the multi-layer network behind a typed handle.
//! Thread safety: each handle's network is behind its own mutex (see `handles`).

use crate::arrays::{
    budgeted_copy,
    as_mask, check_matrix, new_float_array, new_long_array, new_string_array, positive_rows,
    read_batch, read_features_mask, read_floats, read_string,
};
use crate::boundary::{guard, invalid};
use crate::errors::FerroResult;
use crate::handles::Registry;
use crate::info_json::{enum_name, param_table_json, shape_json};
use ferrodl_nn::{MultiLayerConfiguration, MultiLayerNetwork, ParamInit};
use jni::objects::{JClass, JFloatArray, JString};
use jni::sys::{
    jboolean, jdouble, jdoubleArray, jfloatArray, jint, jlong, jlongArray, jobjectArray, jstring,
    JNI_TRUE,
};
use jni::JNIEnv;
use serde_json::{json, Value};
use std::sync::OnceLock;

pub(crate) fn networks() -> &'static Registry<MultiLayerNetwork> {
    static NETWORKS: OnceLock<Registry<MultiLayerNetwork>> = OnceLock::new();
    NETWORKS.get_or_init(|| Registry::new(0x4e, "network"))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_create<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    conf_json: JString<'local>,
) -> jlong {
    guard(&mut env, |env| build(env, &conf_json, None))
}

/// Builds a network with the given parameters (no seeded weight draw: the same network as
/// `create` then `setParams`).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_createWithParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    conf_json: JString<'local>,
    params: JFloatArray<'local>,
) -> jlong {
    guard(&mut env, |env| {
        let params = read_floats(env, &params, "params")?;
        build(env, &conf_json, Some(&params))
    })
}

/// A new network from its configuration JSON, seeded or with the given parameters.
fn build(env: &mut JNIEnv<'_>, conf_json: &JString<'_>, params: Option<&[f32]>) -> FerroResult<jlong> {
    let conf = MultiLayerConfiguration::from_json(&read_string(env, conf_json, "configuration JSON")?)?;
    let init = params.map_or(ParamInit::Seeded, ParamInit::Given);
    Ok(networks().insert(MultiLayerNetwork::with_init(conf, init)?))
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
        let params = networks().with(handle, |n| budgeted_copy(n.params(), "the parameters"))?;
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
        let state = networks().with(handle, |n| budgeted_copy(n.updater_state(), "the updater state"))?;
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

/// Features, labels and both masks of one call (`fMask`: `[N, T]` or per example; `lMask`).
#[allow(clippy::too_many_arguments)]
fn read_masked(
    env: &mut JNIEnv<'_>,
    features: &JFloatArray<'_>,
    rows: jint,
    f_cols: jint,
    labels: &JFloatArray<'_>,
    l_cols: jint,
    f_mask: &JFloatArray<'_>,
    f_mask_cols: jint,
    l_mask: &JFloatArray<'_>,
    l_mask_cols: jint,
) -> FerroResult<(crate::arrays::Batch, crate::arrays::OwnedMask)> {
    let b = read_batch(env, features, rows, f_cols, labels, l_cols, l_mask, l_mask_cols)?;
    let fm = read_features_mask(env, f_mask, b.rows, f_mask_cols)?;
    Ok((b, fm))
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
    f_mask: JFloatArray<'local>,
    f_mask_cols: jint,
    l_mask: JFloatArray<'local>,
    l_mask_cols: jint,
) -> jdouble {
    guard(&mut env, |env| {
        let (b, fm) = read_masked(
            env, &features, rows, f_cols, &labels, l_cols, &f_mask, f_mask_cols, &l_mask,
            l_mask_cols,
        )?;
        networks().with(handle, |n| {
            Ok(n.fit_masked(&b.features, &b.labels, b.rows, as_mask(&fm), b.mask())?)
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
    f_mask: JFloatArray<'local>,
    f_mask_cols: jint,
    l_mask: JFloatArray<'local>,
    l_mask_cols: jint,
) -> jdouble {
    guard(&mut env, |env| {
        let (b, fm) = read_masked(
            env, &features, rows, f_cols, &labels, l_cols, &f_mask, f_mask_cols, &l_mask,
            l_mask_cols,
        )?;
        networks().with(handle, |n| {
            Ok(n.score_masked(&b.features, &b.labels, b.rows, as_mask(&fm), b.mask())?)
        })
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_output<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    f_mask: JFloatArray<'local>,
    f_mask_cols: jint,
    train: jboolean,
) -> jfloatArray {
    guard(&mut env, |env| {
        let features = read_floats(env, &features, "features")?;
        let (rows, _) = check_matrix(&features, rows, f_cols, "features")?;
        let fm = read_features_mask(env, &f_mask, rows, f_mask_cols)?;
        let out = networks().with(handle, |n| {
            Ok(n.output_masked(&features, rows, as_mask(&fm), train == JNI_TRUE)?)
        })?;
        Ok(new_float_array(env, &out)?.into_raw())
    })
}

/// `rnnTimeStep`: inference from the state the last call left, keeping the new state.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_rnnTimeStep<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
) -> jfloatArray {
    guard(&mut env, |env| {
        let features = read_floats(env, &features, "features")?;
        let (rows, _) = check_matrix(&features, rows, f_cols, "features")?;
        let out = networks().with(handle, |n| Ok(n.rnn_time_step(&features, rows)?))?;
        Ok(new_float_array(env, &out)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_rnnClearPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| {
        networks().with(handle, |n| {
            n.rnn_clear_previous_state();
            Ok(())
        })
    })
}

/// Layer index from Java, checked against the network.
fn layer_index(n: &MultiLayerNetwork, layer: jint) -> FerroResult<usize> {
    match usize::try_from(layer) {
        Ok(i) if i < n.num_layers() => Ok(i),
        _ => invalid(format!(
            "layer {layer} does not exist (the network has {} layers)",
            n.num_layers()
        )),
    }
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_rnnStateKeys<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layer: jint,
) -> jobjectArray {
    guard(&mut env, |env| {
        let keys = networks().with(handle, |n| Ok(n.rnn_state_keys(layer_index(n, layer)?)))?;
        Ok(new_string_array(env, keys)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_rnnGetPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layer: jint,
    key: JString<'local>,
) -> jfloatArray {
    guard(&mut env, |env| {
        let key = read_string(env, &key, "state key")?;
        let state = networks().with(handle, |n| {
            n.rnn_previous_state(layer_index(n, layer)?, &key)
                .map(|s| budgeted_copy(s, "the recurrent state"))
                .transpose()
        })?;
        match state {
            Some(v) => Ok(new_float_array(env, &v)?.into_raw()),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_rnnSetPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layer: jint,
    key: JString<'local>,
    values: JFloatArray<'local>,
    rows: jint,
) {
    guard(&mut env, |env| {
        let key = read_string(env, &key, "state key")?;
        let values = read_floats(env, &values, "state")?;
        let rows = positive_rows(rows, "state")?;
        networks().with(handle, |n| {
            let i = layer_index(n, layer)?;
            Ok(n.rnn_set_previous_state(i, &key, &values, rows)?)
        })
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

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_scoreExamples<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    labels: JFloatArray<'local>,
    l_cols: jint,
    f_mask: JFloatArray<'local>,
    f_mask_cols: jint,
    l_mask: JFloatArray<'local>,
    l_mask_cols: jint,
    include_regularization: jboolean,
) -> jdoubleArray {
    guard(&mut env, |env| {
        let (b, fm) = read_masked(
            env, &features, rows, f_cols, &labels, l_cols, &f_mask, f_mask_cols, &l_mask,
            l_mask_cols,
        )?;
        let scores = networks().with(handle, |n| {
            Ok(n.score_examples_masked(
                &b.features,
                &b.labels,
                b.rows,
                as_mask(&fm),
                b.mask(),
                include_regularization == JNI_TRUE,
            )?)
        })?;
        let len = jni::sys::jsize::try_from(scores.len())
            .or_else(|_| invalid(format!("{} scores do not fit a Java array", scores.len())))?;
        let array = env.new_double_array(len)?;
        env.set_double_array_region(&array, 0, &scores)?;
        Ok(array.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_paramTable<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = networks().with(handle, |n| Ok(param_table_json(n.param_table())))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_layerInfo<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = networks().with(handle, |n| layer_info_json(n))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeNetwork_learningRate<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    layer: jint,
) -> jdouble {
    guard(&mut env, |_| {
        networks().with(handle, |n| learning_rate(n, layer))
    })
}

// ---- helpers (no JNI; unit-tested below) ----------------------------------------------------

/// One object per layer: index, type (the configuration's, `FrozenLayer` for a frozen one, with
/// `innerType`), name (null when unnamed), frozen, nIn/nOut (configured, or null), inputShape and
/// outputShape (per example), numParams, params (name + shape per block), activation (or null);
/// the last layer also has `lossFunction` and `outputActivation`.
fn layer_info_json(net: &MultiLayerNetwork) -> FerroResult<String> {
    let conf = net.configuration();
    let n = net.num_layers();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (lc, layer, shapes) = match (conf.layers.get(i), net.layer(i), net.layer_shapes(i)) {
            (Some(c), Some(l), Some(s)) => (c, l, s),
            _ => {
                return Err(crate::errors::FerroError::State(format!(
                    "layer {i} of {n} has no configuration, layer or shapes"
                )))
            }
        };
        let params: Vec<Value> = layer
            .param_specs()
            .iter()
            .map(|p| json!({"name": p.name, "shape": p.shape}))
            .collect();
        let mut o = json!({
            "index": i,
            "type": lc.type_name(),
            "innerType": lc.unfrozen().type_name(),
            // a frozen layer without a name of its own goes by its wrapped layer's
            "name": lc.name().or_else(|| lc.unfrozen().name()),
            "frozen": lc.is_frozen(),
            "nIn": lc.n_in(),
            "nOut": lc.n_out(),
            "inputShape": shape_json(shapes.input),
            "outputShape": shape_json(shapes.output),
            "numParams": layer.num_params(),
            "params": params,
            "activation": lc.activation().map(|a| enum_name(&a)),
        });
        if i + 1 == n {
            let loss = lc.head().map(|(_, loss, _)| enum_name(&loss));
            o["lossFunction"] = loss.unwrap_or(Value::Null);
            o["outputActivation"] = enum_name(&net.output_activation());
        }
        out.push(o);
    }
    Ok(Value::Array(out).to_string())
}

/// Layer `layer`'s current learning rate, NaN for a layer without parameters.
fn learning_rate(net: &MultiLayerNetwork, layer: jint) -> FerroResult<f64> {
    let n = net.num_layers();
    if layer < 0 || layer as usize >= n {
        return invalid(format!(
            "layer index {layer} is out of range: the network has {n} layers (0..{})",
            n.saturating_sub(1)
        ));
    }
    Ok(net.learning_rate(layer as usize).unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> MultiLayerNetwork {
        let json = r#"{"formatVersion":1,"seed":3,"layers":[
            {"type":"DenseLayer","name":"hidden","nIn":3,"nOut":4,"activation":"RELU",
             "updater":{"type":"Sgd","learningRate":0.25}},
            {"type":"ActivationLayer","activation":"TANH"},
            {"type":"OutputLayer","nIn":4,"nOut":2,"activation":"SOFTMAX","lossFunction":"MCXENT",
             "updater":{"type":"Sgd","learningRate":0.5}}]}"#;
        MultiLayerNetwork::new(MultiLayerConfiguration::from_json(json).unwrap()).unwrap()
    }

    #[test]
    fn param_table_lists_blocks_in_layout_order() {
        let v: Value = serde_json::from_str(&param_table_json(net().param_table())).unwrap();
        let expected = json!([
            {"key":"0_W","offset":0,"length":12,"shape":[3,4]},
            {"key":"0_b","offset":12,"length":4,"shape":[4]},
            {"key":"2_W","offset":16,"length":8,"shape":[4,2]},
            {"key":"2_b","offset":24,"length":2,"shape":[2]},
        ]);
        assert_eq!(v, expected);
    }

    #[test]
    fn layer_info_describes_every_layer() {
        let v: Value = serde_json::from_str(&layer_info_json(&net()).unwrap()).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[0]["type"], "DenseLayer");
        assert_eq!(a[0]["name"], "hidden");
        assert_eq!(a[0]["inputShape"], json!([3]));
        assert_eq!(a[0]["outputShape"], json!([4]));
        assert_eq!(a[0]["numParams"], 16);
        assert_eq!(a[0]["activation"], "RELU");
        assert_eq!(
            a[0]["params"],
            json!([{"name":"W","shape":[3,4]},{"name":"b","shape":[4]}])
        );
        assert!(a[0].get("lossFunction").is_none());
        assert_eq!(a[1]["type"], "ActivationLayer");
        assert_eq!(a[1]["name"], Value::Null);
        assert_eq!(a[1]["nIn"], Value::Null);
        assert_eq!(a[1]["numParams"], 0);
        assert_eq!(a[1]["activation"], "TANH");
        assert_eq!(a[2]["type"], "OutputLayer");
        assert_eq!(a[2]["lossFunction"], "MCXENT");
        assert_eq!(a[2]["outputActivation"], "SOFTMAX");
        assert_eq!(a[2]["frozen"], false);
    }

    #[test]
    fn learning_rate_is_nan_without_parameters_and_range_checked() {
        let n = net();
        assert_eq!(learning_rate(&n, 0).unwrap(), 0.25);
        assert!(learning_rate(&n, 1).unwrap().is_nan());
        assert_eq!(learning_rate(&n, 2).unwrap(), 0.5);
        assert!(learning_rate(&n, 3).is_err());
        assert!(learning_rate(&n, -1).is_err());
    }
}
