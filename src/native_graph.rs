//! `org.ferrodl.jni.NativeGraph`: the computation graph behind a typed handle.
//! Thread safety: each handle's graph is behind its own mutex (see `handles`).
//!
//! Arrays cross as `float[][]` (one entry per network input or output, `rows × width`
//! row-major); masks as `float[][]` with null entries plus an `int[]` of column counts, or null
//! for none.

use crate::arrays::{
    budgeted_copy,
    new_float_array, new_float_arrays, new_long_array, new_string_array, positive_rows,
    read_float_arrays, read_floats, read_masks, read_string,
};
use crate::boundary::{guard, invalid};
use crate::errors::FerroResult;
use crate::handles::Registry;
use crate::info_json::{enum_name, param_table_json, shape_json};
use ferrodl_nn::{ComputationGraph, ComputationGraphConfiguration, LayerConfig, ParamInit};
use jni::objects::{JClass, JFloatArray, JIntArray, JObjectArray, JString};
use jni::sys::{
    jboolean, jdouble, jdoubleArray, jfloatArray, jint, jlong, jlongArray, jobjectArray, jstring,
    JNI_TRUE,
};
use jni::JNIEnv;
use serde_json::{json, Value};
use std::sync::OnceLock;

pub(crate) fn graphs() -> &'static Registry<ComputationGraph> {
    static GRAPHS: OnceLock<Registry<ComputationGraph>> = OnceLock::new();
    GRAPHS.get_or_init(|| Registry::new(0x47, "graph"))
}

/// Inputs, labels and masks of one call, copied out of Java.
struct Call {
    inputs: Vec<Vec<f32>>,
    labels: Vec<Vec<f32>>,
    rows: usize,
    feature_masks: Vec<Option<(Vec<f32>, usize)>>,
    label_masks: Vec<Option<(Vec<f32>, usize)>>,
}

type Slices<'a> = Vec<&'a [f32]>;
type MaskSlices<'a> = Vec<Option<(&'a [f32], usize)>>;

fn mask_slices(v: &[Option<(Vec<f32>, usize)>]) -> MaskSlices<'_> {
    v.iter()
        .map(|o| o.as_ref().map(|(d, c)| (d.as_slice(), *c)))
        .collect()
}

impl Call {
    fn slices(&self) -> (Slices<'_>, Slices<'_>, MaskSlices<'_>, MaskSlices<'_>) {
        (
            self.inputs.iter().map(Vec::as_slice).collect(),
            self.labels.iter().map(Vec::as_slice).collect(),
            mask_slices(&self.feature_masks),
            mask_slices(&self.label_masks),
        )
    }
}

fn rows_of(rows: jint) -> FerroResult<usize> {
    if rows <= 0 {
        return invalid(format!("rows ({rows}) must be positive"));
    }
    Ok(rows as usize)
}

#[allow(clippy::too_many_arguments)]
fn read_call(
    env: &mut JNIEnv<'_>,
    inputs: &JObjectArray<'_>,
    labels: Option<&JObjectArray<'_>>,
    rows: jint,
    f_masks: &JObjectArray<'_>,
    f_mask_cols: &JIntArray<'_>,
    l_masks: Option<(&JObjectArray<'_>, &JIntArray<'_>)>,
) -> FerroResult<Call> {
    let rows = rows_of(rows)?;
    Ok(Call {
        inputs: read_float_arrays(env, inputs, "features")?,
        labels: match labels {
            Some(l) => read_float_arrays(env, l, "labels")?,
            None => Vec::new(),
        },
        rows,
        feature_masks: read_masks(env, f_masks, f_mask_cols, rows, "feature masks")?,
        label_masks: match l_masks {
            Some((m, c)) => read_masks(env, m, c, rows, "label masks")?,
            None => Vec::new(),
        },
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_create<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    conf_json: JString<'local>,
) -> jlong {
    guard(&mut env, |env| build(env, &conf_json, None))
}

/// Builds a graph with the given parameters (no seeded weight draw: the same graph as `create`
/// then `setParams`).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_createWithParams<'local>(
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

/// A new graph from its configuration JSON, seeded or with the given parameters.
fn build(env: &mut JNIEnv<'_>, conf_json: &JString<'_>, params: Option<&[f32]>) -> FerroResult<jlong> {
    let json = read_string(env, conf_json, "configuration JSON")?;
    let conf = ComputationGraphConfiguration::from_json(&json)?;
    let init = params.map_or(ParamInit::Seeded, ParamInit::Given);
    Ok(graphs().insert(ComputationGraph::with_init(conf, init)?))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_destroy<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| graphs().remove(handle))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_numParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlong {
    guard(&mut env, |_| {
        graphs().with(handle, |g| Ok(g.num_params() as jlong))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_params<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let p = graphs().with(handle, |g| budgeted_copy(g.params(), "the parameters"))?;
        Ok(new_float_array(env, &p)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_setParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    params: JFloatArray<'local>,
) {
    guard(&mut env, |env| {
        let p = read_floats(env, &params, "params")?;
        graphs().with(handle, |g| Ok(g.set_params(&p)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_gradient<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let p = graphs().with(handle, |g| budgeted_copy(g.gradient(), "the gradient"))?;
        Ok(new_float_array(env, &p)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_updaterState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let s = graphs().with(handle, |g| budgeted_copy(g.updater_state(), "the updater state"))?;
        Ok(new_float_array(env, &s)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_setUpdaterState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    state: JFloatArray<'local>,
) {
    guard(&mut env, |env| {
        let s = read_floats(env, &state, "updater state")?;
        graphs().with(handle, |g| Ok(g.set_updater_state(&s)?))
    })
}

/// What a call with labels does.
#[derive(Clone, Copy)]
enum Step {
    Fit,
    Score,
    Gradient,
}

#[allow(clippy::too_many_arguments)]
fn with_labels<'local>(
    env: &mut JNIEnv<'local>,
    handle: jlong,
    inputs: &JObjectArray<'local>,
    labels: &JObjectArray<'local>,
    rows: jint,
    f_masks: &JObjectArray<'local>,
    f_mask_cols: &JIntArray<'local>,
    l_masks: &JObjectArray<'local>,
    l_mask_cols: &JIntArray<'local>,
    step: Step,
) -> FerroResult<f64> {
    let call = read_call(
        env,
        inputs,
        Some(labels),
        rows,
        f_masks,
        f_mask_cols,
        Some((l_masks, l_mask_cols)),
    )?;
    let (x, y, fm, lm) = call.slices();
    graphs().with(handle, |g| {
        Ok(match step {
            Step::Fit => g.fit(&x, &y, call.rows, &fm, &lm)?,
            Step::Score => g.score(&x, &y, call.rows, &fm, &lm)?,
            Step::Gradient => g.compute_gradient_and_score(&x, &y, call.rows, &fm, &lm)?,
        })
    })
}

macro_rules! labelled_call {
    ($name:ident, $step:expr) => {
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "system" fn $name<'local>(
            mut env: JNIEnv<'local>,
            _class: JClass<'local>,
            handle: jlong,
            inputs: JObjectArray<'local>,
            labels: JObjectArray<'local>,
            rows: jint,
            f_masks: JObjectArray<'local>,
            f_mask_cols: JIntArray<'local>,
            l_masks: JObjectArray<'local>,
            l_mask_cols: JIntArray<'local>,
        ) -> jdouble {
            guard(&mut env, |env| {
                with_labels(
                    env,
                    handle,
                    &inputs,
                    &labels,
                    rows,
                    &f_masks,
                    &f_mask_cols,
                    &l_masks,
                    &l_mask_cols,
                    $step,
                )
            })
        }
    };
}

labelled_call!(Java_org_ferrodl_jni_NativeGraph_fit, Step::Fit);
labelled_call!(Java_org_ferrodl_jni_NativeGraph_score, Step::Score);
labelled_call!(
    Java_org_ferrodl_jni_NativeGraph_computeGradientAndScore,
    Step::Gradient
);

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_scoreExamples<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    inputs: JObjectArray<'local>,
    labels: JObjectArray<'local>,
    rows: jint,
    f_masks: JObjectArray<'local>,
    f_mask_cols: JIntArray<'local>,
    l_masks: JObjectArray<'local>,
    l_mask_cols: JIntArray<'local>,
    include_regularization: jboolean,
) -> jdoubleArray {
    guard(&mut env, |env| {
        let call = read_call(
            env,
            &inputs,
            Some(&labels),
            rows,
            &f_masks,
            &f_mask_cols,
            Some((&l_masks, &l_mask_cols)),
        )?;
        let (x, y, fm, lm) = call.slices();
        let scores = graphs().with(handle, |g| {
            Ok(g.score_examples(
                &x,
                &y,
                call.rows,
                &fm,
                &lm,
                include_regularization == JNI_TRUE,
            )?)
        })?;
        let array = env.new_double_array(scores.len() as i32)?;
        env.set_double_array_region(&array, 0, &scores)?;
        Ok(array.into_raw())
    })
}

fn unlabelled<'local>(
    env: &mut JNIEnv<'local>,
    handle: jlong,
    inputs: &JObjectArray<'local>,
    rows: jint,
    train: jboolean,
    f_masks: &JObjectArray<'local>,
    f_mask_cols: &JIntArray<'local>,
    all_vertices: bool,
) -> FerroResult<jobjectArray> {
    let call = read_call(env, inputs, None, rows, f_masks, f_mask_cols, None)?;
    let (x, _, fm, _) = call.slices();
    let train = train == JNI_TRUE;
    let out = graphs().with(handle, |g| {
        Ok(if all_vertices {
            g.feed_forward(&x, call.rows, train, &fm)?
        } else {
            g.output(&x, call.rows, train, &fm)?
        })
    })?;
    Ok(new_float_arrays(env, &out)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_output<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    inputs: JObjectArray<'local>,
    rows: jint,
    train: jboolean,
    f_masks: JObjectArray<'local>,
    f_mask_cols: JIntArray<'local>,
) -> jobjectArray {
    guard(&mut env, |env| {
        unlabelled(
            env,
            handle,
            &inputs,
            rows,
            train,
            &f_masks,
            &f_mask_cols,
            false,
        )
    })
}

/// `rnnTimeStep`: the outputs from the state the last call left, keeping the new state.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_rnnTimeStep<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    inputs: JObjectArray<'local>,
    rows: jint,
) -> jobjectArray {
    guard(&mut env, |env| {
        let inputs = read_float_arrays(env, &inputs, "features")?;
        let rows = positive_rows(rows, "features")?;
        let refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let out = graphs().with(handle, |g| Ok(g.rnn_time_step(&refs, rows)?))?;
        Ok(new_float_arrays(env, &out)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_rnnClearPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| {
        graphs().with(handle, |g| {
            g.rnn_clear_previous_state();
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_rnnStateKeys<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    vertex: JString<'local>,
) -> jobjectArray {
    guard(&mut env, |env| {
        let vertex = read_string(env, &vertex, "vertex name")?;
        let keys = graphs().with(handle, |g| Ok(g.rnn_state_keys(&vertex)?))?;
        Ok(new_string_array(env, keys)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_rnnGetPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    vertex: JString<'local>,
    key: JString<'local>,
) -> jfloatArray {
    guard(&mut env, |env| {
        let vertex = read_string(env, &vertex, "vertex name")?;
        let key = read_string(env, &key, "state key")?;
        let state = graphs().with(handle, |g| {
            g.rnn_previous_state(&vertex, &key)?
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
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_rnnSetPreviousState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    vertex: JString<'local>,
    key: JString<'local>,
    values: JFloatArray<'local>,
    rows: jint,
) {
    guard(&mut env, |env| {
        let vertex = read_string(env, &vertex, "vertex name")?;
        let key = read_string(env, &key, "state key")?;
        let values = read_floats(env, &values, "state")?;
        let rows = positive_rows(rows, "state")?;
        graphs().with(handle, |g| Ok(g.rnn_set_previous_state(&vertex, &key, &values, rows)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_feedForward<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    inputs: JObjectArray<'local>,
    rows: jint,
    train: jboolean,
    f_masks: JObjectArray<'local>,
    f_mask_cols: JIntArray<'local>,
) -> jobjectArray {
    guard(&mut env, |env| {
        unlabelled(
            env,
            handle,
            &inputs,
            rows,
            train,
            &f_masks,
            &f_mask_cols,
            true,
        )
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_counters<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let (it, ep) = graphs().with(handle, |g| Ok((g.iteration_count(), g.epoch_count())))?;
        Ok(new_long_array(env, &[it as i64, ep as i64])?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_setCounters<'local>(
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
        graphs().with(handle, |g| {
            g.set_counters(iteration as u64, epoch as u64);
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_configurationJson<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = graphs().with(handle, |g| Ok(g.configuration().to_json()))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_paramTable<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = graphs().with(handle, |g| Ok(param_table_json(g.param_table())))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_vertexInfo<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = graphs().with(handle, |g| Ok(vertex_info_json(g)))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeGraph_learningRate<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    vertex: JString<'local>,
) -> jdouble {
    guard(&mut env, |env| {
        if vertex.as_raw().is_null() {
            return invalid("vertex name is null");
        }
        let name: String = env.get_string(&vertex)?.into();
        graphs().with(handle, |g| match g.vertex_index(&name) {
            Some(v) => Ok(g.learning_rate(v).unwrap_or(f64::NAN)),
            None => invalid(format!("the graph has no vertex \"{name}\"")),
        })
    })
}

/// `inputs` (name, shape), `outputs` (name, nOut, activation, lossFunction), `order` (execution
/// order of vertex names) and `vertices` in configuration order: name, vertexType, type (the
/// layer's type for a layer vertex), inputs, frozen, nIn, nOut, inputShapes, outputShape,
/// numParams, params (name + shape), activation.
fn vertex_info_json(g: &ComputationGraph) -> String {
    let conf = g.configuration();
    let vertices: Vec<Value> = conf
        .vertices
        .iter()
        .enumerate()
        .map(|(v, vc)| {
            let (ins, out) = g.vertex_shapes(v).map_or((Vec::new(), Value::Null), |(i, o)| {
                (i.iter().map(|s| shape_json(*s)).collect(), shape_json(o))
            });
            let layer = vc.vertex.layer();
            let params: Vec<Value> = g.layer(v).map_or(Vec::new(), |l| {
                l.param_specs()
                    .iter()
                    .map(|p| json!({"name": p.name, "shape": p.shape}))
                    .collect()
            });
            json!({
                "name": vc.name,
                "vertexType": vc.vertex.unfrozen().type_name(),
                "type": layer.map_or(vc.vertex.unfrozen().type_name(), |l| l.unfrozen().type_name()),
                "inputs": vc.inputs,
                "frozen": vc.is_frozen(),
                "nIn": layer.and_then(LayerConfig::n_in),
                "nOut": layer.and_then(LayerConfig::n_out),
                "inputShapes": ins,
                "outputShape": out,
                "numParams": g.param_range(v).map_or(0, |r| r.len()),
                "params": params,
                "activation": layer.and_then(LayerConfig::activation).map(|a| enum_name(&a)),
            })
        })
        .collect();
    let inputs: Vec<Value> = (0..g.num_inputs())
        .map(|k| json!({"name": conf.network_inputs[k], "width": g.input_width(k)}))
        .collect();
    let outputs: Vec<Value> = (0..g.num_outputs())
        .map(|k| {
            let name = &conf.network_outputs[k];
            let loss = conf
                .vertex_index(name)
                .and_then(|v| conf.vertices[v].vertex.layer())
                .and_then(|l| l.head())
                .map(|(_, loss, _)| enum_name(&loss));
            json!({"name": name, "nOut": g.output_width(k),
                   "activation": enum_name(&g.output_activation(k)), "lossFunction": loss})
        })
        .collect();
    let order: Vec<&str> = g
        .execution_order()
        .iter()
        .map(|&v| conf.vertices[v].name.as_str())
        .collect();
    json!({"inputs": inputs, "outputs": outputs, "order": order, "vertices": vertices}).to_string()
}
