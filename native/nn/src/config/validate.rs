//! Validation of a whole configuration: value ranges of every field and the shape of each layer's
//! input and output (the implicit CNN↔dense preprocessors of ARCHITECTURE.md §2.1 included).

use super::*;

/// Input and output shape of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerShapes {
    pub input: Shape,
    pub output: Shape,
    /// The layer runs at every time step of a sequence (between an `RnnToCnnPreProcessor` and
    /// the end of its region): `input`/`output` are one step's shapes; the executor wraps the
    /// layer in `PerStep` and its node carries `[N, len, T]` sequences.
    pub per_step: bool,
}

impl LayerShapes {
    /// Shapes of a layer applied once per example.
    pub fn new(input: Shape, output: Shape) -> Self {
        LayerShapes { input, output, per_step: false }
    }

    /// The shapes the executor's node has: a per-step layer's as sequences of any length.
    pub fn node(&self) -> LayerShapes {
        if !self.per_step {
            return *self;
        }
        let seq = |s: Shape| Shape::Seq { c: s.len(), len: 0 };
        LayerShapes { input: seq(self.input), output: seq(self.output), per_step: false }
    }
}

fn err<X>(m: String) -> Result<X, NnError> {
    Err(NnError::InvalidConfig(m))
}

fn finite_non_negative(who: &str, field: &str, v: f64) -> Result<(), NnError> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(NnError::InvalidConfig(format!(
            "{who}: {field}={v} is invalid (must be a finite number >= 0)"
        )))
    }
}

fn check_base(who: &str, b: &BaseConfig<'_>) -> Result<(), NnError> {
    let err = |m: String| Err(NnError::InvalidConfig(m));
    for (field, v) in [
        ("l1", b.l1),
        ("l2", b.l2),
        ("l1Bias", b.l1_bias),
        ("l2Bias", b.l2_bias),
        ("weightDecay", b.weight_decay),
        ("weightDecayBias", b.weight_decay_bias),
    ] {
        finite_non_negative(who, field, v)?;
    }
    if !b.bias_init.is_finite() {
        return err(format!(
            "{who}: biasInit={} is invalid (must be finite)",
            b.bias_init
        ));
    }
    let t = b.gradient_normalization_threshold;
    if b.gradient_normalization != GradientNormalization::None && !(t.is_finite() && t > 0.0) {
        return err(format!(
            "{who}: gradientNormalizationThreshold={t} is invalid (must be a finite number > 0)"
        ));
    }
    match (b.weight_init, b.weight_init_distribution) {
        (WeightInit::Distribution, None) => {
            return err(format!(
                "{who}: weightInit DISTRIBUTION needs a weightInitDistribution (normal, uniform \
                 or truncatedNormal)"
            ))
        }
        (_, Some(Distribution::Normal { mean, std }))
        | (_, Some(Distribution::TruncatedNormal { mean, std }))
            if !(mean.is_finite() && std.is_finite() && std > 0.0) =>
        {
            return err(format!(
                "{who}: weightInitDistribution mean={mean}, std={std} is invalid (finite mean, \
                 std > 0)"
            ));
        }
        (_, Some(Distribution::Uniform { lower, upper }))
            if !(lower.is_finite() && upper.is_finite() && lower < upper) =>
        {
            return err(format!(
                "{who}: weightInitDistribution lower={lower}, upper={upper} is invalid (finite, \
                 lower < upper)"
            ));
        }
        _ => {}
    }
    b.updater
        .validate(&format!("{who} updater"))
        .map_err(NnError::InvalidConfig)?;
    b.bias_updater
        .validate(&format!("{who} biasUpdater"))
        .map_err(NnError::InvalidConfig)?;
    Ok(())
}

fn check_loss_weights(who: &str, w: &Option<Vec<f64>>, n_out: usize) -> Result<(), NnError> {
    if let Some(w) = w {
        if w.len() != n_out {
            return Err(NnError::InvalidConfig(format!(
                "{who}: lossWeights has {} values but the layer has {n_out} outputs",
                w.len()
            )));
        }
        if let Some(v) = w.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
            return Err(NnError::InvalidConfig(format!(
                "{who}: lossWeights contains {v} (weights must be finite numbers >= 0)"
            )));
        }
    }
    Ok(())
}

/// The shape of an input type, refusing zero sizes (a recurrent length of 0 means "any"). A
/// recurrent NWC input is converted at the network's boundary (`crate::layout`).
pub(crate) fn check_input_type(t: &super::InputType) -> Result<Shape, NnError> {
    let s = t.shape();
    let empty = match s {
        Shape::Seq { c, .. } => c == 0,
        other => other.is_empty(),
    };
    if empty {
        return Err(NnError::InvalidConfig(format!(
            "inputType {t:?} has a zero dimension"
        )));
    }
    Ok(s)
}

fn positive(who: &str, field: &str, v: usize) -> Result<(), NnError> {
    if v == 0 && field == "nIn" {
        Err(NnError::InvalidConfig(format!(
            "{who}: nIn is not set (0): set nIn, or call setInputType(..) so that it is inferred"
        )))
    } else if v == 0 {
        Err(NnError::InvalidConfig(format!(
            "{who}: {field}=0 is invalid (must be at least 1)"
        )))
    } else {
        Ok(())
    }
}

/// What a layer's shape rule knows about where it sits: how messages name it (`who`), its input
/// shape, the layer or vertex producing it (`prev`, None for a network input) and a phrase for
/// where the input comes from (`from`). Its methods are the checks several layer types share,
/// with the wording every message uses.
pub struct ShapeCx<'a> {
    pub who: &'a str,
    pub input: Shape,
    pub prev: Option<&'a str>,
    pub from: &'a str,
}

impl ShapeCx<'_> {
    /// An InvalidConfig error naming the layer.
    pub fn err(&self, m: impl std::fmt::Display) -> NnError {
        NnError::InvalidConfig(format!("{}: {m}", self.who))
    }

    /// `field` must be at least 1 (`nIn` 0 means "not set").
    pub fn positive(&self, field: &str, v: usize) -> Result<(), NnError> {
        positive(self.who, field, v)
    }

    /// `lossWeights`: none, or `n` finite values >= 0.
    pub fn loss_weights(&self, w: &Option<Vec<f64>>, n: usize) -> Result<(), NnError> {
        check_loss_weights(self.who, w, n)
    }

    /// `nIn` against the flat width of the input (dense-like layers flatten images implicitly).
    pub fn flat_n_in(&self, n_in: usize) -> Result<(), NnError> {
        let (who, input) = (self.who, self.input);
        let width = match input {
            Shape::Seq { .. } => {
                return err(format!(
                    "{who}: its input is {input} ({}); this layer cannot take a recurrent input \
                     — use RnnOutputLayer for an output per time step, or add a LastTimeStep \
                     wrapper or a GlobalPoolingLayer first",
                    self.from
                ))
            }
            other => other.len(),
        };
        self.positive("nIn", n_in)?;
        if width != n_in {
            return match (input, self.prev) {
                (Shape::Flat(_), Some(p)) => err(format!(
                    "{who}: nIn={n_in} does not match nOut={width} of {p}"
                )),
                _ => err(format!(
                    "{who}: nIn={n_in} does not match its input, {input} = {width} values ({})",
                    self.from
                )),
            };
        }
        Ok(())
    }

    /// The `[C, H, W]` of a convolutional input; `what` is the layer type.
    pub fn image(&self, what: &str) -> Result<(usize, usize, usize), NnError> {
        match self.input {
            Shape::Image { c, h, w } => Ok((c, h, w)),
            // The reference infers no RNN -> CNN preprocessor (it cannot know the image shape)
            // and refuses the layer: say what to add.
            input @ Shape::Seq { .. } => err(format!(
                "{}: {what} needs a convolutional input but gets {input} ({}); to apply it at \
                 every time step add an RnnToCnnPreProcessor(height, width, channels) with \
                 channels*height*width = {} before it (ListBuilder.inputPreProcessor(i, ..) or \
                 GraphBuilder.addLayer(name, layer, preProcessor, inputs))",
                self.who,
                self.from,
                input.channels()
            )),
            input => err(format!(
                "{}: {what} needs a convolutional input but gets {input} ({}); call \
                 setInputType(InputType.convolutional(..)) or convolutionalFlat(..)",
                self.who, self.from
            )),
        }
    }

    /// The `[C, L]` of a recurrent input; `what` is the layer type.
    pub fn seq(&self, what: &str) -> Result<(usize, usize), NnError> {
        match self.input {
            Shape::Seq { c, len } => Ok((c, len)),
            input => err(format!(
                "{}: {what} needs a recurrent input [C, L] but gets {input} ({}); call \
                 setInputType(InputType.recurrent(..))",
                self.who, self.from
            )),
        }
    }


    /// `nIn` against the channels of the input.
    pub fn channels_match(&self, n_in: usize, c: usize) -> Result<(), NnError> {
        self.positive("nIn", n_in)?;
        if n_in != c {
            return err(format!(
                "{}: nIn={n_in} does not match the {c} channels of its input, {} ({})",
                self.who, self.input, self.from
            ));
        }
        Ok(())
    }

    /// Refuses `Causal` for 2-D layers.
    pub fn no_causal(&self, mode: ConvolutionMode) -> Result<(), NnError> {
        if mode == ConvolutionMode::Causal {
            return err(format!(
                "{}: ConvolutionMode.Causal is only defined for 1-D layers (Convolution1DLayer, \
                 Subsampling1DLayer)",
                self.who
            ));
        }
        Ok(())
    }

    /// Output size and padding of one spatial dimension ([`window`]), errors naming the layer.
    #[allow(clippy::too_many_arguments)]
    pub fn window(
        &self,
        dim: &str,
        input: usize,
        k: usize,
        s: usize,
        p: usize,
        d: usize,
        mode: ConvolutionMode,
    ) -> Result<Window, NnError> {
        window(dim, input, k, s, p, d, mode).map_err(|m| self.err(m))
    }

    /// `pnorm` must be at least 1 for PNORM pooling.
    pub fn pnorm(&self, pooling: PoolingType, pnorm: u32) -> Result<(), NnError> {
        if pooling == PoolingType::Pnorm && pnorm == 0 {
            return err(format!(
                "{}: pnorm=0 is invalid (must be at least 1)",
                self.who
            ));
        }
        Ok(())
    }
}

impl MultiLayerConfiguration {
    /// Checks everything serde cannot: value ranges, layer ordering and shapes.
    pub fn validate(&self) -> Result<(), NnError> {
        self.layer_shapes().map(|_| ())
    }

    /// The preprocessor given for layer `i`'s input, if any.
    pub fn pre_processor(&self, i: usize) -> Option<&crate::vertices::PreProcessorConfig> {
        self.input_pre_processors.as_ref()?.get(&i.to_string())
    }

    /// The shape of every layer's input and output, validating the configuration on the way.
    pub fn layer_shapes(&self) -> Result<Vec<LayerShapes>, NnError> {
        let err = |m: String| Err(NnError::InvalidConfig(m));
        if self.format_version != FORMAT_VERSION {
            return err(format!(
                "unsupported configuration formatVersion {} (this build reads {FORMAT_VERSION})",
                self.format_version
            ));
        }
        if self.layers.is_empty() {
            return err(
                "the configuration has no layers (the last layer must be an OutputLayer)".into(),
            );
        }
        super::check_tbptt(self.backprop_type, self.tbptt_fwd_length, self.tbptt_back_length)?;
        if self.backprop_type == super::BackpropType::TruncatedBptt {
            if let Some((i, l)) = self.layers.iter().enumerate().find(|(_, l)| l.ends_time_axis()) {
                return err(format!(
                    "{}: truncated BPTT cannot be combined with LastTimeStep (each segment would \
                     end at its own last step); use BackpropType.Standard, or an RnnOutputLayer",
                    l.describe(i)
                ));
            }
        }
        for key in self.input_pre_processors.iter().flat_map(|m| m.keys()) {
            if !key.parse::<usize>().is_ok_and(|i| i < self.layers.len()) {
                return err(format!(
                    "inputPreProcessors has an entry for layer \"{key}\", but the layers are \
                     numbered 0..{}",
                    self.layers.len()
                ));
            }
        }
        let last = self.layers.len() - 1;
        let mut shape = match self.input_type {
            Some(t) => check_input_type(&t)?,
            // An embedding reads one column of indices, whatever its nIn (vocabulary size); a
            // recurrent layer a sequence of nIn channels.
            None => match self.layers[0]
                .implied_input()
                .or_else(|| self.layers[0].n_in().map(Shape::Flat))
            {
                Some(s) => s,
                None => {
                    return err(format!(
                        "{} has no nIn, so the input size is unknown: call setInputType(..)",
                        self.layers[0].describe(0)
                    ))
                }
            },
        };
        let mut out = Vec::with_capacity(self.layers.len());
        let mut per_step = false;
        for (i, layer) in self.layers.iter().enumerate() {
            let who = layer.describe(i);
            if layer.is_output() && i != last {
                return err(format!(
                    "{who}: an {} must be the last layer, but {} more layer(s) follow it",
                    layer.unfrozen().type_name(),
                    last - i
                ));
            }
            if i == last && !layer.is_output() {
                return err(format!(
                    "{who}: the last layer must be an OutputLayer (it defines the loss function)"
                ));
            }
            let prev = (i > 0).then(|| self.layers[i - 1].describe(i - 1));
            let from = match &prev {
                Some(p) => format!("the output of {p}"),
                None => "the network input".to_string(),
            };
            let producer = match i {
                0 => input_type_format(self.input_type.as_ref()).map(|f| (f, "the network input".into())),
                _ => self.layers[i - 1].rnn_format().map(|f| (f, self.layers[i - 1].describe(i - 1))),
            };
            let consumer = layer.rnn_format().map(|f| (f, "the layer itself".to_string()));
            check_pre_format(self.pre_processor(i), producer, consumer)
                .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))?;
            let (input, step) = region_layer(layer, self.pre_processor(i), shape, per_step)
                .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))?;
            let output = check_layer(layer, &who, input, prev.as_deref(), &from)?;
            out.push(LayerShapes {
                input,
                output,
                per_step: step,
            });
            (shape, per_step) = (output, step);
        }
        Ok(out)
    }

    /// Fills every unset `nIn` (0) from the shape of the layer's input, in order, then
    /// validates: what `setInputType(..)` does in the reference's builder, in one place.
    pub fn resolve(&mut self) -> Result<(), NnError> {
        let mut shape = match self.input_type {
            Some(t) => t.shape(),
            None => match self.layers.first() {
                Some(l) => l
                    .implied_input()
                    .unwrap_or(Shape::Flat(l.n_in().unwrap_or(0))),
                None => return self.validate(),
            },
        };
        let pre: Vec<Option<crate::vertices::PreProcessorConfig>> =
            (0..self.layers.len()).map(|i| self.pre_processor(i).cloned()).collect();
        let mut per_step = false;
        for (i, layer) in self.layers.iter_mut().enumerate() {
            match region_layer(layer, pre[i].as_ref(), shape, per_step) {
                Ok(s) => (shape, per_step) = s,
                Err(_) => break,
            }
            infer_n_in(layer, shape);
            let who = layer.describe(i);
            // Errors here are reported by validate() below with the full context.
            match check_layer(layer, &who, shape, None, "its input") {
                Ok(out) => shape = out,
                Err(_) => break,
            }
        }
        self.validate()?;
        // Build every layer once (nothing is allocated) so rules a layer applies when it is
        // constructed fail here too: Java's build() and the engine's init() agree.
        let shapes = self.layer_shapes()?;
        for (i, (layer, s)) in self.layers.iter().zip(&shapes).enumerate() {
            layer
                .build::<f32>(*s)
                .map_err(|e| NnError::InvalidConfig(format!("{}: {}", layer.describe(i), e.message())))?;
        }
        Ok(())
    }
}

/// The input shape of `layer` after its preprocessor `pre`, and whether it runs at every time
/// step (`per_step`: its input is one step of the region). The one rule for both network kinds:
/// a `MultiLayerNetwork`'s layers and a graph's layer vertices. An output or loss layer cannot
/// run per step (its loss would be per image); an `RnnOutputLayer` closes the region instead.
pub(crate) fn region_layer(
    layer: &LayerConfig,
    pre: Option<&crate::vertices::PreProcessorConfig>,
    shape: Shape,
    per_step: bool,
) -> Result<(Shape, bool), String> {
    let (input, step) = region_input(layer.rnn_format().is_some(), pre, shape, per_step)?;
    if step && layer.is_output() {
        return Err(format!(
            "an {} cannot run at every time step (it is inside the per-step region of an \
             RnnToCnnPreProcessor); use an RnnOutputLayer, which ends the region",
            layer.unfrozen().type_name()
        ));
    }
    Ok((input, step))
}

/// The shape after preprocessor `pre` (or none) of an input of shape `shape`, and whether what
/// reads it runs at every time step. An `RnnToCnnPreProcessor` opens a per-step region (each
/// step's `C·H·W` values as an image, the reference's `[N·T, C, H, W]`); `CnnToRnnPreProcessor`,
/// `FeedForwardToRnnPreProcessor` or a reader of sequences (`reads_sequences`: a recurrent layer,
/// an implied preprocessor as the reference infers) closes it. Inside a region the arrays stay
/// `[N, C·H·W, T]` sequences (the executor runs region layers through `PerStep`), so opening and
/// closing move no values. A graph's `PreprocessorVertex` uses this too.
pub(crate) fn region_input(
    reads_sequences: bool,
    pre: Option<&crate::vertices::PreProcessorConfig>,
    shape: Shape,
    per_step: bool,
) -> Result<(Shape, bool), String> {
    use crate::vertices::PreProcessorConfig as P;
    let seq = |s: Shape| Shape::Seq { c: s.len(), len: 0 };
    match pre {
        Some(p @ P::RnnToCnnPreProcessor { input_height: h, input_width: w, num_channels: c, .. }) => {
            let image = p.image_shape()?;
            if per_step {
                return Err(format!(
                    "RnnToCnnPreProcessor inside the per-step region of another one (its input is \
                     already one time step, {shape})"
                ));
            }
            match shape {
                Shape::Seq { c: n, .. } if n == image.len() => Ok((image, true)),
                _ => Err(format!(
                    "RnnToCnnPreProcessor({h}x{w}x{c}) needs a recurrent input of \
                     numChannels*inputHeight*inputWidth = {} values per time step, but its input \
                     is {shape}",
                    image.len()
                )),
            }
        }
        Some(p @ P::CnnToRnnPreProcessor { .. }) => {
            let image = p.image_shape()?;
            if !per_step {
                return Err(format!(
                    "CnnToRnnPreProcessor turns per-time-step activations back into a sequence, so \
                     it must follow an RnnToCnnPreProcessor (the engine has no [N*T, C, H, W] \
                     minibatches); its input here is {shape} per example"
                ));
            }
            if shape.len() != image.len() {
                return Err(format!(
                    "CnnToRnnPreProcessor expects {image} per time step ({} values) but its input \
                     is {shape}",
                    image.len()
                ));
            }
            Ok((seq(shape), false))
        }
        Some(P::FeedForwardToRnnPreProcessor { .. }) if per_step => Ok((seq(shape), false)),
        Some(p) => Ok((p.output_shape(shape)?, per_step)),
        None if per_step && reads_sequences => Ok((seq(shape), false)),
        None => Ok((shape, per_step)),
    }
}

/// A preprocessor's `rnnDataFormat` is the layout of the sequence it reads (`RnnTo...`) or
/// writes (`...ToRnn`). The engine keeps sequences NCW between layers and converts only at the
/// network boundary (crate::layout), so the format changes no number when it is the layout the
/// reference has there: that of the layer or network input producing what a reader reads
/// (`producer`), or of the layer reading what a writer writes (`consumer`), each with a phrase
/// naming it. Where they differ the reference would read `[N, T, C]` as `[N, C, T]` (a shape
/// error, or steps and channels silently swapped): refused. `None`: not known here.
pub(crate) fn check_pre_format(
    pre: Option<&crate::vertices::PreProcessorConfig>,
    producer: Option<(RnnFormat, String)>,
    consumer: Option<(RnnFormat, String)>,
) -> Result<(), String> {
    let Some(p) = pre else { return Ok(()) };
    let Some((format, reads)) = p.sequence_side() else { return Ok(()) };
    let (other, what) = match (reads, producer, consumer) {
        (true, Some((f, who)), _) => (f, format!("its input comes from {who}, which is {f:?}")),
        (false, _, Some((f, who))) => (f, format!("its output is read by {who}, which is {f:?}")),
        _ => return Ok(()),
    };
    if other == format {
        return Ok(());
    }
    Err(format!(
        "{} has rnnDataFormat {format:?} but {what}: the sequence would be read with its time \
         steps and channels swapped; give the preprocessor rnnDataFormat {other:?}",
        p.type_name()
    ))
}

/// The `rnnDataFormat` a network input's sequences have, as its input type declares it.
pub(crate) fn input_type_format(t: Option<&InputType>) -> Option<RnnFormat> {
    match t {
        Some(InputType::Recurrent { format, .. }) => Some(*format),
        _ => None,
    }
}

/// Sets an unset (0) `nIn` from the input shape (each layer type's own rule).
pub fn infer_n_in(layer: &mut LayerConfig, input: Shape) {
    layer.infer_n_in(input);
}

/// Validates one layer whose input has shape `input` and returns its output shape. `who` names
/// the layer in messages, `prev` the layer or vertex producing the input (None: a network input)
/// and `from` says where the input comes from ("the output of layer 1 (DenseLayer)").
pub fn check_layer(
    layer: &LayerConfig,
    who: &str,
    input: Shape,
    prev: Option<&str>,
    from: &str,
) -> Result<Shape, NnError> {
    let err = |m: String| Err(NnError::InvalidConfig(m));
    let p = layer.input_drop_out();
    let own = match layer {
        LayerConfig::DropoutLayer(c) => c.drop_out,
        _ => 0.0,
    };
    for (field, v) in [("dropOut", p), ("dropOut", own)] {
        if !(0.0..=1.0).contains(&v) {
            return err(format!(
                "{who}: {field}={v} is invalid (a retain probability in [0, 1]; 0 or 1 \
                 disables dropout)"
            ));
        }
    }
    if let Some(b) = layer.base() {
        check_base(who, &b)?;
    }
    if let Some(b) = layer.base() {
        let square = match layer.unfrozen() {
            LayerConfig::DenseLayer(c) => Some((c.n_in, c.n_out)),
            LayerConfig::OutputLayer(c) => Some((c.n_in, c.n_out)),
            LayerConfig::RnnOutputLayer(c) => Some((c.n_in, c.n_out)),
            LayerConfig::EmbeddingLayer(c) => Some((c.n_in, c.n_out)),
            _ => None,
        };
        if let (WeightInit::Identity, Some((n_in, n_out))) = (b.weight_init, square) {
            if n_in != n_out {
                return err(format!(
                    "{who}: weightInit IDENTITY needs a square weight matrix, but nIn={n_in}, \
                     nOut={n_out}"
                ));
            }
        }
    }
    let cx = ShapeCx {
        who,
        input,
        prev,
        from,
    };
    let output = layer.output_shape(&cx)?;
    if let Some(a) = layer.activation() {
        if a == Activation::Softmax && output.len() == 1 {
            return err(format!(
                "{who}: activation SOFTMAX with nOut=1 always outputs 1 and cannot learn; \
                 use SIGMOID for a single output or nOut >= 2"
            ));
        }
    }
    Ok(output)
}

impl MultiLayerConfiguration {
    /// Total number of parameters the configuration describes (0 when it is invalid).
    pub fn num_params(&self) -> usize {
        let Ok(shapes) = self.layer_shapes() else {
            return 0;
        };
        self.layers
            .iter()
            .zip(&shapes)
            .map(|(l, s)| layer_num_params(l, s))
            .sum()
    }
}

/// Parameters of one layer given its shapes: what the built layer's parameter blocks hold (0
/// for shapes its rule refuses).
pub fn layer_num_params(layer: &LayerConfig, s: &LayerShapes) -> usize {
    layer.build::<f32>(*s).map_or(0, |l| l.num_params())
}
