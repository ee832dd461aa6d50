//! ferrodl-comm: threshold encoding of parameter updates (Strom, Interspeech 2015), no JNI.
//!
//! Each worker adds its update (after the optimizer) to a residual, sends only the entries whose
//! magnitude reaches a threshold `t`, each as `±t`, and subtracts what it sent from the residual,
//! so nothing is lost, only delayed. Receivers add the decoded message to their copy of the
//! parameters with the scale they need (`-1` to apply an update).
//!
//! * [`codec`]: the wire format (also in `docs/UPDATE_FORMAT.md`), [`encode`], [`read_header`]
//!   and the validating [`decode_add`]; [`rice`]: the Golomb–Rice bit coding of its compact
//!   sparse kind.
//! * [`threshold`]: how `t` is chosen (Adaptive, TargetSparsity, Fixed) and the state carried
//!   between fits.
//! * [`residual`]: what happens to the residual after each encode (clipping or nothing).
//! * [`encoder`]: [`ThresholdEncoder`], the worker-side combination of the three.
//!
//! Two quirks of the reference are fixed: positive and negative entries are treated identically
//! in both encodings, and the residual is modified once, after the encoding has been chosen, so
//! `decoded + new residual == old residual + update` holds (to `f32` rounding) on every path.

pub mod codec;
pub mod encoder;
pub mod error;
mod json;
pub mod residual;
pub mod rice;
pub mod threshold;
pub mod varint;

pub use codec::{
    bitmap_words, choose_encoding, decode_add, encode, encode_as, parse_header, read_header,
    EncodeStats, Encoding, Header, HEADER_LEN, MAGIC, MAX_HEADER_LEN, MIN_HEADER_LEN,
    MIN_READ_VERSION, VERSION,
};
pub use encoder::{EncoderDebugStats, ThresholdEncoder};
pub use error::{CodecError, ConfigError, VectorKind};
pub use residual::{
    NoOpResidualPostProcessor, ResidualClippingPostProcessor, ResidualPostProcessor,
    ResidualPostProcessorConfig,
};
pub use threshold::{
    average_states, calibrate, sparsity_floor, try_average_states, AdaptiveConfig, AdaptiveThreshold, FixedConfig,
    FixedThreshold, StepRule, SteppedThreshold, TargetSparsityConfig, TargetSparsityThreshold,
    ThresholdAlgorithm, ThresholdAlgorithmConfig, ThresholdState, DEFAULT_DECAY_RATE,
    MAX_THRESHOLD, MIN_ENTRIES, MIN_THRESHOLD, TARGET_SPARSITY_GAIN, TARGET_SPARSITY_WINDOW,
};
