//! Shape changes without arithmetic: the CNN <-> feed-forward preprocessors (as a
//! `PreprocessorVertex` or a `LayerVertex`'s `preProcessor`) and `ReshapeVertex`. Rows are
//! C-major per example, so every one of them keeps the values in place; only the shape the next
//! vertex sees changes.

use super::Vertex;
use crate::config::Shape;
use ferrodl_tensor::Scalar;
use serde::{Deserialize, Serialize};

/// The reference's `InputPreProcessor`s.
///
/// The recurrent ones: a feed-forward layer on a sequence applies at every time step, so
/// `RnnToFeedForwardPreProcessor` (before it) and `FeedForwardToRnnPreProcessor` (after it) leave
/// the sequence as it is — the reference's `[N·T, C]` reshaping is what the per-step layer does
/// internally. `RnnToCnnPreProcessor` / `CnnToRnnPreProcessor` open and close a region whose
/// layers run at every time step (`config::validate::region_input`, for both network kinds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum PreProcessorConfig {
    #[serde(rename_all = "camelCase")]
    RnnToFeedForwardPreProcessor {
        #[serde(default)]
        rnn_data_format: crate::config::RnnFormat,
    },
    #[serde(rename_all = "camelCase")]
    FeedForwardToRnnPreProcessor {
        #[serde(default)]
        rnn_data_format: crate::config::RnnFormat,
    },
    #[serde(rename_all = "camelCase")]
    CnnToRnnPreProcessor {
        input_height: usize,
        input_width: usize,
        num_channels: usize,
        #[serde(default)]
        rnn_data_format: crate::config::RnnFormat,
    },
    #[serde(rename_all = "camelCase")]
    RnnToCnnPreProcessor {
        input_height: usize,
        input_width: usize,
        num_channels: usize,
        #[serde(default)]
        rnn_data_format: crate::config::RnnFormat,
    },
    #[serde(rename_all = "camelCase")]
    CnnToFeedForwardPreProcessor {
        input_height: usize,
        input_width: usize,
        num_channels: usize,
    },
    #[serde(rename_all = "camelCase")]
    FeedForwardToCnnPreProcessor {
        input_height: usize,
        input_width: usize,
        num_channels: usize,
    },
}

impl PreProcessorConfig {
    pub fn type_name(&self) -> &'static str {
        match self {
            PreProcessorConfig::CnnToFeedForwardPreProcessor { .. } => {
                "CnnToFeedForwardPreProcessor"
            }
            PreProcessorConfig::FeedForwardToCnnPreProcessor { .. } => {
                "FeedForwardToCnnPreProcessor"
            }
            PreProcessorConfig::RnnToFeedForwardPreProcessor { .. } => {
                "RnnToFeedForwardPreProcessor"
            }
            PreProcessorConfig::FeedForwardToRnnPreProcessor { .. } => {
                "FeedForwardToRnnPreProcessor"
            }
            PreProcessorConfig::CnnToRnnPreProcessor { .. } => "CnnToRnnPreProcessor",
            PreProcessorConfig::RnnToCnnPreProcessor { .. } => "RnnToCnnPreProcessor",
        }
    }

    /// The `rnnDataFormat` of a preprocessor with a recurrent side, and whether that side is
    /// its input (`RnnTo...`: it reads a sequence) rather than its output (`...ToRnn`).
    pub fn sequence_side(&self) -> Option<(crate::config::RnnFormat, bool)> {
        match *self {
            PreProcessorConfig::RnnToFeedForwardPreProcessor { rnn_data_format }
            | PreProcessorConfig::RnnToCnnPreProcessor { rnn_data_format, .. } => {
                Some((rnn_data_format, true))
            }
            PreProcessorConfig::FeedForwardToRnnPreProcessor { rnn_data_format }
            | PreProcessorConfig::CnnToRnnPreProcessor { rnn_data_format, .. } => {
                Some((rnn_data_format, false))
            }
            _ => None,
        }
    }

    /// The image of a CNN<->RNN preprocessor (`inputHeight`, `inputWidth`, `numChannels`, each >= 1).
    pub fn image_shape(&self) -> Result<Shape, String> {
        let (h, w, c) = match *self {
            PreProcessorConfig::CnnToRnnPreProcessor { input_height, input_width, num_channels, .. }
            | PreProcessorConfig::RnnToCnnPreProcessor { input_height, input_width, num_channels, .. } => {
                (input_height, input_width, num_channels)
            }
            _ => return Err(format!("{} has no image shape", self.type_name())),
        };
        if h == 0 || w == 0 || c == 0 {
            return Err(format!(
                "{}: inputHeight={h}, inputWidth={w}, numChannels={c} must all be at least 1",
                self.type_name()
            ));
        }
        Ok(Shape::Image { c, h, w })
    }

    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        let name = self.type_name();
        match self {
            // Their rnnDataFormat is the layout of arrays inside the network, which the engine
            // keeps NCW (crate::layout): the same numbers once it agrees with the layers around
            // (config::validate::check_pre_format).
            PreProcessorConfig::RnnToFeedForwardPreProcessor { .. }
            | PreProcessorConfig::FeedForwardToRnnPreProcessor { .. } => {
                return match input {
                    Shape::Seq { .. } => Ok(input),
                    other => Err(format!(
                        "{name} needs a recurrent input (the layers between the two \
                         preprocessors apply at every time step) but its input is {other}; to \
                         repeat a vector over time use DuplicateToTimeSeriesVertex"
                    )),
                };
            }
            // These open and close a per-step region, which only the region rule
            // (config::validate::region_input) can size.
            PreProcessorConfig::CnnToRnnPreProcessor { .. }
            | PreProcessorConfig::RnnToCnnPreProcessor { .. } => {
                return Err(format!("{name} is sized by the per-step region rule"))
            }
            _ => {}
        }
        let (h, w, c) = match *self {
            PreProcessorConfig::CnnToFeedForwardPreProcessor {
                input_height,
                input_width,
                num_channels,
            }
            | PreProcessorConfig::FeedForwardToCnnPreProcessor {
                input_height,
                input_width,
                num_channels,
            } => (input_height, input_width, num_channels),
            _ => unreachable!("handled above"),
        };
        if h == 0 || w == 0 || c == 0 {
            return Err(format!(
                "{name}: inputHeight={h}, inputWidth={w}, numChannels={c} must all be at least 1"
            ));
        }
        let image = Shape::Image { c, h, w };
        match self {
            PreProcessorConfig::CnnToFeedForwardPreProcessor { .. } => match input {
                Shape::Image { .. } if input != image => {
                    Err(format!("{name} expects {image} but its input is {input}"))
                }
                Shape::Flat(n) if n != image.len() => Err(format!(
                    "{name} expects {image} ({} values) but its input is {input}",
                    image.len()
                )),
                Shape::Seq { .. } => {
                    Err(format!("{name} expects {image} but its input is {input}"))
                }
                _ => Ok(Shape::Flat(image.len())),
            },
            _ => {
                if input.len() != image.len() || matches!(input, Shape::Seq { .. }) {
                    return Err(format!(
                        "{name} reshapes {} values into {image}, but its input is {input} ({} \
                         values)",
                        image.len(),
                        input.len()
                    ));
                }
                Ok(image)
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreprocessorVertexConfig {
    pub pre_processor: PreProcessorConfig,
}

fn default_order() -> String {
    "c".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReshapeVertexConfig {
    #[serde(default = "default_order")]
    pub order: String,
    /// The new shape including the minibatch axis, which must be -1 (any minibatch).
    pub new_shape: Vec<i64>,
    #[serde(default)]
    pub mask_shape: Option<Vec<i64>>,
}

impl ReshapeVertexConfig {
    pub fn output_shape(&self, input: Shape) -> Result<Shape, String> {
        if self.order != "c" {
            return Err(format!(
                "order '{}' is not supported: activations are stored in C order with one example \
                 per row, and a Fortran-order reshape would mix values of different examples; \
                 use order 'c'",
                self.order
            ));
        }
        if self.mask_shape.is_some() {
            return Err(
                "maskShape is not supported (masks arrive with the recurrent layers); leave it \
                 null"
                    .into(),
            );
        }
        let shape = &self.new_shape;
        let bad = || {
            format!(
                "newShape {shape:?} is invalid: it is [-1, d1, ...] (the minibatch axis -1, then \
                 1 to 3 positive sizes) and must hold the {} values per example of its input, \
                 {input}",
                input.len()
            )
        };
        if shape.len() < 2 || shape.len() > 4 || shape[0] != -1 || shape[1..].iter().any(|&d| d < 1)
        {
            return Err(bad());
        }
        let d: Vec<usize> = shape[1..].iter().map(|&v| v as usize).collect();
        let out = match d.len() {
            1 => Shape::Flat(d[0]),
            2 => Shape::Seq { c: d[0], len: d[1] },
            _ => Shape::Image {
                c: d[0],
                h: d[1],
                w: d[2],
            },
        };
        if out.len() != input.len() {
            return Err(bad());
        }
        Ok(out)
    }
}

/// The computation of every reshape: a copy (the values keep their order).
#[derive(Debug)]
pub(super) struct Reshape;

impl<T: Scalar> Vertex<T> for Reshape {
    fn any_length(&self) -> bool {
        true
    }

    fn forward(&mut self, inputs: &[&[T]], _rows: usize, output: &mut [T]) {
        output.copy_from_slice(inputs[0]);
    }

    fn backward(
        &mut self,
        _inputs: &[&[T]],
        _output: &[T],
        _rows: usize,
        delta: &[T],
        grads: &mut [Option<&mut [T]>],
    ) {
        if let Some(g) = &mut grads[0] {
            g.copy_from_slice(delta);
        }
    }
}
