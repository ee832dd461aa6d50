//! `org.ferrodl.jni.NativeConfiguration`: the engine's shape rules and validation for the Java
//! builders (`build()` sends its JSON here instead of repeating the formulas). Stateless.

use crate::boundary::{guard, invalid};
use crate::errors::FerroResult;
use ferrodl_nn::{ComputationGraphConfiguration, MultiLayerConfiguration};
use jni::objects::{JClass, JString};
use jni::sys::jstring;
use jni::JNIEnv;

/// Reads a JSON argument, runs `f` on it and returns the resulting string to Java.
fn with_json<'local>(
    env: &mut JNIEnv<'local>,
    json: &JString<'local>,
    f: impl FnOnce(&str) -> FerroResult<String>,
) -> FerroResult<jstring> {
    if json.as_raw().is_null() {
        return invalid("configuration JSON is null");
    }
    let text: String = env.get_string(json)?.into();
    let out = f(&text)?;
    Ok(env.new_string(out)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeConfiguration_resolveMultiLayer<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> jstring {
    guard(&mut env, |env| {
        with_json(env, &json, |j| {
            Ok(MultiLayerConfiguration::resolve_json(j)?)
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeConfiguration_resolveGraph<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> jstring {
    guard(&mut env, |env| {
        with_json(env, &json, |j| {
            Ok(ComputationGraphConfiguration::resolve_json(j)?)
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeConfiguration_multiLayerTypes<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> jstring {
    guard(&mut env, |env| {
        with_json(env, &json, |j| {
            Ok(MultiLayerConfiguration::from_json(j)?.layer_types_json()?)
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeConfiguration_graphTypes<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> jstring {
    guard(&mut env, |env| {
        with_json(env, &json, |j| {
            Ok(ComputationGraphConfiguration::from_json(j)?.vertex_types_json()?)
        })
    })
}
