//! `org.ferrodl.jni.NativeInfo`: build information, the engine's thread count, and a deliberate
//! panic for boundary tests.

use crate::boundary::{guard, invalid};
use jni::objects::{JClass, JString};
use jni::sys::{jint, jlong, jlongArray, jstring};
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

/// Sets the threads of the engine's numeric kernels, process-wide; `n <= 0` restores the default
/// (the cores the process may use). Spark workers call it with the cores of their task.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_setNumThreads<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    n: jint,
) {
    guard(&mut env, |_| {
        ferrodl_tensor::set_num_threads(n.max(0) as usize);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_numThreads<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jint {
    guard(&mut env, |_| Ok(ferrodl_tensor::num_threads() as jint))
}

/// The f32 GEMM kernel in force as JSON: `{"requested":"auto","kernel":"amx","reason":"..."}`.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_gemmKernel<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    guard(&mut env, |env| {
        let info = ferrodl_tensor::active_gemm_kernel();
        let json = serde_json::json!({
            "requested": info.requested.name(),
            "kernel": info.kernel.name(),
            "reason": info.reason,
        })
        .to_string();
        Ok(env.new_string(json)?.into_raw())
    })
}

/// Sets the f32 GEMM kernel process-wide: `auto`, `fma` or `amx` (case-insensitive).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_setGemmKernel<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    name: JString<'local>,
) {
    guard(&mut env, |env| {
        if name.as_raw().is_null() {
            return invalid("GEMM kernel name is null; expected auto, fma or amx");
        }
        let text: String = env.get_string(&name)?.into();
        match ferrodl_tensor::GemmKernel::parse(&text) {
            Some(k) => {
                ferrodl_tensor::set_gemm_kernel(k);
                Ok(())
            }
            None => invalid(format!(
                "unknown GEMM kernel {text:?}; expected auto, fma or amx"
            )),
        }
    })
}

/// Native memory as JSON: `{"inUse":..,"peak":..,"budget":..}` (bytes).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_nativeMemory<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    guard(&mut env, |env| {
        use ferrodl_tensor::memory;
        let json = serde_json::json!({
            "inUse": memory::in_use(),
            "peak": memory::peak(),
            "budget": memory::budget(),
        })
        .to_string();
        Ok(env.new_string(json)?.into_raw())
    })
}

/// Native memory as numbers, for callers that record it often (training statistics):
/// `{inUse, peak, budget}` in bytes.
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_nativeMemoryBytes<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jlongArray {
    guard(&mut env, |env| {
        use ferrodl_tensor::memory;
        let v = [memory::in_use(), memory::peak(), memory::budget()]
            .map(|b| i64::try_from(b).unwrap_or(i64::MAX));
        Ok(crate::arrays::new_long_array(env, &v)?.into_raw())
    })
}

/// Sets the native memory budget in bytes; 0 restores the default (physical memory, or
/// `FERRODL_NATIVE_MEMORY`).
#[no_mangle]
pub extern "system" fn Java_org_ferrodl_jni_NativeInfo_setNativeMemoryBudget<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    bytes: jlong,
) {
    guard(&mut env, |_| {
        if bytes < 0 {
            return invalid(format!(
                "the native memory budget must be >= 0 bytes (0 restores the default), got {bytes}"
            ));
        }
        ferrodl_tensor::memory::set_budget(bytes as u64);
        Ok(())
    })
}
