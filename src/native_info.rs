//! `org.ferrodl.jni.NativeInfo`: build information and a deliberate panic for boundary tests.

use crate::boundary::guard;
use jni::objects::{JClass, JString};
use jni::sys::jstring;
use jni::JNIEnv;

/// The build information the Java loader compares with the jar's version.
pub fn build_info_json() -> String {
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "gitSha": env!("FERRODL_GIT_SHA"),
        "target": env!("FERRODL_TARGET"),
        "profile": env!("FERRODL_PROFILE"),
        "features": env!("FERRODL_FEATURES"),
    })
    .to_string()
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_buildInfo<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    guard(&mut env, |env| {
        Ok(env.new_string(build_info_json())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_panicForTest<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) {
    guard(&mut env, |env| {
        let text: String = if message.as_raw().is_null() {
            "panicForTest".to_string()
        } else {
            env.get_string(&message)?.into()
        };
        panic!("{text}");
    })
}
