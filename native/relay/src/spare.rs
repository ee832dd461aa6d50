//! A few emptied message buffers kept for reuse. A fresh multi-megabyte buffer per message costs
//! its page faults again (the averaging rounds' 5 MB messages: 800 faults per round before,
//! docs/BENCHMARKS.md); small buffers are cheap to allocate and are not kept.

use std::sync::Mutex;

use crate::relay::lock;

/// Buffers kept at most (a connection has about a round's messages in flight).
const KEPT: usize = 2;
/// The least capacity worth keeping.
const MIN_CAPACITY: usize = 64 * 1024;

#[derive(Default)]
pub struct SpareBuffers(Mutex<Vec<Vec<u8>>>);

impl SpareBuffers {
    /// An empty buffer: a kept one with its capacity, or a new one.
    pub fn take(&self) -> Vec<u8> {
        lock(&self.0).pop().unwrap_or_default()
    }

    /// Keeps `buf` (emptied) when it is big enough and there is room; drops it otherwise.
    pub fn give(&self, mut buf: Vec<u8>) {
        if buf.capacity() >= MIN_CAPACITY {
            let mut kept = lock(&self.0);
            if kept.len() < KEPT {
                buf.clear();
                kept.push(buf);
            }
        }
    }
}
