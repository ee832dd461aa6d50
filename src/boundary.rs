//! The single wrapper every exported function runs inside.
//!
//! `guard` runs the body under `catch_unwind`; an `Err` becomes the Java exception named by the
//! error table and a panic becomes `NativePanicException` carrying the panic message. It never
//! throws while another exception is pending (that one already explains the failure), and it
//! returns a harmless sentinel value that Java never sees because an exception is in flight.

use crate::errors::{FerroError, FerroResult, PANIC_CLASS};
use jni::JNIEnv;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Value returned to Java when an exception is thrown (ignored by the JVM).
pub trait Sentinel {
    fn sentinel() -> Self;
}

impl Sentinel for () {
    fn sentinel() -> Self {}
}
impl Sentinel for jni::sys::jlong {
    fn sentinel() -> Self {
        0
    }
}
impl Sentinel for jni::sys::jint {
    fn sentinel() -> Self {
        0
    }
}
impl Sentinel for jni::sys::jboolean {
    fn sentinel() -> Self {
        jni::sys::JNI_FALSE
    }
}
impl Sentinel for jni::sys::jdouble {
    fn sentinel() -> Self {
        0.0
    }
}
impl Sentinel for jni::sys::jobject {
    fn sentinel() -> Self {
        std::ptr::null_mut()
    }
}

/// Runs `body`, converting errors and panics into Java exceptions.
pub fn guard<'local, R, F>(env: &mut JNIEnv<'local>, body: F) -> R
where
    R: Sentinel,
    F: FnOnce(&mut JNIEnv<'local>) -> FerroResult<R>,
{
    match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => {
            throw(env, &err.java_class(), &err.to_string());
            R::sentinel()
        }
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            throw(env, PANIC_CLASS, &format!("native panic: {message}"));
            R::sentinel()
        }
    }
}

fn throw(env: &mut JNIEnv<'_>, class: &str, message: &str) {
    // An exception already pending (e.g. from a failed JNI call) is the more precise one.
    if env.exception_check().unwrap_or(true) {
        return;
    }
    if env.throw_new(class, message).is_err() && !env.exception_check().unwrap_or(true) {
        // The exception class itself could not be loaded: fall back to a JDK class.
        let _ = env.throw_new(
            "java/lang/IllegalStateException",
            format!("{class}: {message}"),
        );
    }
}

/// Extracts the text of a panic payload (`&str` or `String`; anything else is described).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Convenience for facade-level argument errors.
pub fn invalid<T>(message: impl Into<String>) -> FerroResult<T> {
    Err(FerroError::InvalidInput(message.into()))
}
