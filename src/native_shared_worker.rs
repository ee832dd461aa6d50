//! `org.ferrodl.jni.NativeSharedWorker`: a gradient-sharing worker node and its replicas.
//! Thread safety: the node and each replica are separate handles with their own locks, so the
//! replicas of one node train in parallel from different Java threads.

use crate::arrays::{
    as_mask, budgeted_copy, new_float_array, new_long_array, read_batch, read_features_mask,
    read_float_arrays, read_masks, OwnedMask,
};
use crate::boundary::{guard, invalid};
use crate::errors::FerroError;
use crate::handles::Registry;
use ferrodl_sharing::{ReplicaTrainer, SharingError, WorkerConfig, WorkerNode};
use jni::objects::{JClass, JFloatArray, JIntArray, JLongArray, JObjectArray, JString};
use jni::sys::{jdouble, jfloatArray, jint, jlong, jlongArray, jstring};
use jni::JNIEnv;
use std::sync::OnceLock;

fn nodes() -> &'static Registry<WorkerNode> {
    static NODES: OnceLock<Registry<WorkerNode>> = OnceLock::new();
    NODES.get_or_init(|| Registry::new(0x57, "worker node"))
}

fn replicas() -> &'static Registry<ReplicaTrainer> {
    static REPLICAS: OnceLock<Registry<ReplicaTrainer>> = OnceLock::new();
    REPLICAS.get_or_init(|| Registry::new(0x58, "worker replica"))
}

fn json_error(what: &str, e: serde_json::Error) -> FerroError {
    FerroError::Sharing(SharingError::Config(format!("{what}: {e}")))
}

/// Connects a node; returns `[node handle, replica handles...]`.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_connect<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    config_json: JString<'local>,
) -> jlongArray {
    guard(&mut env, |env| {
        if config_json.as_raw().is_null() {
            return invalid("worker configuration JSON is null");
        }
        let json: String = env.get_string(&config_json)?.into();
        let config: WorkerConfig =
            serde_json::from_str(&json).map_err(|e| json_error("worker configuration", e))?;
        let (node, trainers) = WorkerNode::connect(&config)?;
        let mut handles = vec![nodes().insert(node)];
        handles.extend(trainers.into_iter().map(|t| replicas().insert(t)));
        Ok(new_long_array(env, &handles)?.into_raw())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_fit<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
    features: JFloatArray<'local>,
    rows: jint,
    f_cols: jint,
    labels: JFloatArray<'local>,
    l_cols: jint,
    f_mask: JFloatArray<'local>,
    f_mask_cols: jint,
    mask: JFloatArray<'local>,
    mask_cols: jint,
) -> jdouble {
    guard(&mut env, |env| {
        let b = read_batch(
            env, &features, rows, f_cols, &labels, l_cols, &mask, mask_cols,
        )?;
        let fm = read_features_mask(env, &f_mask, b.rows, f_mask_cols)?;
        replicas().with(replica, |t| {
            Ok(t.fit_masked(&b.features, &b.labels, b.rows, as_mask(&fm), b.mask())?)
        })
    })
}

/// One step of a graph replica: `float[][]` per input/output, masks as `NativeGraph` takes them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_fitGraph<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
    inputs: JObjectArray<'local>,
    labels: JObjectArray<'local>,
    rows: jint,
    f_masks: JObjectArray<'local>,
    f_mask_cols: JIntArray<'local>,
    l_masks: JObjectArray<'local>,
    l_mask_cols: JIntArray<'local>,
) -> jdouble {
    guard(&mut env, |env| {
        if rows <= 0 {
            return invalid(format!("rows ({rows}) must be positive"));
        }
        let rows = rows as usize;
        let x = read_float_arrays(env, &inputs, "features")?;
        let y = read_float_arrays(env, &labels, "labels")?;
        let fm = read_masks(env, &f_masks, &f_mask_cols, rows, "feature masks")?;
        let lm = read_masks(env, &l_masks, &l_mask_cols, rows, "label masks")?;
        let (x, y, fm, lm) = (slices(&x), slices(&y), mask_slices(&fm), mask_slices(&lm));
        replicas().with(replica, |t| Ok(t.fit_graph(&x, &y, rows, &fm, &lm)?))
    })
}

fn slices(v: &[Vec<f32>]) -> Vec<&[f32]> {
    v.iter().map(Vec::as_slice).collect()
}

fn mask_slices(v: &[OwnedMask]) -> Vec<Option<(&[f32], usize)>> {
    v.iter()
        .map(|o| o.as_ref().map(|(d, c)| (d.as_slice(), *c)))
        .collect()
}

/// The replica's report as JSON (also applies updates still waiting in its inbox).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_replicaReport<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let report = replicas().with(replica, |t| Ok(t.report()))?;
        let json = serde_json::to_string(&report).map_err(|e| json_error("replica report", e))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_replicaParams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let params = replicas().with(replica, |t| budgeted_copy(t.network().params(), "the parameters"))?;
        Ok(new_float_array(env, &params)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_replicaUpdaterState<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
) -> jfloatArray {
    guard(&mut env, |env| {
        let state = replicas().with(replica, |t| {
            budgeted_copy(t.network().updater_state(), "the updater state")
        })?;
        Ok(new_float_array(env, &state)?.into_raw())
    })
}

/// Threshold and residual statistics of the replica's encoder (encodingDebugMode), as JSON.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_debugStats<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = replicas().with(replica, |t| Ok(t.debug_stats_json()))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

/// Waits until the driver has applied everything this node sent, then closes the connection;
/// returns the node's report as JSON.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_finish<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    node: jlong,
    replica_handles: JLongArray<'local>,
) -> jstring {
    guard(&mut env, |env| {
        // the replicas' updater states go to the driver with the FINISH (averaged there)
        let mut handles = Vec::new();
        if !replica_handles.as_raw().is_null() {
            handles = vec![0i64; env.get_array_length(&replica_handles)? as usize];
            env.get_long_array_region(&replica_handles, 0, &mut handles)?;
        }
        let mut states = Vec::with_capacity(handles.len());
        for &h in &handles {
            let state = replicas().with(h, |t| Ok(t.network().updater_state().to_vec()))?;
            if !state.is_empty() {
                states.push(state); // plain SGD has none
            }
        }
        let refs: Vec<&[f32]> = states.iter().map(Vec::as_slice).collect();
        let report = nodes().with(node, |n| Ok(n.finish_with_updater_states(&refs)?))?;
        let json = serde_json::to_string(&report).map_err(|e| json_error("node report", e))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

/// Reports to the driver that this node made no progress (the task's stall watchdog).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_reportStall<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    node: jlong,
    report: JString<'local>,
) {
    guard(&mut env, |env| {
        if report.as_raw().is_null() {
            return invalid("stall report is null");
        }
        let text: String = env.get_string(&report)?.into();
        nodes().with(node, |n| Ok(n.report_stall(&text)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_destroyNode<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    node: jlong,
) {
    guard(&mut env, |_| nodes().remove(node))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_destroyReplica<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    replica: jlong,
) {
    guard(&mut env, |_| replicas().remove(replica))
}

/// Averages per-worker threshold states (a JSON array) into the state carried to the next fit;
/// returns JSON `null` for an empty array.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeSharedWorker_averageThresholdStates<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    states_json: JString<'local>,
) -> jstring {
    guard(&mut env, |env| {
        if states_json.as_raw().is_null() {
            return invalid("threshold states JSON is null");
        }
        let json: String = env.get_string(&states_json)?.into();
        let averaged = ferrodl_sharing::average_threshold_states(&json)?;
        Ok(env.new_string(averaged)?.into_raw())
    })
}
