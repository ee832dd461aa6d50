//! Input types and per-example activation shapes, and the output-size rules of convolution and
//! pooling (ARCHITECTURE.md §2.1).

use serde::{Deserialize, Serialize};

use super::enums::{ConvolutionMode, RnnFormat};

/// What the network's input looks like (the reference's `InputType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum InputType {
    FeedForward {
        size: usize,
    },
    #[serde(rename_all = "camelCase")]
    Convolutional {
        height: usize,
        width: usize,
        channels: usize,
    },
    /// Images given as flat rows of `depth·height·width` values (e.g. MNIST's 784 columns).
    #[serde(rename_all = "camelCase")]
    ConvolutionalFlat {
        height: usize,
        width: usize,
        depth: usize,
    },
    /// `timeSeriesLength` 0 (or absent): unknown, any length per minibatch.
    #[serde(rename_all = "camelCase")]
    Recurrent {
        size: usize,
        #[serde(default)]
        time_series_length: usize,
        #[serde(default, skip_serializing_if = "RnnFormat::is_ncw")]
        format: RnnFormat,
    },
}

impl InputType {
    /// The per-example shape this input type describes.
    pub fn shape(&self) -> Shape {
        match *self {
            InputType::FeedForward { size } => Shape::Flat(size),
            InputType::Convolutional {
                height,
                width,
                channels,
            } => Shape::Image {
                c: channels,
                h: height,
                w: width,
            },
            InputType::ConvolutionalFlat {
                height,
                width,
                depth,
            } => Shape::Image {
                c: depth,
                h: height,
                w: width,
            },
            InputType::Recurrent {
                size,
                time_series_length,
                ..
            } => Shape::Seq {
                c: size,
                len: time_series_length,
            },
        }
    }
}

/// The shape of one example's activations; every example is one contiguous row of `len()`
/// values (images NCHW, sequences `[C, L]`, the reference's NCW).
///
/// A sequence's `len` is its configured length; 0 means unknown. The length of each minibatch is
/// carried by the batch descriptor (`Batch::time_steps`), so a row holds
/// [`width(time_steps)`](Self::width) values: layers that work on any length use that, layers
/// that need the configured length (1-D convolution and pooling) refuse others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Flat(usize),
    Image { c: usize, h: usize, w: usize },
    Seq { c: usize, len: usize },
}

impl Shape {
    /// Values per example.
    pub fn len(&self) -> usize {
        match *self {
            Shape::Flat(n) => n,
            Shape::Image { c, h, w } => c * h * w,
            Shape::Seq { c, len } => c * len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values per example for `time_steps` steps (sequences; other shapes ignore it).
    pub fn width(&self, time_steps: usize) -> usize {
        match *self {
            Shape::Seq { c, .. } => c * time_steps,
            _ => self.len(),
        }
    }

    /// A sequence (has a time axis).
    pub fn is_seq(&self) -> bool {
        matches!(self, Shape::Seq { .. })
    }

    /// Channels of an image/sequence, or the width of a flat shape.
    pub fn channels(&self) -> usize {
        match *self {
            Shape::Flat(n) => n,
            Shape::Image { c, .. } | Shape::Seq { c, .. } => c,
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Shape::Flat(n) => write!(f, "feed-forward [{n}]"),
            Shape::Image { c, h, w } => write!(f, "convolutional [C={c}, H={h}, W={w}]"),
            Shape::Seq { c, len: 0 } => write!(f, "recurrent [C={c}, any length]"),
            Shape::Seq { c, len } => write!(f, "recurrent [C={c}, L={len}]"),
        }
    }
}

/// Output length and padding of one spatial dimension of a convolution or pooling window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub out: usize,
    /// Zeros (or ignored cells, for pooling) before the first input element.
    pub pad_before: usize,
    /// Padding after the last input element that the output actually reads.
    pub pad_after: usize,
}

/// Sizes one dimension: input length `input`, kernel `k`, stride `s`, explicit padding `p`,
/// dilation `d`. Errors are phrased for `"<dimension name>"` and returned as text for the caller
/// to prefix with the layer's description.
pub fn window(
    dim: &str,
    input: usize,
    k: usize,
    s: usize,
    p: usize,
    d: usize,
    mode: ConvolutionMode,
) -> Result<Window, String> {
    if k == 0 || s == 0 || d == 0 {
        return Err(format!(
            "kernel size, stride and dilation must be at least 1 (got kernel {k}, stride {s}, \
             dilation {d} in {dim})"
        ));
    }
    let k_eff = d * (k - 1) + 1;
    match mode {
        ConvolutionMode::Same => {
            // Output ceil(in/s); total padding so that the last window ends at the padded edge,
            // the odd element going after (bottom/right).
            let out = input.div_ceil(s);
            let total = ((out - 1) * s + k_eff).saturating_sub(input);
            Ok(Window {
                out,
                pad_before: total / 2,
                pad_after: total - total / 2,
            })
        }
        ConvolutionMode::Causal => Ok(Window {
            out: input.div_ceil(s),
            pad_before: k_eff - 1,
            pad_after: 0,
        }),
        ConvolutionMode::Truncate | ConvolutionMode::Strict => {
            let padded = input + 2 * p;
            if k_eff > padded {
                return Err(format!(
                    "kernel {k} (dilation {d}, effective {k_eff}) is larger than the {dim} of the \
                     input ({input}) plus padding 2×{p}"
                ));
            }
            let span = padded - k_eff;
            if mode == ConvolutionMode::Strict && !span.is_multiple_of(s) {
                return Err(format!(
                    "ConvolutionMode.Strict: (input {dim} {input} + 2×padding {p} − effective \
                     kernel {k_eff}) = {span} is not divisible by stride {s}; use Truncate or \
                     Same, or change kernel/stride/padding"
                ));
            }
            let out = span / s + 1;
            // The last window ends at (out-1)s + k_eff - 1 in padded coordinates.
            let used_end = (out - 1) * s + k_eff;
            Ok(Window {
                out,
                pad_before: p,
                pad_after: used_end.saturating_sub(input + p),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_same_and_strict_sizes() {
        let w = window("height", 28, 5, 1, 0, 1, ConvolutionMode::Truncate).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (24, 0, 0));
        // 24 -> 2x2 stride 2 -> 12
        let w = window("height", 24, 2, 2, 0, 1, ConvolutionMode::Truncate).unwrap();
        assert_eq!(w.out, 12);
        // Truncate drops the last row: (7 - 2)/2 + 1 = 3
        let w = window("height", 7, 2, 2, 0, 1, ConvolutionMode::Truncate).unwrap();
        assert_eq!(w.out, 3);
        assert!(window("height", 7, 2, 2, 0, 1, ConvolutionMode::Strict)
            .unwrap_err()
            .contains("not divisible by stride 2"));
        // Same: ceil(7/2) = 4, total padding (3*2 + 2) - 7 = 1, after.
        let w = window("width", 7, 2, 2, 0, 1, ConvolutionMode::Same).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (4, 0, 1));
        // Same with 3x3 stride 1: out 5, pad 1 + 1
        let w = window("width", 5, 3, 1, 0, 1, ConvolutionMode::Same).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (5, 1, 1));
        // dilation 2, kernel 3 -> effective 5: (9 - 5)/1 + 1 = 5
        let w = window("width", 9, 3, 1, 0, 2, ConvolutionMode::Truncate).unwrap();
        assert_eq!(w.out, 5);
        // padding 1, kernel 3, stride 2 on 6: (6 + 2 - 3)/2 + 1 = 3; last window ends at 2*2+3=7
        // in padded coords = input + p, so nothing after.
        let w = window("width", 6, 3, 2, 1, 1, ConvolutionMode::Truncate).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (3, 1, 0));
        let w = window("width", 5, 3, 2, 1, 1, ConvolutionMode::Truncate).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (3, 1, 1));
        assert!(window("height", 3, 5, 1, 0, 1, ConvolutionMode::Truncate)
            .unwrap_err()
            .contains("larger than the height"));
        assert!(window("height", 3, 0, 1, 0, 1, ConvolutionMode::Truncate).is_err());
        // Causal: kernel 3 dilation 2 -> 4 zeros before; stride 2 on 9 -> 5 outputs, the last
        // window [8-4, 8] ends at the last input.
        let w = window("length", 9, 3, 2, 0, 2, ConvolutionMode::Causal).unwrap();
        assert_eq!((w.out, w.pad_before, w.pad_after), (5, 4, 0));
    }
}
