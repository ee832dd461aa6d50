//! `org.ferrodl.jni.NativeAveraging`: the averaging rounds of parameter averaging inside one
//! Spark job (ferrodl-averaging): the driver's relay and a worker task's connection.
//! Thread safety: calls on one handle are serialized; the relay's threads run independently.

use crate::arrays::new_long_array;
use crate::boundary::{guard, invalid};
use crate::engine_arrays::with_engine;
use crate::errors::FerroResult;
use ferrodl_averaging::{AveragingDriver, AveragingWorker};
use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jdouble, jdoubleArray, jint, jlong, jlongArray, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;
use std::sync::OnceLock;
use std::time::Duration;

fn drivers() -> &'static Registry<AveragingDriver> {
    static DRIVERS: OnceLock<Registry<AveragingDriver>> = OnceLock::new();
    DRIVERS.get_or_init(|| Registry::new(0x41, "averaging relay"))
}

/// A worker task's connection.
struct Worker {
    conn: AveragingWorker,
}

fn workers() -> &'static Registry<Worker> {
    static WORKERS: OnceLock<Registry<Worker>> = OnceLock::new();
    WORKERS.get_or_init(|| Registry::new(0x42, "averaging worker"))
}

use crate::handles::Registry;

fn read_json(env: &mut JNIEnv<'_>, s: &JString<'_>, what: &str) -> FerroResult<String> {
    if s.as_raw().is_null() {
        return invalid(format!("{what} is null"));
    }
    Ok(env.get_string(s)?.into())
}

fn doubles(env: &mut JNIEnv<'_>, values: &[f64]) -> FerroResult<jdoubleArray> {
    let array = env.new_double_array(values.len() as i32)?;
    env.set_double_array_region(&array, 0, values)?;
    Ok(array.into_raw())
}

/// Starts the relay of a fit; its workers start from the engine arrays of `network` (a network or
/// graph handle, read here without a Java copy): its parameters, and its updater state when `updater`.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_startRelay<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    settings_json: JString<'local>,
    worker_count: jint,
    rounds: jint,
    network: jlong,
    updater: jboolean,
) -> jlong {
    guard(&mut env, |env| {
        let json = read_json(env, &settings_json, "relay settings JSON")?;
        if worker_count <= 0 || rounds <= 0 {
            return invalid(format!("worker count ({worker_count}) and rounds ({rounds}) must be positive"));
        }
        let driver = with_engine(network, |net| {
            let state = (updater == JNI_TRUE).then(|| net.updater_state());
            Ok(AveragingDriver::start(&json, worker_count as u32, rounds as u32, net.params(), state)?)
        })?;
        Ok(drivers().insert(driver))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_port<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jint {
    guard(&mut env, |_| drivers().with(handle, |d| Ok(jint::from(d.port()))))
}

/// Stops the relay (idempotent); the final state and counters stay readable.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_shutdown<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| drivers().with(handle, |d| Ok(d.shutdown()?)))
}

/// Writes the final average (after shutdown) into the engine arrays of `network` (a network or
/// graph handle, no Java copy): its parameters, and its updater state when `updater` and the
/// workers averaged it. Returns 0 when no round had a contributor (nothing written), 1 when the
/// parameters were written, 3 when the updater state was too.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_applyFinal<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    network: jlong,
    updater: jboolean,
) -> jint {
    guard(&mut env, |_| {
        drivers().with(handle, |d| {
            with_engine(network, |net| {
                if !d.final_params_into(net.params_mut())? {
                    return Ok(0);
                }
                Ok(if updater == JNI_TRUE && d.final_updater_into(net.updater_state_mut())? { 3 } else { 1 })
            })
        })
    })
}

/// `[rounds completed, iterations, contributors of the last round, its mean score, minibatches, examples]`.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_finalSummary<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jdoubleArray {
    guard(&mut env, |env| {
        let v = drivers().with(handle, |d| {
            let f = d.final_state()?;
            let a = f.average.as_ref();
            Ok([
                f64::from(f.rounds_done),
                f.iterations as f64,
                a.map_or(0.0, |a| f64::from(a.contributors)),
                a.map_or(f64::NAN, |a| a.score),
                a.map_or(0.0, |a| a.minibatches as f64),
                a.map_or(0.0, |a| a.examples as f64),
            ])
        })?;
        doubles(env, &v)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_statsJson<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = drivers().with(handle, |d| Ok(d.stats_json()))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_destroyRelay<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| drivers().remove(handle))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_connect<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    config_json: JString<'local>,
) -> jlong {
    guard(&mut env, |env| {
        let json = read_json(env, &config_json, "averaging worker configuration JSON")?;
        Ok(workers().insert(Worker { conn: AveragingWorker::connect(&json)? }))
    })
}

/// Writes the fit's start state (received from the driver at connect) into the engine arrays of
/// `network`: its parameters, and its updater state when `updater` and the driver sent one; the
/// training RNG and recurrent state start as a new network's (the network may be kept from an
/// earlier fit). Once per worker; refuses a network whose sizes differ from the driver's, naming
/// both.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_restoreStart<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    network: jlong,
    updater: jboolean,
) {
    guard(&mut env, |_| {
        workers().with(handle, |w| {
            let start = w.conn.take_start()?;
            with_engine(network, |net| {
                let params = net.params_mut();
                if params.len() != start.params().len() {
                    return invalid(format!(
                        "the driver's start state has {} parameters but this worker's network has {}",
                        start.params().len(),
                        params.len()
                    ));
                }
                start.params().copy_to(params);
                if updater == JNI_TRUE && !start.updater().is_empty() {
                    net.set_updater_state(&start.updater().to_vec())?;
                }
                // a network kept from an earlier fit starts like a new one
                net.restart_training();
                Ok(())
            })
        })
    })
}

/// Sends this worker's message of one round straight from the engine's arrays of `network` (a
/// network or graph handle): its parameters, and its updater state when `updater`; only the header
/// when `!contributes` (it fitted nothing this round). No Java copy of either array is made.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_sendRound<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    network: jlong,
    round: jint,
    iterations: jint,
    minibatches: jint,
    examples: jlong,
    score: jdouble,
    contributes: jboolean,
    updater: jboolean,
) {
    guard(&mut env, |_| {
        if round < 0 || iterations < 0 || minibatches < 0 || examples < 0 {
            return invalid(format!(
                "round {round}, iterations {iterations}, minibatches {minibatches} and examples {examples} must be >= 0"
            ));
        }
        workers().with(handle, |w| {
            with_engine(network, |net| {
                let params = (contributes == JNI_TRUE).then(|| net.params());
                let state = (updater == JNI_TRUE).then(|| net.updater_state());
                Ok(w.conn.send_round(
                    round as u32,
                    iterations as u32,
                    minibatches as u32,
                    examples as u64,
                    score,
                    params,
                    state,
                )?)
            })
        })
    })
}

/// Waits up to `timeoutMs` until every other worker of the fit is connected: true then.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_awaitPeers<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    timeout_ms: jlong,
) -> jboolean {
    guard(&mut env, |_| {
        if timeout_ms < 0 {
            return invalid(format!("timeout {timeout_ms} ms must be >= 0"));
        }
        let done = workers().with(handle, |w| Ok(w.conn.await_peers(Duration::from_millis(timeout_ms as u64))?))?;
        Ok(if done { JNI_TRUE } else { JNI_FALSE })
    })
}

/// Waits up to `timeoutMs` for every worker's message of `round`: true when it is complete.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_awaitRound<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    round: jint,
    timeout_ms: jlong,
) -> jboolean {
    guard(&mut env, |_| {
        if round < 0 || timeout_ms < 0 {
            return invalid(format!("round {round} and timeout {timeout_ms} ms must be >= 0"));
        }
        let done = workers().with(handle, |w| {
            Ok(w.conn.await_round(round as u32, Duration::from_millis(timeout_ms as u64))?)
        })?;
        Ok(if done { JNI_TRUE } else { JNI_FALSE })
    })
}

/// The partitions whose message of `round` has not arrived.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_missing<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    round: jint,
) -> jlongArray {
    guard(&mut env, |env| {
        let m: Vec<i64> = workers().with(handle, |w| Ok(w.conn.missing(round.max(0) as u32)))?
            .into_iter()
            .map(i64::from)
            .collect();
        Ok(new_long_array(env, &m)?.into_raw())
    })
}

/// Writes the last completed round's average into the engine's arrays of `network` (which still
/// hold what this worker sent): the parameters, and the updater state when `updater` and every
/// contributor sent it. Returns 0 when nobody fitted in the round (nothing written), 1 when the
/// parameters were written, 3 when the updater state was written too.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_applyAverage<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    network: jlong,
    updater: jboolean,
) -> jint {
    guard(&mut env, |_| {
        workers().with(handle, |w| {
            with_engine(network, |net| {
                if !w.conn.average_params_into(net.params_mut())? {
                    return Ok(0);
                }
                if updater != JNI_TRUE {
                    return Ok(1);
                }
                // in place, as the parameters: this worker's share is read before it is overwritten
                Ok(if w.conn.average_updater_into(net.updater_state_mut())? { 3 } else { 1 })
            })
        })
    })
}

/// `[contributors, most iterations of one worker, mean last score]` of the last completed round.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_averageSummary<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jdoubleArray {
    guard(&mut env, |env| {
        let v = workers().with(handle, |w| {
            let a = w.conn.summary();
            Ok([
                a.map_or(0.0, |a| f64::from(a.contributors)),
                a.map_or(0.0, |a| f64::from(a.max_iterations)),
                a.map_or(f64::NAN, |a| a.score),
            ])
        })?;
        doubles(env, &v)
    })
}

/// Waits until the relay applied every message of this worker, then closes the connection;
/// `[messages sent, wire bytes sent, messages received, bytes received]`.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_finish<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let s = workers().with(handle, |w| Ok(w.conn.finish()?))?;
        Ok(new_long_array(env, &s.map(|v| v as i64))?.into_raw())
    })
}

/// Closes the connection (if still open) and releases the worker.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeAveraging_destroyWorker<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| workers().remove(handle))
}
