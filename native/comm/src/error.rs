//! Errors of the codec, the encoder and the configuration parsers.
//!
//! Every message names the problem concretely (which field, which index, which sizes), because
//! these errors surface on the JVM side far from the code that produced them.

use std::fmt;

/// Which input vector a non-finite value was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorKind {
    /// The new update handed to the encoder.
    Update,
    /// The residual handed to [`crate::encode`].
    Residual,
}

impl fmt::Display for VectorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VectorKind::Update => "update",
            VectorKind::Residual => "residual",
        })
    }
}

/// A threshold-algorithm, post-processor or threshold-state configuration that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// What was being read: "threshold algorithm", "residual post-processor", "threshold state".
    pub context: &'static str,
    /// The problem, naming the field where there is one.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(context: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            context,
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.context, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Everything that can go wrong while encoding or decoding an update message.
///
/// Errors about a received message are prefixed with "update message: " when displayed.
#[derive(Clone, Debug, PartialEq)]
pub enum CodecError {
    /// The threshold given to `encode` is NaN, infinite, zero or negative.
    InvalidThreshold(f32),
    /// `scale * threshold` in `decode_add` is NaN or infinite.
    InvalidScale {
        scale: f32,
        threshold: f32,
    },
    /// A NaN or infinite value; nothing was encoded and the residual is unchanged.
    NonFinite {
        vector: VectorKind,
        index: usize,
        value: f32,
    },
    /// `residual + update` overflowed to infinity; nothing was encoded, the residual is unchanged.
    Overflow {
        index: usize,
        residual: f32,
        update: f32,
    },
    /// A broken internal invariant of the encoder (a bug, reported instead of a panic); the
    /// encoder's residual may have changed.
    Internal(&'static str),
    /// The update handed to the encoder does not have the encoder's parameter count.
    UpdateLength {
        expected: usize,
        actual: usize,
    },
    /// Fewer bytes than the header (or, once the header is read, the header's payload) needs.
    /// `exact`: the header fixes the size (bitmap, sparse); otherwise `needed` is a minimum (Rice).
    Truncated {
        len: usize,
        needed: u64,
        header_read: bool,
        exact: bool,
    },
    /// More bytes than the header's payload (`exact`: its size; otherwise its largest size).
    TrailingBytes {
        len: usize,
        expected: u64,
        exact: bool,
    },
    BadMagic([u8; 4]),
    UnsupportedVersion(u16),
    /// The first byte is neither version 3 nor the `F` of the version 1/2 magic.
    UnknownFormat(u8),
    /// A version 3 count that is not a minimal LEB128 varint of at most 10 bytes (the field).
    BadVarint(&'static str),
    /// A kind byte this version does not define.
    UnknownKind {
        kind: u8,
        version: u16,
    },
    /// A Rice parameter above 63, a non-zero parameter byte for another kind, or a non-zero
    /// parameter in a Rice message without entries.
    BadRiceParameter {
        k: u8,
        kind: crate::codec::Encoding,
    },
    /// The Rice payload ends inside entry `entry` (of `entry_count`).
    RiceTruncated {
        entry: u64,
        entry_count: u64,
    },
    /// A unary quotient longer than the positions left allow (at least `at_least`, at most `max`).
    RiceUnaryTooLong {
        entry: u64,
        at_least: u64,
        max: u64,
    },
    /// A gap that takes the position to `param_count` or beyond.
    RiceGapPastEnd {
        entry: u64,
        position: u64,
        param_count: u64,
    },
    /// Whole bytes after the last Rice entry.
    RiceTrailingBytes {
        used: u64,
        len: u64,
    },
    /// Non-zero bits after the last Rice entry in its last byte.
    RicePaddingBits,
    /// `encode_as` was asked for a kind this build reads but does not write.
    NotWritable(crate::codec::Encoding),
    NonZeroFlags(u8),
    NonZeroReserved(u32),
    /// The header's threshold is NaN, infinite, zero or negative.
    BadHeaderThreshold(f32),
    /// More entries than parameters (impossible in a valid message).
    EntryCountTooLarge {
        entry_count: u64,
        param_count: u64,
    },
    /// The message's param_count is not the length of the vector it is applied to.
    ParamCountMismatch {
        message: u64,
        target: usize,
    },
    /// A sparse index is 0, `i32::MIN`, or beyond `param_count`.
    IndexOutOfRange {
        entry: u64,
        index: i32,
        param_count: u64,
    },
    /// Sparse indices must have strictly increasing magnitudes.
    NotIncreasing {
        entry: u64,
        previous: i32,
        index: i32,
    },
    /// A bitmap code `11`.
    InvalidCode {
        parameter: u64,
    },
    /// Bits set in the last bitmap word beyond `param_count`.
    PaddingBits {
        word: u64,
    },
    /// The bitmap holds a different number of entries than the header says.
    EntryCountMismatch {
        header: u64,
        actual: u64,
    },
    /// A bad threshold-algorithm, post-processor or state configuration.
    Config(ConfigError),
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CodecError::*;
        match self {
            InvalidThreshold(t) => write!(f, "encoding threshold {t} is not a finite number > 0"),
            InvalidScale { scale, threshold } => write!(
                f,
                "decode scale {scale} times the message's threshold {threshold} is not a finite number"
            ),
            NonFinite {
                vector,
                index,
                value,
            } => write!(
                f,
                "{vector} entry {index} is {value}; nothing was encoded and the residual is unchanged"
            ),
            Overflow {
                index,
                residual,
                update,
            } => write!(
                f,
                "residual entry {index} overflows: {residual} + update {update} is not finite; \
                 nothing was encoded and the residual is unchanged"
            ),
            Internal(what) => write!(f, "internal error in the threshold encoder: {what}"),
            UpdateLength { expected, actual } => write!(
                f,
                "update has {actual} entries but the encoder has {expected} parameters"
            ),
            Truncated {
                len,
                needed,
                header_read: false,
                ..
            } => write!(
                f,
                "update message: truncated: {len} bytes, the header needs {needed}"
            ),
            Truncated {
                len,
                needed,
                header_read: true,
                exact,
            } => write!(
                f,
                "update message: truncated: {len} bytes, header says {}{needed}",
                if *exact { "" } else { "at least " }
            ),
            TrailingBytes {
                len,
                expected,
                exact,
            } => write!(
                f,
                "update message: {len} bytes, header says {}{expected} ({} unexpected trailing bytes)",
                if *exact { "" } else { "at most " },
                *len as u64 - expected
            ),
            BadMagic(m) => write!(
                f,
                "update message: bad magic {m:02x?} (expected \"FRDU\"); not a ferrodl update"
            ),
            UnsupportedVersion(v) => write!(
                f,
                "update message: unsupported version {v} (this build reads 1 and 2 after the \"FRDU\" magic, and 3)"
            ),
            UnknownFormat(b) => write!(
                f,
                "update message: first byte {b:#04x} is neither version 3 (0x03) nor the \"FRDU\" \
                 magic of versions 1 and 2; not a ferrodl update"
            ),
            BadVarint(field) => write!(
                f,
                "update message: {field} is not a minimal LEB128 varint of at most 10 bytes"
            ),
            UnknownKind { kind, version: 1 } => write!(
                f,
                "update message: unknown encoding kind {kind} for version 1 (0 = sparse, 1 = bitmap)"
            ),
            UnknownKind { kind, version: 3 } => write!(
                f,
                "update message: unknown encoding kind {kind} for version 3 (1 = bitmap, 2 = rice)"
            ),
            UnknownKind { kind, version } => write!(
                f,
                "update message: unknown encoding kind {kind} for version {version} \
                 (0 = sparse, 1 = bitmap, 2 = rice)"
            ),
            BadRiceParameter { k, kind } => match kind {
                crate::codec::Encoding::Rice => write!(
                    f,
                    "update message: bad Rice parameter {k} (0..=63, and 0 when there are no entries)"
                ),
                other => write!(
                    f,
                    "update message: Rice parameter byte is {k} in a {other:?} message; it must be 0"
                ),
            },
            RiceTruncated { entry, entry_count } => write!(
                f,
                "update message: Rice payload ends inside entry {entry} of {entry_count}"
            ),
            RiceUnaryTooLong {
                entry,
                at_least,
                max,
            } => write!(
                f,
                "update message: Rice entry {entry} has a unary quotient of at least {at_least}, \
                 more than the {max} the remaining positions allow"
            ),
            RiceGapPastEnd {
                entry,
                position,
                param_count,
            } => write!(
                f,
                "update message: Rice entry {entry} lands on position {position}, \
                 outside 0..{param_count}"
            ),
            RiceTrailingBytes { used, len } => write!(
                f,
                "update message: the Rice entries end after {used} payload bytes but the payload \
                 has {len}"
            ),
            NotWritable(kind) => write!(
                f,
                "the {kind:?} encoding is read but no longer written; use Rice or Bitmap"
            ),
            RicePaddingBits => write!(
                f,
                "update message: non-zero padding bits after the last Rice entry"
            ),
            NonZeroFlags(x) => write!(
                f,
                "update message: flags byte is {x:#04x}; it is reserved and must be 0"
            ),
            NonZeroReserved(x) => write!(
                f,
                "update message: reserved word is {x:#010x}; it must be 0"
            ),
            BadHeaderThreshold(t) => write!(
                f,
                "update message: threshold {t} is not a finite number > 0"
            ),
            EntryCountTooLarge {
                entry_count,
                param_count,
            } => write!(
                f,
                "update message: entry_count {entry_count} exceeds param_count {param_count}"
            ),
            ParamCountMismatch { message, target } => write!(
                f,
                "update message: param_count {message} does not match the target's {target} parameters"
            ),
            IndexOutOfRange {
                entry,
                index,
                param_count,
            } => write!(
                f,
                "update message: sparse entry {entry} has index {index}, outside ±1..={param_count}"
            ),
            NotIncreasing {
                entry,
                previous,
                index,
            } => write!(
                f,
                "update message: sparse entry {entry} has index {index} after {previous}; \
                 index magnitudes must be strictly increasing"
            ),
            InvalidCode { parameter } => write!(
                f,
                "update message: invalid bitmap code 11 for parameter {parameter}"
            ),
            PaddingBits { word } => write!(
                f,
                "update message: bitmap word {word} has bits set beyond param_count"
            ),
            EntryCountMismatch { header, actual } => write!(
                f,
                "update message: header says {header} entries but the bitmap holds {actual}"
            ),
            Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CodecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CodecError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ConfigError> for CodecError {
    fn from(e: ConfigError) -> Self {
        CodecError::Config(e)
    }
}
