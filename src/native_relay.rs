//! `org.ferrodl.jni.NativeRelay`: the driver's update relay of a gradient-sharing fit.
//! Thread safety: calls on one handle are serialized; the relay's own threads run independently.

use crate::arrays::new_long_array;
use crate::boundary::{guard, invalid};
use crate::engine_arrays::with_engine;
use crate::handles::Registry;
use ferrodl_sharing::DriverRelay;
use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jstring, JNI_TRUE};
use jni::JNIEnv;
use std::sync::OnceLock;

fn relays() -> &'static Registry<DriverRelay> {
    static RELAYS: OnceLock<Registry<DriverRelay>> = OnceLock::new();
    RELAYS.get_or_init(|| Registry::new(0x52, "relay"))
}

/// Starts the relay of a fit whose workers start from the parameters and updater state of
/// `network` (a network or graph handle, read from its engine arrays: no Java copy).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_start<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    settings_json: JString<'local>,
    network: jlong,
    states_per_node: jint,
    iteration: jlong,
    epoch: jlong,
) -> jlong {
    guard(&mut env, |env| {
        if settings_json.as_raw().is_null() {
            return invalid("relay settings JSON is null");
        }
        if iteration < 0 || epoch < 0 {
            return invalid(format!(
                "counters must be >= 0 (iteration {iteration}, epoch {epoch})"
            ));
        }
        if states_per_node < 1 {
            return invalid(format!(
                "final updater states per worker node must be >= 1, got {states_per_node}"
            ));
        }
        let json: String = env.get_string(&settings_json)?.into();
        let (params, state) =
            with_engine(network, |net| Ok((net.params().to_vec(), net.updater_state().to_vec())))?;
        let relay = DriverRelay::start_for_nodes(
            &json,
            params,
            state,
            states_per_node as usize,
            iteration as u64,
            epoch as u64,
        )?;
        Ok(relays().insert(relay))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_port<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jint {
    guard(&mut env, |_| {
        relays().with(handle, |r| Ok(jint::from(r.port())))
    })
}

/// Writes the final master copy (after shutdown) into the engine arrays of `network` (a network
/// or graph handle, no Java copy): its parameters, and, when `updater` and the workers sent their
/// final updater states with their FINISH, the mean of those. Returns 1 when only the parameters
/// were written, 3 when the updater state was too.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_applyFinal<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
    network: jlong,
    updater: jboolean,
) -> jint {
    guard(&mut env, |_| {
        relays().with(handle, |r| {
            with_engine(network, |net| {
                r.final_params_into(net.params_mut())?;
                Ok(if updater == JNI_TRUE && r.final_updater_into(net.updater_state_mut())? { 3 } else { 1 })
            })
        })
    })
}

/// `[iteration, epoch, messages applied]` of the master copy.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_counters<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jlongArray {
    guard(&mut env, |env| {
        let ((iteration, epoch), applied) = relays().with(handle, |r| Ok((r.counters()?, r.applied())))?;
        let values = [iteration as i64, epoch as i64, applied as i64];
        Ok(new_long_array(env, &values)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_statsJson<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = relays().with(handle, |r| Ok(r.stats_json()))?;
        Ok(env.new_string(json)?.into_raw())
    })
}

/// Stops the relay (idempotent); parameters, counters and statistics stay readable.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_shutdown<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| relays().with(handle, |r| Ok(r.shutdown()?)))
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeRelay_destroy<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    guard(&mut env, |_| relays().remove(handle))
}
