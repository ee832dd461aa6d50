//! What a worker sends through the relay and what the driver hands a connecting worker.
//!
//! Update payload: `iteration`, `epoch` (each an unsigned LEB128 varint, `ferrodl_comm::varint`:
//! 2–4 bytes together for any realistic fit, against 16 as two `u64`), then one encoded update
//! (docs/UPDATE_FORMAT.md).
//! Snapshot: `iteration u64 LE`, `epoch u64 LE`, `param_count u64 LE`, `updater_count u64 LE`,
//! then `param_count` f32 LE (the current parameters) and `updater_count` f32 LE (the updater state
//! the fit started from; 0 values for none). The counters travel with the data so that a worker
//! re-run by Spark resumes the driver's iteration and epoch counters (learning-rate schedules and
//! Adam's bias correction depend on them); the updater state travels here rather than in a Spark
//! broadcast, which cost each task 40-60 ms to read on the bench cluster whatever its size.

use crate::error::SharingError;

use ferrodl_comm::varint;
use ferrodl_relay::{SnapshotBytes, SnapshotPart};
use std::borrow::Cow;
use std::sync::Arc;

/// Prefixes `encoded` with the sender's counters into `out` (cleared first).
pub fn write_update(iteration: u64, epoch: u64, encoded: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(varint::len(iteration) + varint::len(epoch) + encoded.len());
    varint::put(out, iteration);
    varint::put(out, epoch);
    out.extend_from_slice(encoded);
}

/// Splits an update payload into `(iteration, epoch, encoded update)`.
pub fn read_update(payload: &[u8]) -> Result<(u64, u64, &[u8]), SharingError> {
    let mut pos = 0;
    let mut counter = |name: &str| {
        varint::get(payload, &mut pos).map_err(|e| {
            SharingError::Message(format!(
                "update payload of {} bytes: its {name} counter is {}",
                payload.len(),
                match e {
                    varint::VarintError::Truncated => "cut off",
                    varint::VarintError::Malformed => "not a minimal LEB128 varint",
                }
            ))
        })
    };
    let iteration = counter("iteration")?;
    let epoch = counter("epoch")?;
    Ok((iteration, epoch, &payload[pos..]))
}

/// Bytes of the [`write_final_states`] payload of `states` updater states of `len` values each: a
/// 12-byte header and 4 bytes per value (what the driver's relay admits from one worker node,
/// `DriverRelay::start_for_nodes`).
pub fn final_states_bytes(states: usize, len: usize) -> usize {
    states.saturating_mul(len).saturating_mul(4).saturating_add(12)
}

/// A worker node's final updater states, sent with its FINISH (each replica's state after its last
/// step; the driver averages them into the network instead of collecting them as Spark task
/// results): `count u32 LE`, `len u64 LE`, then `count × len` f32 LE. No states: no bytes.
pub fn write_final_states(states: &[&[f32]]) -> Result<Vec<u8>, SharingError> {
    let Some(first) = states.first() else {
        return Ok(Vec::new());
    };
    if let Some(other) = states.iter().find(|s| s.len() != first.len()) {
        return Err(SharingError::Message(format!(
            "replicas' updater states differ in length: {} and {}",
            first.len(),
            other.len()
        )));
    }
    let mut out = vec![0u8; final_states_bytes(states.len(), first.len())];
    out[..4].copy_from_slice(&(states.len() as u32).to_le_bytes());
    out[4..12].copy_from_slice(&(first.len() as u64).to_le_bytes());
    // one state at a time into its slice of the output (a per-value push: median 3.4 ms against
    // 2.0 for Adam's 3.5 MB on the FINISH of every fit, 2026-11-29)
    for (dst, state) in out[12..].chunks_exact_mut(first.len().max(1) * 4).zip(states) {
        for (d, v) in dst.chunks_exact_mut(4).zip(state.iter()) {
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
    Ok(out)
}

/// Adds the states of [`write_final_states`] bytes into `sum` (one f64 per value); returns how
/// many states they held. Checked whole before anything is added: the length each state must
/// have (`sum.len()`), the byte count, and finite values.
pub fn add_final_states(bytes: &[u8], sum: &mut [f64]) -> Result<u32, SharingError> {
    let bad = |m: String| SharingError::Message(format!("final updater states: {m}"));
    if bytes.len() < 12 {
        return Err(bad(format!("{} bytes, shorter than their 12-byte header", bytes.len())));
    }
    let count = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
    let len = u64::from_le_bytes(bytes[4..12].try_into().expect("8 bytes"));
    if len != sum.len() as u64 {
        return Err(bad(format!(
            "states of {len} values, but the network's updater state has {}",
            sum.len()
        )));
    }
    let expected = len.checked_mul(u64::from(count)).and_then(|v| v.checked_mul(4)).and_then(|v| v.checked_add(12));
    if count == 0 || expected != Some(bytes.len() as u64) {
        return Err(bad(format!("{} bytes for {count} states of {len} values", bytes.len())));
    }
    let value = |c: &[u8]| f32::from_le_bytes(c.try_into().expect("4 bytes"));
    if let Some(i) = first_non_finite(&bytes[12..]) {
        return Err(bad(format!("value {i} is {}", value(&bytes[12 + 4 * i..16 + 4 * i]))));
    }
    // state by state, so that the loop over the values has no index arithmetic (a modulo per
    // value: median 3.3 ms against 1.8 for Adam's 3.5 MB at the relay, 2026-11-29)
    for state in bytes[12..].chunks_exact(sum.len().max(1) * 4) {
        for (s, c) in sum.iter_mut().zip(state.chunks_exact(4)) {
            *s += f64::from(value(c));
        }
    }
    Ok(count)
}

/// The index of the first value in `bytes` (f32 LE) that is NaN or infinite. Blocks are screened
/// without early exit (a loop the compiler vectorizes); only a block that holds one is searched.
fn first_non_finite(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 1024;
    const EXPONENT: u32 = 0x7f80_0000;
    let non_finite = |c: &[u8]| u32::from_le_bytes(c.try_into().expect("4 bytes")) & EXPONENT == EXPONENT;
    bytes.chunks(BLOCK * 4).enumerate().find_map(|(b, block)| {
        let any = block.chunks_exact(4).fold(false, |any, c| any | non_finite(c));
        any.then(|| b * BLOCK + block.chunks_exact(4).position(non_finite).expect("screened"))
    })
}

/// A snapshot's bytes ([`Snapshot::to_bytes`]'s layout) as parts that share `params` and
/// `updater_state` instead of copying them: only the 32-byte header is new.
pub(crate) fn snapshot_bytes(
    iteration: u64,
    epoch: u64,
    params: &Arc<Vec<f32>>,
    updater_state: &Arc<Vec<f32>>,
) -> SnapshotBytes {
    let head = snapshot_header(iteration, epoch, params.len(), updater_state.len());
    let mut s = SnapshotBytes::new();
    s.push(Arc::new(head)).push(le_part(params)).push(le_part(updater_state));
    s
}

/// A snapshot's 32-byte header: `iteration`, `epoch`, parameter count, updater-state count (u64 LE).
fn snapshot_header(iteration: u64, epoch: u64, params: usize, updater_state: usize) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEADER);
    for word in [iteration, epoch, params as u64, updater_state as u64] {
        head.extend_from_slice(&word.to_le_bytes());
    }
    head
}

/// The master copy as the stopped relay leaves it: its snapshot read where its parts lie (the
/// master copy's own arrays), so the counters and parameters reach the driver's network without
/// concatenating the snapshot or parsing the fit's start updater state, which nothing reads after
/// the fit (5.3 MB of copies per fit for the MNIST MLP with Adam).
pub(crate) struct StoppedSnapshot {
    bytes: SnapshotBytes,
    iteration: u64,
    epoch: u64,
    params: usize,
}

impl StoppedSnapshot {
    /// Checks the header against the length, as [`Snapshot::from_bytes`] does.
    pub(crate) fn new(bytes: SnapshotBytes) -> Result<Self, SharingError> {
        let len = bytes.len();
        let mut head = [0u8; HEADER];
        if len >= HEADER as u64 {
            copy_range(&bytes, 0, &mut head);
        }
        let l = Layout::read(len, &head)?;
        Ok(StoppedSnapshot {
            bytes,
            iteration: l.iteration,
            epoch: l.epoch,
            params: l.params as usize,
        })
    }

    pub(crate) fn counters(&self) -> (u64, u64) {
        (self.iteration, self.epoch)
    }

    pub(crate) fn param_count(&self) -> usize {
        self.params
    }

    /// The parameters into `out`, which holds exactly [`Self::param_count`] values.
    pub(crate) fn params_into(&self, out: &mut [f32]) {
        assert_eq!(out.len(), self.params, "parameter count");
        copy_range(&self.bytes, HEADER as u64, bytemuck::cast_slice_mut(out));
        #[cfg(not(target_endian = "little"))]
        for v in out.iter_mut() {
            *v = f32::from_le_bytes(v.to_ne_bytes());
        }
    }

    /// The whole snapshot, parsed (a copy of every array).
    pub(crate) fn to_snapshot(&self) -> Result<Snapshot, SharingError> {
        Snapshot::from_bytes(&self.bytes.to_vec())
    }
}

/// Copies `dst.len()` bytes of the snapshot, starting at byte `from`, into `dst`, across its parts.
fn copy_range(bytes: &SnapshotBytes, from: u64, dst: &mut [u8]) {
    let (mut at, mut done) = (0u64, 0usize);
    for part in bytes.parts() {
        let end = at + part.len() as u64;
        if done < dst.len() && end > from + done as u64 {
            let start = (from + done as u64 - at) as usize;
            let take = (part.len() - start).min(dst.len() - done);
            dst[done..done + take].copy_from_slice(&part[start..start + take]);
            done += take;
        }
        at = end;
    }
    assert_eq!(done, dst.len(), "the snapshot holds the range");
}

/// `values` as a snapshot part holding their little-endian bytes: shared on a little-endian
/// target (the values' own bytes are that encoding), a converted copy elsewhere.
fn le_part(values: &Arc<Vec<f32>>) -> SnapshotPart {
    #[cfg(target_endian = "little")]
    {
        struct LeBytes(Arc<Vec<f32>>);
        impl AsRef<[u8]> for LeBytes {
            fn as_ref(&self) -> &[u8] {
                bytemuck::cast_slice(self.0.as_slice())
            }
        }
        Arc::new(LeBytes(values.clone()))
    }
    #[cfg(not(target_endian = "little"))]
    {
        Arc::new(values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
    }
}

/// The driver's state as sent to a connecting worker.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub iteration: u64,
    pub epoch: u64,
    pub params: Vec<f32>,
    /// The updater state the fit started from (empty: none, e.g. plain SGD).
    pub updater_state: Vec<f32>,
}

const HEADER: usize = 32;

/// A snapshot's header: counters and the parameter count, its array lengths checked against the
/// snapshot's length.
struct Layout {
    iteration: u64,
    epoch: u64,
    params: u64,
}

impl Layout {
    /// `head`: the snapshot's first bytes (at least [`HEADER`] of them when `len` has them).
    fn read(len: u64, head: &[u8]) -> Result<Layout, SharingError> {
        let bad = |m: String| SharingError::Message(format!("parameter snapshot: {m}"));
        if len < HEADER as u64 {
            return Err(bad(format!("{len} bytes, shorter than its {HEADER}-byte header")));
        }
        let word = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
        let (iteration, epoch, params, updater) = (word(0), word(8), word(16), word(24));
        let expected = params
            .checked_add(updater)
            .and_then(|v| v.checked_mul(4))
            .and_then(|b| b.checked_add(HEADER as u64));
        if expected != Some(len) {
            return Err(bad(format!(
                "{len} bytes, header says {params} parameters and {updater} updater-state values"
            )));
        }
        Ok(Layout { iteration, epoch, params })
    }
}

impl Snapshot {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out =
            snapshot_header(self.iteration, self.epoch, self.params.len(), self.updater_state.len());
        out.reserve_exact(4 * (self.params.len() + self.updater_state.len()));
        for v in self.params.iter().chain(&self.updater_state) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Snapshot, SharingError> {
        let view = SnapshotView::parse(bytes)?;
        Ok(Snapshot {
            iteration: view.iteration,
            epoch: view.epoch,
            params: decode_floats(view.params, "parameters")?,
            updater_state: decode_floats(view.updater_state, "updater state")?,
        })
    }
}

/// A received snapshot read where it lies: the header checked as [`Snapshot::from_bytes`] does,
/// the arrays handed out from the received bytes (borrowed where they already are f32 values:
/// a little-endian target and 4-byte aligned bytes). A worker's connect parsed both arrays into a
/// copy beside the received bytes (5.3 MB of fresh memory per worker and fit for the MNIST MLP
/// with Adam, 300 MB for 25M parameters).
pub(crate) struct SnapshotView<'a> {
    pub(crate) iteration: u64,
    pub(crate) epoch: u64,
    params: &'a [u8],
    updater_state: &'a [u8],
}

impl<'a> SnapshotView<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, SharingError> {
        let l = Layout::read(bytes.len() as u64, bytes)?;
        let (params, updater_state) = bytes[HEADER..].split_at(4 * l.params as usize);
        Ok(SnapshotView {
            iteration: l.iteration,
            epoch: l.epoch,
            params,
            updater_state,
        })
    }

    pub(crate) fn param_count(&self) -> usize {
        self.params.len() / 4
    }

    pub(crate) fn updater_state_len(&self) -> usize {
        self.updater_state.len() / 4
    }

    pub(crate) fn params(&self) -> Result<Cow<'a, [f32]>, SharingError> {
        le_floats(self.params, "parameters")
    }

    pub(crate) fn updater_state(&self) -> Result<Cow<'a, [f32]>, SharingError> {
        le_floats(self.updater_state, "updater state")
    }
}

/// f32 LE `bytes` as values: the bytes themselves where they are already (see [`SnapshotView`]),
/// else decoded into a budgeted copy.
fn le_floats<'a>(bytes: &'a [u8], what: &str) -> Result<Cow<'a, [f32]>, SharingError> {
    #[cfg(target_endian = "little")]
    if let Ok(values) = bytemuck::try_cast_slice::<u8, f32>(bytes) {
        return Ok(Cow::Borrowed(values));
    }
    Ok(Cow::Owned(decode_floats(bytes, what)?))
}

fn decode_floats(bytes: &[u8], what: &str) -> Result<Vec<f32>, SharingError> {
    let count = bytes.len() / 4;
    let mut v = ferrodl_memory::try_with_capacity(count, || {
        format!("the snapshot's {what} ({count} values)")
    })?;
    v.extend(bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_round_trip() {
        let mut out = vec![9u8; 3];
        write_update(7, 2, &[1, 2, 3], &mut out);
        assert_eq!(out, [7, 2, 1, 2, 3]);
        assert_eq!(read_update(&out).unwrap(), (7, 2, &[1u8, 2, 3][..]));
        write_update(300_000, 130, &[4], &mut out);
        assert_eq!(out.len(), 3 + 2 + 1);
        assert_eq!(read_update(&out).unwrap(), (300_000, 130, &[4u8][..]));
        assert_eq!(
            read_update(&out[..4]).unwrap_err().to_string(),
            "update payload of 4 bytes: its epoch counter is cut off"
        );
        assert!(read_update(&[0x80, 0x00, 1]).unwrap_err().to_string().contains("iteration"));
    }

    #[test]
    fn snapshot_round_trip_and_validation() {
        let s = Snapshot {
            iteration: 11,
            epoch: 3,
            params: vec![1.5, -2.25, f32::MIN_POSITIVE],
            updater_state: vec![0.5, -0.0],
        };
        let b = s.to_bytes();
        assert_eq!(b.len(), 32 + 12 + 8);
        assert_eq!(Snapshot::from_bytes(&b).unwrap(), s);
        assert!(Snapshot::from_bytes(&b[..b.len() - 1])
            .unwrap_err()
            .to_string()
            .contains("3 parameters and 2 updater-state values"));
        assert!(Snapshot::from_bytes(&b[..10]).is_err());
        let none = Snapshot { updater_state: Vec::new(), ..s };
        assert_eq!(Snapshot::from_bytes(&none.to_bytes()).unwrap(), none);
        // counts whose byte size overflows are refused, not wrapped
        let mut huge = none.to_bytes();
        huge[24..32].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        assert!(Snapshot::from_bytes(&huge).unwrap_err().to_string().contains("updater-state values"));
    }

    /// `bytes` cut into parts at `cuts` (byte offsets), as a snapshot's parts may lie.
    fn in_parts(bytes: &[u8], cuts: &[usize]) -> SnapshotBytes {
        let mut out = SnapshotBytes::new();
        let mut at = 0;
        for &c in cuts.iter().chain([bytes.len()].iter()) {
            out.push(Arc::new(bytes[at..c].to_vec()));
            at = c;
        }
        out
    }

    #[test]
    fn a_stopped_snapshot_reads_counters_and_parameters_where_its_parts_lie() {
        let s = Snapshot {
            iteration: 40,
            epoch: 6,
            params: (0..37).map(|i| i as f32 * -0.75 + 0.1).collect(),
            updater_state: (0..74).map(|i| i as f32 * 1e-3).collect(),
        };
        let b = s.to_bytes();
        // as the master copy lays it out (header, parameters, updater state), and cut anywhere:
        // inside the header, inside a value, one part holding the end of the parameters and the
        // start of the updater state, an empty part
        for cuts in [
            vec![32, 32 + 4 * 37],
            vec![5, 30, 33, 33, 101, 32 + 4 * 37 + 2],
            vec![],
        ] {
            let stopped = StoppedSnapshot::new(in_parts(&b, &cuts)).unwrap();
            assert_eq!(stopped.counters(), (40, 6));
            assert_eq!(stopped.param_count(), 37);
            let mut out = vec![f32::NAN; 37];
            stopped.params_into(&mut out);
            assert_eq!(out, s.params, "cuts {cuts:?}");
            assert_eq!(stopped.to_snapshot().unwrap(), s);
        }
        // the header is checked against the length, as Snapshot::from_bytes checks it
        let err = StoppedSnapshot::new(in_parts(&b[..b.len() - 4], &[32]))
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("37 parameters and 74 updater-state values"),
            "{err}"
        );
        assert!(StoppedSnapshot::new(in_parts(&b[..20], &[7])).is_err());
    }

    /// Large states (several screening blocks, a length that is no multiple of a block): the
    /// bytes are each value's LE bytes in order, the sums are each value's f64 added state by
    /// state, and the first non-finite value is named by its index over all states.
    #[test]
    fn final_states_keep_every_value_and_name_the_first_non_finite_one() {
        let len = 2_500;
        let states: Vec<Vec<f32>> = (0..3)
            .map(|s| (0..len).map(|i| ((i * 7 + s * 13) % 101) as f32 * 0.37 - 17.5).collect())
            .collect();
        let refs: Vec<&[f32]> = states.iter().map(Vec::as_slice).collect();
        let bytes = write_final_states(&refs).unwrap();
        let mut expected = vec![3u8, 0, 0, 0];
        expected.extend_from_slice(&(len as u64).to_le_bytes());
        for v in states.iter().flatten() {
            expected.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(bytes, expected);
        let mut sum = vec![0.5f64; len];
        assert_eq!(add_final_states(&bytes, &mut sum).unwrap(), 3);
        for (i, s) in sum.iter().enumerate() {
            let want = 0.5 + f64::from(states[0][i]) + f64::from(states[1][i]) + f64::from(states[2][i]);
            assert_eq!(s.to_bits(), want.to_bits(), "value {i}");
        }
        let bad_values = [
            (0, f32::NAN),
            (1_023, f32::INFINITY),
            (1_024, f32::NEG_INFINITY),
            (len + 5, f32::NAN),
            (3 * len - 1, f32::INFINITY),
        ];
        for (at, bad) in bad_values {
            let mut broken = bytes.clone();
            broken[12 + 4 * at..16 + 4 * at].copy_from_slice(&bad.to_le_bytes());
            let before = sum.clone();
            let e = add_final_states(&broken, &mut sum).unwrap_err().to_string();
            assert!(e.contains(&format!("value {at} is {bad}")), "{e}");
            assert_eq!(sum, before, "nothing added from refused states");
        }
        // states without values (plain SGD's updater has none)
        let empty = write_final_states(&[&[], &[]]).unwrap();
        assert_eq!(empty, [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(add_final_states(&empty, &mut []).unwrap(), 2);
    }

    /// A received snapshot read in place: the arrays borrowed where the bytes are aligned f32
    /// values, decoded where they are not, the same values either way; a bad length is refused
    /// as `Snapshot::from_bytes` refuses it.
    #[test]
    fn a_snapshot_view_reads_the_arrays_where_they_lie() {
        let s = Snapshot {
            iteration: 11,
            epoch: 3,
            params: vec![1.5, -2.0, 3.25],
            updater_state: vec![0.5, 0.25, -0.125, 8.0, 9.0, 10.0],
        };
        let bytes = s.to_bytes();
        let view = SnapshotView::parse(&bytes).unwrap();
        assert_eq!((view.iteration, view.epoch, view.param_count(), view.updater_state_len()), (11, 3, 3, 6));
        let (p, u) = (view.params().unwrap(), view.updater_state().unwrap());
        assert_eq!((&p[..], &u[..]), (&s.params[..], &s.updater_state[..]));
        #[cfg(target_endian = "little")]
        if bytes.as_ptr() as usize % 4 == 0 {
            assert!(matches!(p, Cow::Borrowed(_)), "aligned bytes are read in place");
        }
        // bytes that are not 4-byte aligned: decoded
        let mut shifted = vec![0u8; bytes.len() + 4];
        let off = (1..4).find(|o| (shifted.as_ptr() as usize + o) % 4 != 0).expect("an unaligned offset");
        shifted[off..off + bytes.len()].copy_from_slice(&bytes);
        let view = SnapshotView::parse(&shifted[off..off + bytes.len()]).unwrap();
        let (p, u) = (view.params().unwrap(), view.updater_state().unwrap());
        assert!(matches!(p, Cow::Owned(_)));
        assert_eq!((&p[..], &u[..]), (&s.params[..], &s.updater_state[..]));
        // without updater state
        let none = Snapshot { updater_state: Vec::new(), ..s.clone() };
        let b = none.to_bytes();
        let view = SnapshotView::parse(&b).unwrap();
        assert_eq!((view.updater_state_len(), view.updater_state().unwrap().len()), (0, 0));
        let e = SnapshotView::parse(&bytes[..bytes.len() - 4]).err().unwrap().to_string();
        assert!(e.contains("header says 3 parameters and 6 updater-state values"), "{e}");
    }
}
