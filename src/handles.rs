//! Typed handle registries.
//!
//! Java holds a `long` that is an id, not a pointer: the high byte names the kind of object and the
//! rest is a counter that is never reused. Looking up a stale, forged or wrong-kind handle is a
//! `NativeStateException`, never undefined behaviour. Each object sits behind its own mutex, so
//! concurrent Java calls on one object are serialized; calls on different objects run in parallel
//! (the registry lock is held only for the lookup).

use crate::errors::{FerroError, FerroResult};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
const ID_MASK: u64 = (1 << 56) - 1;

/// A registry of one kind of native object.
pub struct Registry<T> {
    kind: u8,
    what: &'static str,
    items: Mutex<HashMap<u64, Arc<Mutex<T>>>>,
}

impl<T> Registry<T> {
    pub fn new(kind: u8, what: &'static str) -> Self {
        Registry {
            kind,
            what,
            items: Mutex::new(HashMap::new()),
        }
    }

    fn table(&self) -> MutexGuard<'_, HashMap<u64, Arc<Mutex<T>>>> {
        // The table is only mutated by insert/remove, which cannot panic half-way; a poisoned
        // lock therefore still holds a consistent map.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `value` and returns its handle (never 0).
    pub fn insert(&self, value: T) -> i64 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed) & ID_MASK;
        let handle = (u64::from(self.kind) << 56) | id;
        self.table().insert(handle, Arc::new(Mutex::new(value)));
        handle as i64
    }

    /// Removes the object; it is dropped once no call is using it any more.
    pub fn remove(&self, handle: i64) -> FerroResult<()> {
        self.check_kind(handle)?;
        match self.table().remove(&(handle as u64)) {
            Some(_) => Ok(()),
            None => Err(self.unknown(handle)),
        }
    }

    /// Runs `f` with exclusive access to the object behind `handle`.
    pub fn with<R>(&self, handle: i64, f: impl FnOnce(&mut T) -> FerroResult<R>) -> FerroResult<R> {
        self.check_kind(handle)?;
        let item = self
            .table()
            .get(&(handle as u64))
            .cloned()
            .ok_or_else(|| self.unknown(handle))?;
        let mut guard = item.lock().map_err(|_| {
            FerroError::State(format!(
                "{} handle {handle:#x} is unusable: an earlier native call panicked while using it; \
                 close it and create a new one",
                self.what
            ))
        })?;
        f(&mut guard)
    }

    pub fn len(&self) -> usize {
        self.table().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check_kind(&self, handle: i64) -> FerroResult<()> {
        if handle == 0 {
            return Err(FerroError::State(format!(
                "{} handle is 0 (closed or never created)",
                self.what
            )));
        }
        if (handle as u64 >> 56) as u8 != self.kind {
            return Err(FerroError::State(format!(
                "handle {handle:#x} is not a {} handle",
                self.what
            )));
        }
        Ok(())
    }

    fn unknown(&self, handle: i64) -> FerroError {
        FerroError::State(format!(
            "{} handle {handle:#x} is unknown or already closed",
            self.what
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_typed_and_not_reused() {
        let a: Registry<u32> = Registry::new(1, "a");
        let b: Registry<u32> = Registry::new(2, "b");
        let ha = a.insert(5);
        let hb = b.insert(6);
        assert_ne!(ha, 0);
        assert_eq!(a.with(ha, |v| Ok(*v)).unwrap(), 5);
        assert!(
            b.with(ha, |v| Ok(*v)).is_err(),
            "wrong kind must be refused"
        );
        a.remove(ha).unwrap();
        assert!(
            a.with(ha, |v| Ok(*v)).is_err(),
            "closed handle must be refused"
        );
        assert!(a.remove(ha).is_err());
        let ha2 = a.insert(7);
        assert_ne!(ha, ha2);
        assert!(a.with(0, |v| Ok(*v)).is_err());
        assert_eq!(b.with(hb, |v| Ok(*v)).unwrap(), 6);
    }

    #[test]
    fn poisoned_object_is_reported_not_reused() {
        let r: Registry<u32> = Registry::new(3, "thing");
        let h = r.insert(1);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = r.with(h, |_| -> FerroResult<()> { panic!("boom") });
        }));
        assert!(result.is_err());
        let err = r.with(h, |v| Ok(*v)).unwrap_err();
        assert!(err.to_string().contains("panicked"), "{err}");
    }
}
