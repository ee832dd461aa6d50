//! libferrodl: the JNI facade over the ferrodl engine.
//!
//! Only this crate knows about Java. Every exported function goes through
//! [`boundary::guard`], which turns engine errors into the Java exceptions of the error table
//! ([`errors`]) and catches panics, so no input from the JVM can crash it. Native objects are
//! reached through typed handle registries ([`handles`]), never raw pointers.
//! One module per Java class served (`org.ferrodl.jni.*`); nothing numeric lives here.

/// Every native byte is counted, so `NativeInfo.nativeMemory()` and the budget checks see what
/// networks, buffers, the relay and the codec hold (`ferrodl_tensor::memory`).
#[global_allocator]
static ALLOCATOR: ferrodl_tensor::memory::CountingAllocator =
    ferrodl_tensor::memory::CountingAllocator;

mod arrays;
mod engine_arrays;
pub mod boundary;
pub mod errors;
pub mod handles;
mod info_json;
mod native_averaging;
mod native_configuration;
mod native_dataset_codec;
mod native_graph;
mod native_info;
mod native_network;
mod native_relay;
mod native_shared_worker;

pub use native_info::build_info_json;
