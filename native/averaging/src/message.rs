//! One worker's message of one averaging round, and the average of a round.
//!
//! Layout (all little-endian):
//!
//! | field | bytes |
//! |---|---|
//! | version `u8` = 1 | 1 |
//! | flags `u8` (`0x01` contributes parameters, `0x02` carries updater state, `0x04` hello, `0x08` the driver's average of a round, `0x10` the driver's receipt of a worker's message) | 1 |
//! | stage attempt `u32` (a retried Spark stage starts the rounds again) | 4 |
//! | round `u32` | 4 |
//! | partition `u32` (the worker) | 4 |
//! | iterations `u32` made this round, minibatches `u32` | 8 |
//! | examples `u64` | 8 |
//! | score `f64` of the last minibatch | 8 |
//! | parameter count `u32`, updater-state count `u32` | 8 |
//! | parameters `f32 × n`, updater state `f32 × m` | 4(n + m) |
//!
//! The workers send hellos and round messages. With two workers the relay forwards each to the
//! other, and each worker averages the round itself. From three workers on ([`hub_averages`]) the
//! relay forwards nothing and answers every worker (the sender included) with each hello, a receipt
//! of each round message (its header, flag `0x10`, no arrays: how a worker knows who has sent)
//! and, once a round is complete, its average (flag `0x08`, partition = the number of
//! contributors, iterations = the most one made, minibatches and examples summed, score = the
//! contributors' mean), so a round moves N messages out of the hub, not N·(N − 1).

use ferrodl_sharing::SharingError;

const VERSION: u8 = 1;
/// The worker fitted at least one minibatch this round: its parameters count in the average.
pub const FLAG_CONTRIBUTES: u8 = 0x01;
/// Its updater state is included.
pub const FLAG_UPDATER: u8 = 0x02;
/// "I am connected" (header only, round 0): how the workers of a fit learn that every worker's
/// connection is up before any round message is sent (see `AveragingWorker::await_peers`).
pub const FLAG_HELLO: u8 = 0x04;
/// The driver's average of a round (with `FLAG_CONTRIBUTES`, and `FLAG_UPDATER` when the updater
/// state was averaged too).
pub const FLAG_AVERAGE: u8 = 0x08;
/// The driver's receipt of a worker's round message: its header alone (the counts say what the
/// message carried; no arrays follow).
pub const FLAG_RECEIPT: u8 = 0x10;
pub const HEADER_LEN: usize = 46;

/// Whether the driver's relay averages each round and sends every worker the average (from three
/// workers on), or forwards each message to the other workers, which average it themselves. With
/// two the bytes through the hub are the same either way (each worker receives one message of the
/// network's size), and the workers' two averaging passes run in parallel where the hub's one would
/// sit between the messages' arrival and the answer (measured on the bench cluster, 2026-11-28:
/// 22 against 11–13 ms of exchange per round). From three on, forwarding moves N·(N − 1) messages
/// out of the hub per round, averaging N.
pub fn hub_averages(workers: u32) -> bool {
    workers >= 3
}

/// A decoded message. Its arrays are read where they lie in the message's own bytes (kept whole;
/// empty when only the header was decoded): a 5 MB copy into `Vec<f32>`s per received message was
/// 10 % of an averaging round's CPU (`exchange_speed`, 2026-11-28).
#[derive(Clone, Debug)]
pub struct RoundMessage {
    pub stage: u32,
    pub round: u32,
    pub partition: u32,
    pub flags: u8,
    pub iterations: u32,
    pub minibatches: u32,
    pub examples: u64,
    pub score: f64,
    pub n_params: usize,
    pub n_updater: usize,
    /// The whole message when its arrays were decoded; empty otherwise.
    wire: Vec<u8>,
}

/// Little-endian f32 values in a message's bytes (at any alignment: the arrays follow a 46-byte
/// header).
#[derive(Clone, Copy, Debug)]
pub struct LeF32s<'a> {
    bytes: &'a [u8],
}

impl<'a> LeF32s<'a> {
    /// `bytes`' length must be a multiple of 4.
    fn new(bytes: &'a [u8]) -> Self {
        debug_assert_eq!(bytes.len() % 4, 0);
        LeF32s { bytes }
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Copies the values into `out` (of the same length).
    pub fn copy_to(&self, out: &mut [f32]) {
        assert_eq!(out.len(), self.len(), "LeF32s::copy_to: lengths differ");
        #[cfg(target_endian = "little")]
        bytemuck::cast_slice_mut::<f32, u8>(out).copy_from_slice(self.bytes);
        #[cfg(not(target_endian = "little"))]
        for (o, c) in out.iter_mut().zip(self.bytes.chunks_exact(4)) {
            *o = f32::from_le_bytes(c.try_into().expect("4 bytes"));
        }
    }

    pub fn to_vec(&self) -> Vec<f32> {
        from_le(self.bytes)
    }
}

/// What a worker reports for one round.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundReport {
    pub stage: u32,
    pub round: u32,
    pub partition: u32,
    pub iterations: u32,
    pub minibatches: u32,
    pub examples: u64,
    pub score: f64,
}

impl RoundMessage {
    /// Encodes a message. `params == None`: nothing to contribute this round (no minibatch).
    pub fn encode(report: &RoundReport, params: Option<&[f32]>, updater: Option<&[f32]>) -> Vec<u8> {
        Self::encode_into(Vec::new(), report, params, updater)
    }

    /// [`RoundMessage::encode`] into `out` (cleared first; a spare buffer keeps its capacity).
    pub fn encode_into(mut out: Vec<u8>, report: &RoundReport, params: Option<&[f32]>, updater: Option<&[f32]>) -> Vec<u8> {
        // an empty updater state (plain SGD) is no updater state
        let updater = updater.filter(|u| !u.is_empty());
        let n = params.map_or(0, <[f32]>::len);
        let m = if params.is_some() { updater.map_or(0, <[f32]>::len) } else { 0 };
        let mut flags = 0u8;
        if params.is_some() {
            flags |= FLAG_CONTRIBUTES;
            if updater.is_some() {
                flags |= FLAG_UPDATER;
            }
        }
        out.clear();
        out.resize(HEADER_LEN, 0);
        out.reserve_exact(4 * (n + m));
        out[0] = VERSION;
        out[1] = flags;
        out[2..6].copy_from_slice(&report.stage.to_le_bytes());
        out[6..10].copy_from_slice(&report.round.to_le_bytes());
        out[10..14].copy_from_slice(&report.partition.to_le_bytes());
        out[14..18].copy_from_slice(&report.iterations.to_le_bytes());
        out[18..22].copy_from_slice(&report.minibatches.to_le_bytes());
        out[22..30].copy_from_slice(&report.examples.to_le_bytes());
        out[30..38].copy_from_slice(&report.score.to_le_bytes());
        out[38..42].copy_from_slice(&(n as u32).to_le_bytes());
        out[42..46].copy_from_slice(&(m as u32).to_le_bytes());
        for a in [params, if m > 0 { updater } else { None }].into_iter().flatten() {
            append_le(&mut out, a);
        }
        out
    }

    /// A hello of this worker (`report`'s stage and partition).
    pub fn encode_hello(report: &RoundReport) -> Vec<u8> {
        let mut out = Self::encode(&RoundReport { round: 0, iterations: 0, minibatches: 0, examples: 0, score: 0.0, ..*report }, None, None);
        out[1] = FLAG_HELLO;
        out
    }

    pub fn is_hello(&self) -> bool {
        self.flags & FLAG_HELLO != 0
    }

    /// The driver's receipt of the round message `bytes` (a valid one): its header, flagged.
    pub fn receipt(bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes[..HEADER_LEN].to_vec();
        out[1] |= FLAG_RECEIPT;
        out
    }

    /// The driver's average of round `round` of stage attempt `stage`.
    pub fn encode_average(stage: u32, round: u32, avg: &Average) -> Vec<u8> {
        let report = RoundReport {
            stage,
            round,
            partition: avg.contributors,
            iterations: avg.max_iterations,
            minibatches: u32::try_from(avg.minibatches).unwrap_or(u32::MAX),
            examples: avg.examples,
            score: avg.score,
        };
        let mut out = Self::encode(&report, Some(&avg.params), avg.updater.as_deref());
        out[1] |= FLAG_AVERAGE;
        out
    }

    pub fn is_receipt(&self) -> bool {
        self.flags & FLAG_RECEIPT != 0
    }

    pub fn is_average(&self) -> bool {
        self.flags & FLAG_AVERAGE != 0
    }

    /// The header alone (arrays left empty): what the driver needs of every round but the last.
    pub fn decode_header(bytes: &[u8]) -> Result<RoundMessage, SharingError> {
        Self::parse(bytes)
    }

    /// Decodes (and checks the lengths of) a message, keeping a copy of its bytes.
    pub fn decode(bytes: &[u8]) -> Result<RoundMessage, SharingError> {
        let mut m = Self::parse(bytes)?;
        if m.carries_arrays() {
            m.wire = bytes.to_vec();
        }
        Ok(m)
    }

    /// Decodes a message that is handed over whole: its arrays stay in `bytes`, no copy.
    pub fn decode_owned(bytes: Vec<u8>) -> Result<RoundMessage, SharingError> {
        let mut m = Self::parse(&bytes)?;
        if m.carries_arrays() {
            m.wire = bytes;
        }
        Ok(m)
    }

    /// Whether the message has arrays (a receipt, a hello or "nothing to contribute" has none).
    pub(crate) fn carries_arrays(&self) -> bool {
        self.flags & FLAG_RECEIPT == 0 && self.n_params + self.n_updater > 0
    }

    /// The parameters (empty when only the header was decoded, or nothing was contributed).
    pub fn params(&self) -> LeF32s<'_> {
        self.array(0, self.n_params)
    }

    /// The updater state (empty when only the header was decoded, or none was sent).
    pub fn updater(&self) -> LeF32s<'_> {
        self.array(self.n_params, self.n_updater)
    }

    fn array(&self, from: usize, n: usize) -> LeF32s<'_> {
        if self.wire.is_empty() {
            return LeF32s::new(&[]);
        }
        let start = HEADER_LEN + 4 * from;
        LeF32s::new(&self.wire[start..start + 4 * n])
    }

    /// The message's bytes (empty when only the header was decoded), to reuse the buffer.
    pub fn into_wire(self) -> Vec<u8> {
        self.wire
    }

    /// Checks a whole message (header, flags, lengths) and reads its header.
    fn parse(bytes: &[u8]) -> Result<RoundMessage, SharingError> {
        let bad = |what: String| SharingError::Message(format!("malformed averaging message: {what}"));
        if bytes.len() < HEADER_LEN {
            return Err(bad(format!("{} bytes, shorter than its {HEADER_LEN}-byte header", bytes.len())));
        }
        if bytes[0] != VERSION {
            return Err(bad(format!("version {} (expected {VERSION})", bytes[0])));
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let flags = bytes[1];
        let known = FLAG_CONTRIBUTES | FLAG_UPDATER | FLAG_HELLO | FLAG_AVERAGE | FLAG_RECEIPT;
        if flags & !known != 0
            || (flags & FLAG_HELLO != 0 && flags != FLAG_HELLO)
            || (flags & FLAG_AVERAGE != 0 && flags & (FLAG_RECEIPT | FLAG_CONTRIBUTES) != FLAG_CONTRIBUTES)
        {
            return Err(bad(format!("unknown flags {flags:#04x}")));
        }
        let n_params = u32_at(38) as usize;
        let n_updater = u32_at(42) as usize;
        // a receipt is a header alone, whatever its counts say the message carried
        let expected = if flags & FLAG_RECEIPT != 0 {
            HEADER_LEN as u64
        } else {
            HEADER_LEN as u64 + 4 * (n_params as u64 + n_updater as u64)
        };
        if bytes.len() as u64 != expected {
            return Err(bad(format!(
                "{} bytes for {n_params} parameters and {n_updater} updater values (expected {expected})",
                bytes.len()
            )));
        }
        if (flags & FLAG_CONTRIBUTES == 0) != (n_params == 0) || (flags & FLAG_UPDATER == 0) != (n_updater == 0) {
            return Err(bad(format!("flags {flags:#04x} disagree with {n_params} parameters and {n_updater} updater values")));
        }
        Ok(RoundMessage {
            stage: u32_at(2),
            round: u32_at(6),
            partition: u32_at(10),
            flags,
            iterations: u32_at(14),
            minibatches: u32_at(18),
            examples: u64_at(22),
            score: f64::from_bits(u64_at(30)),
            n_params,
            n_updater,
            wire: Vec::new(),
        })
    }

    pub fn contributes(&self) -> bool {
        self.flags & FLAG_CONTRIBUTES != 0
    }
}

/// Appends `values` as little-endian f32 (a message's arrays are 5 MB for the MNIST MLP: one
/// copy, not a value-by-value conversion into a zeroed buffer, which took 9 % of a round's CPU).
fn append_le(out: &mut Vec<u8>, values: &[f32]) {
    // on a little-endian target an f32's own bytes are its little-endian encoding
    #[cfg(target_endian = "little")]
    out.extend_from_slice(bytemuck::cast_slice(values));
    #[cfg(not(target_endian = "little"))]
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The f32 values of little-endian `bytes` (a multiple of 4 long); one copy (the value-by-value
/// decode took 10 % of a round's CPU on the receiving side).
fn from_le(bytes: &[u8]) -> Vec<f32> {
    let n = bytes.len() / 4;
    #[cfg(target_endian = "little")]
    {
        let mut v = Vec::<f32>::with_capacity(n);
        // SAFETY: the capacity holds n f32, i.e. 4·n bytes, written in full before set_len; every
        // bit pattern is a valid f32, and little-endian wire bytes are the target's own
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), 4 * n);
            v.set_len(n);
        }
        v
    }
    #[cfg(not(target_endian = "little"))]
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect()
}

/// The average of one round over the workers that contributed.
#[derive(Clone, Debug, PartialEq)]
pub struct Average {
    pub params: Vec<f32>,
    /// None unless every contributor sent updater state.
    pub updater: Option<Vec<f32>>,
    pub contributors: u32,
    /// The most iterations one worker made this round (the iteration counter grows by it).
    pub max_iterations: u32,
    pub minibatches: u64,
    pub examples: u64,
    /// Mean of the contributors' last minibatch scores.
    pub score: f64,
}

/// Values a mean reads: an f32 slice, or little-endian f32 where they lie in a received message.
pub trait F32Values: Copy {
    fn count(&self) -> usize;
    /// Value `i`.
    ///
    /// # Safety
    /// `i < self.count()`.
    unsafe fn at(&self, i: usize) -> f32;
}

impl F32Values for &[f32] {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> f32 {
        // SAFETY: the caller keeps i < len
        unsafe { *self.get_unchecked(i) }
    }
}

impl F32Values for LeF32s<'_> {
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> f32 {
        #[cfg(target_endian = "little")]
        // SAFETY: i < len, so bytes 4i..4i+4 lie in the slice; any 4 bytes read unaligned are a
        // valid f32, and little-endian wire bytes are the target's own
        unsafe {
            self.bytes.as_ptr().cast::<f32>().add(i).read_unaligned()
        }
        #[cfg(not(target_endian = "little"))]
        f32::from_le_bytes(self.bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
    }
}

/// Element-wise mean over the contributors (in the given order): sum in f64, divide, round to f32.
fn mean_of<S: F32Values>(arrays: &[S]) -> Vec<f32> {
    let mut out = vec![0f32; arrays[0].count()];
    let sources: Vec<Option<S>> = arrays.iter().map(|a| Some(*a)).collect();
    mean_into(&mut out, &sources);
    out
}

/// `out[i] = (Σ sources[k][i] in order, in f64) / sources.len()`, rounded to f32 — the one
/// arithmetic of the average, on the workers and on the driver. A `None` source is `out`'s own
/// value (a worker's own share, averaged in place into the engine's array: read before it is
/// overwritten). Every source must have `out.len()` values (panics otherwise). Works in blocks so
/// that each source's pass vectorises and the f64 sums stay in cache.
pub fn mean_into<S: F32Values>(out: &mut [f32], sources: &[Option<S>]) {
    let n = out.len();
    for s in sources.iter().flatten() {
        assert_eq!(s.count(), n, "mean_into: a source of {} values for {n} outputs", s.count());
    }
    // two workers (the common case): one fused pass, no f64 block buffer (about half the time for
    // the MNIST MLP's 1.3 M values). f64 addition of two values is commutative, so the result has
    // the bits of the blocked sum in partition order.
    if let [a, b] = sources {
        match (a, b) {
            (Some(x), Some(y)) => {
                for (i, o) in out.iter_mut().enumerate() {
                    // SAFETY: i < n, the length of both sources (checked above)
                    let (x, y) = unsafe { (x.at(i), y.at(i)) };
                    *o = ((f64::from(x) + f64::from(y)) / 2.0) as f32;
                }
            }
            (Some(x), None) | (None, Some(x)) => {
                for (i, o) in out.iter_mut().enumerate() {
                    // SAFETY: i < n = x's length
                    let x = unsafe { x.at(i) };
                    *o = ((f64::from(*o) + f64::from(x)) / 2.0) as f32;
                }
            }
            (None, None) => {} // the mean of out with itself is out
        }
        return;
    }
    mean_blocked(out, sources);
}

/// [`mean_into`]'s general case: the f64 sums in blocks, each source's pass vectorised. Every
/// source has `out.len()` values.
fn mean_blocked<S: F32Values>(out: &mut [f32], sources: &[Option<S>]) {
    const BLOCK: usize = 2048;
    let count = sources.len() as f64;
    let mut acc = [0f64; BLOCK];
    let mut start = 0;
    while start < out.len() {
        let end = (start + BLOCK).min(out.len());
        let o = &mut out[start..end];
        let acc = &mut acc[..end - start];
        for (k, s) in sources.iter().enumerate() {
            // SAFETY (both reads): start + j < end <= out.len(), every source's length
            let x = |j: usize| match s {
                Some(a) => unsafe { a.at(start + j) },
                None => o[j],
            };
            // two sources: x + y; otherwise 0 + x + y + ... (the order the driver's sum always had)
            if k == 0 && sources.len() == 2 {
                for (j, a) in acc.iter_mut().enumerate() {
                    *a = f64::from(x(j));
                }
            } else {
                if k == 0 {
                    acc.fill(0.0);
                }
                for (j, a) in acc.iter_mut().enumerate() {
                    *a += f64::from(x(j));
                }
            }
        }
        for (x, a) in o.iter_mut().zip(acc.iter()) {
            *x = (*a / count) as f32;
        }
        start = end;
    }
}

/// Averages one round: the contributors' arrays summed in partition order in f64, divided by
/// their number, rounded to f32 (what the driver-side average of the per-split design does).
/// `None` when no worker contributed. Messages of one round from every worker, any order.
pub fn average(messages: &[&RoundMessage]) -> Result<Option<Average>, SharingError> {
    let mut contributors: Vec<&RoundMessage> = messages.iter().copied().filter(|m| m.contributes()).collect();
    contributors.sort_by_key(|m| m.partition);
    let Some(first) = contributors.first() else {
        return Ok(None);
    };
    let n = first.n_params;
    if let Some(m) = contributors.iter().find(|m| m.n_params != n) {
        return Err(SharingError::Message(format!(
            "workers sent parameters of different lengths in round {}: partition {} has {n}, partition {} has {}",
            first.round, first.partition, m.partition, m.n_params
        )));
    }
    let with_updater = contributors.iter().all(|m| m.n_updater > 0 && m.n_updater == first.n_updater);
    let count = contributors.len();
    if let Some(m) = contributors.iter().find(|m| m.params().len() != n || (with_updater && m.updater().len() != first.n_updater)) {
        return Err(SharingError::Message(format!(
            "the averaging message of partition {} in round {} has only its header", m.partition, m.round
        )));
    }
    let params = mean_of(&contributors.iter().map(|m| m.params()).collect::<Vec<_>>());
    let updater = with_updater.then(|| mean_of(&contributors.iter().map(|m| m.updater()).collect::<Vec<_>>()));
    Ok(Some(Average {
        params,
        updater,
        contributors: count as u32,
        max_iterations: contributors.iter().map(|m| m.iterations).max().unwrap_or(0),
        minibatches: messages.iter().map(|m| u64::from(m.minibatches)).sum(),
        examples: messages.iter().map(|m| m.examples).sum(),
        score: contributors.iter().map(|m| m.score).sum::<f64>() / count as f64,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(partition: u32, params: Option<&[f32]>, updater: Option<&[f32]>, iterations: u32, score: f64) -> RoundMessage {
        let r = RoundReport { stage: 0, round: 3, partition, iterations, minibatches: iterations, examples: 8, score };
        RoundMessage::decode(&RoundMessage::encode(&r, params, updater)).unwrap()
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let r = RoundReport { stage: 2, round: 7, partition: 5, iterations: 11, minibatches: 10, examples: 320, score: 0.25 };
        let m = RoundMessage::decode(&RoundMessage::encode(&r, Some(&[1.5, -2.0]), Some(&[0.5]))).unwrap();
        assert_eq!((m.stage, m.round, m.partition, m.iterations, m.minibatches, m.examples), (2, 7, 5, 11, 10, 320));
        assert_eq!(m.score, 0.25);
        assert_eq!(m.params().to_vec(), vec![1.5, -2.0]);
        assert_eq!(m.updater().to_vec(), vec![0.5]);
        let sgd = RoundMessage::decode(&RoundMessage::encode(&r, Some(&[1.0]), Some(&[]))).unwrap();
        assert_eq!((sgd.flags, sgd.n_updater), (FLAG_CONTRIBUTES, 0));
        let empty = RoundMessage::decode(&RoundMessage::encode(&r, None, Some(&[0.5]))).unwrap();
        assert!(!empty.contributes() && !empty.is_hello());
        let hello = RoundMessage::decode(&RoundMessage::encode_hello(&r)).unwrap();
        assert!(hello.is_hello() && !hello.contributes());
        assert_eq!((hello.stage, hello.partition, hello.round), (2, 5, 0));
        assert_eq!((empty.n_params, empty.n_updater), (0, 0));
    }

    /// The arrays travel as little-endian f32, every bit kept (NaN payloads, -0.0, subnormals),
    /// whatever the copy the target uses.
    #[test]
    fn arrays_are_little_endian_bit_for_bit() {
        let params: Vec<f32> = [f32::from_bits(0x7fc0_1234), -0.0, f32::from_bits(1), 1.0e-40, f32::MAX, -3.25, 7.0]
            .into_iter()
            .cycle()
            .take(1001)
            .collect();
        let updater: Vec<f32> = (0..333u32).map(|i| f32::from_bits(0x3f80_0000 ^ i.wrapping_mul(2_654_435_761))).collect();
        let r = RoundReport { stage: 1, round: 2, partition: 0, iterations: 1, minibatches: 1, examples: 1, score: 0.0 };
        let bytes = RoundMessage::encode(&r, Some(&params), Some(&updater));
        let wire: Vec<u8> = params.iter().chain(&updater).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(&bytes[HEADER_LEN..], &wire[..]);
        let m = RoundMessage::decode(&bytes).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&m.params().to_vec()), bits(&params));
        assert_eq!(bits(&m.updater().to_vec()), bits(&updater));
    }

    #[test]
    fn malformed_messages_are_refused_naming_the_problem() {
        let r = RoundReport::default();
        let good = RoundMessage::encode(&r, Some(&[1.0, 2.0]), None);
        let short = RoundMessage::decode(&good[..good.len() - 1]).unwrap_err().to_string();
        assert!(short.contains("expected 54"), "{short}");
        let mut v = good.clone();
        v[0] = 9;
        assert!(RoundMessage::decode(&v).unwrap_err().to_string().contains("version 9"));
        let mut f = good;
        f[1] = 0x80;
        assert!(RoundMessage::decode(&f).unwrap_err().to_string().contains("unknown flags"));
        assert!(RoundMessage::decode(&[1; 10]).unwrap_err().to_string().contains("header"));
    }

    #[test]
    fn average_is_the_partition_ordered_f64_mean_of_contributors() {
        let a = msg(1, Some(&[1.0, 0.1]), Some(&[2.0]), 3, 1.0);
        let b = msg(0, Some(&[2.0, 0.2]), Some(&[4.0]), 5, 3.0);
        let idle = msg(2, None, None, 0, f64::NAN);
        let avg = average(&[&a, &idle, &b]).unwrap().unwrap();
        let expect = |x: f32, y: f32| ((f64::from(x) + f64::from(y)) / 2.0) as f32;
        assert_eq!(avg.params, vec![expect(2.0, 1.0), expect(0.2, 0.1)]);
        assert_eq!(avg.updater, Some(vec![3.0]));
        assert_eq!((avg.contributors, avg.max_iterations, avg.minibatches, avg.examples), (2, 5, 8, 24));
        assert_eq!(avg.score, 2.0);
        // any arrival order gives the same bits
        assert_eq!(average(&[&b, &a, &idle]).unwrap().unwrap(), avg);
        // one worker: its own arrays exactly
        let one = average(&[&a]).unwrap().unwrap();
        assert_eq!(one.params, vec![1.0, 0.1]);
        assert!(average(&[&idle]).unwrap().is_none());
    }

    /// In place (a worker's own share read from the engine's array) gives the same bits as the
    /// driver's average of copies, for two and three contributors and across block boundaries.
    #[test]
    fn mean_into_in_place_equals_the_mean_of_copies() {
        let n = 5000;
        let arrays: Vec<Vec<f32>> =
            (0..3).map(|k| (0..n).map(|i| ((i * 7 + k * 13) % 101) as f32 * 0.37 - 11.0 + k as f32 * 1e-7).collect()).collect();
        for w in [2usize, 3] {
            let refs: Vec<&[f32]> = arrays[..w].iter().map(|a| &a[..]).collect();
            let expect = mean_of(&refs);
            for own in 0..w {
                let mut out = arrays[own].clone();
                let sources: Vec<Option<&[f32]>> =
                    (0..w).map(|k| if k == own { None } else { Some(&arrays[k][..]) }).collect();
                mean_into(&mut out, &sources);
                assert_eq!(out, expect, "{w} workers, own share at position {own}");
            }
        }
        // three sources in order: (0 + a + b + c) / 3 in f64
        let mut out = vec![0f32; 1];
        mean_into(&mut out, &[Some(&[1e8][..]), Some(&[1.0][..]), Some(&[-1e8][..])]);
        assert_eq!(out[0], ((1e8f64 + 1.0 - 1e8) / 3.0) as f32);
    }

    /// The fused two-worker pass has the bits of the blocked sum in partition order, own share
    /// first or second, across block boundaries and where rounding to f32 matters.
    #[test]
    fn two_workers_fused_pass_equals_the_blocked_sum() {
        let n = 5000;
        let a: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1013) as f32 * 1.37e3 - 7e5 + (i % 3) as f32 * 1e-4).collect();
        let b: Vec<f32> = (0..n).map(|i| if i % 5 == 0 { 1e8 } else { ((i * 31) % 97) as f32 * -0.013 + 3e-8 }).collect();
        let mut expect = vec![0f32; n];
        mean_blocked(&mut expect, &[Some(&a[..]), Some(&b[..])]);
        let mut out = vec![0f32; n];
        mean_into(&mut out, &[Some(&a[..]), Some(&b[..])]);
        assert_eq!(out, expect);
        for own_first in [true, false] {
            let mut out = a.clone();
            let mut blocked = a.clone();
            let sources: [Option<&[f32]>; 2] = if own_first { [None, Some(&b)] } else { [Some(&b), None] };
            mean_into(&mut out, &sources);
            mean_blocked(&mut blocked, &sources);
            assert_eq!(out, blocked, "own share first: {own_first}");
        }
        let mut same = a.clone();
        mean_into::<&[f32]>(&mut same, &[None, None]);
        assert_eq!(same, a);
    }

    #[test]
    fn updater_is_averaged_only_when_every_contributor_sent_it() {
        let a = msg(0, Some(&[1.0]), Some(&[2.0]), 1, 0.0);
        let b = msg(1, Some(&[3.0]), None, 1, 0.0);
        let avg = average(&[&a, &b]).unwrap().unwrap();
        assert_eq!(avg.params, vec![2.0]);
        assert_eq!(avg.updater, None);
        let c = msg(2, Some(&[1.0, 2.0]), None, 1, 0.0);
        let e = average(&[&a, &c]).unwrap_err().to_string();
        assert!(e.contains("different lengths") && e.contains("partition 2 has 2"), "{e}");
    }

    #[test]
    fn receipts_and_averages_round_trip_and_bad_flags_are_refused() {
        let r = RoundReport { stage: 1, round: 2, partition: 1, iterations: 3, minibatches: 3, examples: 9, score: 0.5 };
        let bytes = RoundMessage::encode(&r, Some(&[1.0, 2.0]), Some(&[3.0]));
        let rc = RoundMessage::decode(&RoundMessage::receipt(&bytes)).unwrap();
        assert!(rc.is_receipt() && rc.contributes() && !rc.is_average());
        assert_eq!((rc.n_params, rc.n_updater, rc.partition, rc.round, rc.stage), (2, 1, 1, 2, 1));
        assert!(rc.params().is_empty() && rc.updater().is_empty());
        let a = average(&[&RoundMessage::decode(&bytes).unwrap()]).unwrap().unwrap();
        let am = RoundMessage::decode(&RoundMessage::encode_average(1, 2, &a)).unwrap();
        assert!(am.is_average() && !am.is_receipt());
        assert_eq!((am.params().to_vec(), am.updater().to_vec()), (vec![1.0, 2.0], vec![3.0]));
        assert_eq!((am.partition, am.iterations, am.examples, am.score), (1, 3, 9, 0.5));
        // a receipt carries no arrays; an average carries parameters and is not a receipt
        let mut with_arrays = RoundMessage::receipt(&bytes);
        with_arrays.extend_from_slice(&[0; 12]);
        assert!(RoundMessage::decode(&with_arrays).unwrap_err().to_string().contains("bytes for 2 parameters"));
        let mut empty_average = RoundMessage::encode(&r, None, None);
        empty_average[1] = FLAG_AVERAGE;
        assert!(RoundMessage::decode(&empty_average).unwrap_err().to_string().contains("unknown flags 0x08"));
        let mut both = RoundMessage::receipt(&bytes);
        both[1] |= FLAG_AVERAGE;
        assert!(RoundMessage::decode(&both).unwrap_err().to_string().contains("unknown flags"));
    }
}
