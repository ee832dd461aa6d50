//! What a connecting worker receives: the master state's bytes, as shared parts.
//!
//! A snapshot is taken under the relay's state lock and then written to one socket. Holding it as
//! `Arc`ed parts rather than one fresh buffer per connection keeps both costs flat in the number
//! of workers: taking it clones a few pointers (the lock is not held while megabytes are copied),
//! and workers connecting at the same moment share one copy of what did not change between their
//! connects (a fit's start updater state never does) instead of holding one copy each until
//! their sockets have taken it.

use std::sync::Arc;

/// One part: any shared, immutable bytes.
pub type SnapshotPart = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The bytes of [`crate::MasterState::snapshot`]: its parts, written in order, make the snapshot
/// a worker receives (a worker sees one byte string; the parts are not visible on the wire).
#[derive(Clone, Default)]
pub struct SnapshotBytes {
    parts: Vec<SnapshotPart>,
}

impl SnapshotBytes {
    /// No bytes.
    pub fn new() -> Self {
        SnapshotBytes::default()
    }

    /// Appends a part (shared, not copied).
    pub fn push(&mut self, part: SnapshotPart) -> &mut Self {
        self.parts.push(part);
        self
    }

    /// Total length in bytes.
    pub fn len(&self) -> u64 {
        self.parts.iter().map(|p| (**p).as_ref().len() as u64).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parts, in order.
    pub fn parts(&self) -> impl Iterator<Item = &[u8]> {
        self.parts.iter().map(|p| (**p).as_ref())
    }

    /// All bytes in one buffer (a copy: for readers of the whole state, not for sending).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() as usize);
        self.parts().for_each(|p| out.extend_from_slice(p));
        out
    }

    /// Calls `f` with consecutive pieces of at most `max` bytes that together are the snapshot,
    /// each piece copied into `buf` (so that it can be sealed in place). At least one piece is
    /// produced, empty for an empty snapshot, so a sealed snapshot always carries a tag.
    pub(crate) fn for_each_piece<E>(
        &self,
        max: usize,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(&mut [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        assert!(max > 0);
        buf.clear();
        let mut produced = false;
        for part in self.parts() {
            let mut rest = part;
            while !rest.is_empty() {
                let take = (max - buf.len()).min(rest.len());
                buf.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if buf.len() == max {
                    f(buf)?;
                    produced = true;
                    buf.clear();
                }
            }
        }
        if !buf.is_empty() || !produced {
            f(buf)?;
        }
        Ok(())
    }
}

impl From<Vec<u8>> for SnapshotBytes {
    fn from(bytes: Vec<u8>) -> Self {
        let mut s = SnapshotBytes::new();
        s.push(Arc::new(bytes));
        s
    }
}

/// How many pieces [`SnapshotBytes::for_each_piece`] produces for `len` bytes: the number of
/// sealed chunks a receiver must read.
pub(crate) fn piece_count(len: u64, max: usize) -> u64 {
    len.div_ceil(max as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cross_parts_and_cover_every_byte_once() {
        let mut s = SnapshotBytes::new();
        s.push(Arc::new(vec![1u8, 2, 3]));
        s.push(Arc::new(Vec::<u8>::new()));
        s.push(Arc::new(vec![4u8, 5, 6, 7, 8]));
        assert_eq!((s.len(), s.to_vec()), (8, vec![1, 2, 3, 4, 5, 6, 7, 8]));
        for max in 1..=10 {
            let mut got = Vec::new();
            let mut n = 0;
            s.for_each_piece::<()>(max, &mut Vec::new(), |p| {
                assert!(!p.is_empty() && p.len() <= max);
                got.extend_from_slice(p);
                n += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(got, s.to_vec(), "max {max}");
            assert_eq!(n, piece_count(8, max), "max {max}");
        }
        // an empty snapshot is one empty piece
        let mut n = 0;
        SnapshotBytes::new()
            .for_each_piece::<()>(4, &mut Vec::new(), |p| {
                assert!(p.is_empty());
                n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!((n, piece_count(0, 4)), (1, 1));
        // an error stops the walk
        let mut calls = 0;
        let r = s.for_each_piece(2, &mut Vec::new(), |_| {
            calls += 1;
            if calls == 2 {
                Err("stop")
            } else {
                Ok(())
            }
        });
        assert_eq!((r, calls), (Err("stop"), 2));
    }
}
