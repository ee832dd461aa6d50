//! Validation of a whole configuration: value ranges of every field and the shape of each layer's
//! input and output (the implicit CNN↔dense preprocessors of ARCHITECTURE.md §2.1 included).

use super::*;

/// Input and output shape of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerShapes {
    pub input: Shape,
    pub output: Shape,
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

impl MultiLayerConfiguration {
    /// Checks everything serde cannot: value ranges, layer ordering and shapes.
    pub fn validate(&self) -> Result<(), NnError> {
        self.layer_shapes().map(|_| ())
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
        let last = self.layers.len() - 1;
        let mut shape = match self.input_type {
            Some(t) => {
                let s = t.shape();
                if s.is_empty() {
                    return err(format!("inputType {t:?} has a zero dimension"));
                }
                s
            }
            // An embedding reads one column of indices, whatever its nIn (vocabulary size).
            None if matches!(self.layers[0].unfrozen(), LayerConfig::EmbeddingLayer(_)) => {
                Shape::Flat(1)
            }
            None => match self.layers[0].n_in() {
                Some(n) => Shape::Flat(n),
                None => {
                    return err(format!(
                        "{} has no nIn, so the input size is unknown: call setInputType(..)",
                        self.layers[0].describe(0)
                    ))
                }
            },
        };
        let mut out = Vec::with_capacity(self.layers.len());
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
            let output = check_layer(layer, &who, shape, prev.as_deref(), &from)?;
            out.push(LayerShapes {
                input: shape,
                output,
            });
            shape = output;
        }
        Ok(out)
    }

    /// Fills every unset `nIn` (0) from the shape of the layer's input, in order, then
    /// validates: what `setInputType(..)` does in the reference's builder, in one place.
    pub fn resolve(&mut self) -> Result<(), NnError> {
        let mut shape = match self.input_type {
            Some(t) => t.shape(),
            None => match self.layers.first() {
                Some(l) if matches!(l.unfrozen(), LayerConfig::EmbeddingLayer(_)) => Shape::Flat(1),
                Some(l) => Shape::Flat(l.n_in().unwrap_or(0)),
                None => return self.validate(),
            },
        };
        for (i, layer) in self.layers.iter_mut().enumerate() {
            infer_n_in(layer, shape);
            let who = layer.describe(i);
            // Errors here are reported by validate() below with the full context.
            match check_layer(layer, &who, shape, None, "its input") {
                Ok(out) => shape = out,
                Err(_) => break,
            }
        }
        self.validate()
    }
}

/// Sets an unset (0) `nIn` from the input shape: the flat width for dense-like layers (images
/// flatten implicitly), the channels for convolutions and batch normalization (whose `nOut`
/// follows). An embedding's `nIn` is its vocabulary size and is never inferred.
pub fn infer_n_in(layer: &mut LayerConfig, input: Shape) {
    let flat = match input {
        Shape::Seq { .. } => None,
        other => Some(other.len()),
    };
    match layer {
        LayerConfig::FrozenLayer(f) => infer_n_in(&mut f.layer, input),
        LayerConfig::DenseLayer(c) if c.n_in == 0 => c.n_in = flat.unwrap_or(0),
        LayerConfig::OutputLayer(c) if c.n_in == 0 => c.n_in = flat.unwrap_or(0),
        LayerConfig::ConvolutionLayer(c) if c.n_in == 0 => {
            if let Shape::Image { c: ch, .. } = input {
                c.n_in = ch;
            }
        }
        LayerConfig::Convolution1DLayer(c) if c.n_in == 0 => {
            if let Shape::Seq { c: ch, .. } = input {
                c.n_in = ch;
            }
        }
        LayerConfig::BatchNormalization(c) => {
            if c.n_in == 0 {
                c.n_in = input.channels();
            }
            if c.n_out == 0 {
                c.n_out = c.n_in;
            }
        }
        _ => {}
    }
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
    if let LayerConfig::FrozenLayer(f) = layer {
        if f.layer.is_frozen() {
            return err(format!(
                "{who}: a FrozenLayer cannot wrap another FrozenLayer"
            ));
        }
    }
    if let Some(b) = layer.base() {
        let square = match layer.unfrozen() {
            LayerConfig::DenseLayer(c) => Some((c.n_in, c.n_out)),
            LayerConfig::OutputLayer(c) => Some((c.n_in, c.n_out)),
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
    let output = layer_output_shape(layer, who, input, prev, from)?;
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

/// The output shape of a layer given its input shape; checks the layer's own fields.
fn layer_output_shape(
    layer: &LayerConfig,
    who: &str,
    input: Shape,
    prev: Option<&str>,
    from: &str,
) -> Result<Shape, NnError> {
    let from = || from.to_string();
    // nIn against the flat width of the input (dense-like layers flatten images implicitly).
    let flat_n_in = |n_in: usize| -> Result<(), NnError> {
        positive(who, "nIn", n_in)?;
        let width = match input {
            Shape::Seq { .. } => {
                return err(format!(
                    "{who}: its input is {input} ({}); a feed-forward layer cannot take a \
                         recurrent input here — add a GlobalPoolingLayer first",
                    from()
                ))
            }
            other => other.len(),
        };
        if width != n_in {
            return match (input, prev) {
                (Shape::Flat(_), Some(p)) => err(format!(
                    "{who}: nIn={n_in} does not match nOut={width} of {p}"
                )),
                _ => err(format!(
                    "{who}: nIn={n_in} does not match its input, {input} = {width} values \
                         ({})",
                    from()
                )),
            };
        }
        Ok(())
    };
    let image = |what: &str| -> Result<(usize, usize, usize), NnError> {
        match input {
            Shape::Image { c, h, w } => Ok((c, h, w)),
            _ => Err(NnError::InvalidConfig(format!(
                "{who}: {what} needs a convolutional input but gets {input} ({}); call \
                     setInputType(InputType.convolutional(..)) or convolutionalFlat(..)",
                from()
            ))),
        }
    };
    let seq = |what: &str| -> Result<(usize, usize), NnError> {
        match input {
            Shape::Seq { c, len } => Ok((c, len)),
            _ => Err(NnError::InvalidConfig(format!(
                "{who}: {what} needs a recurrent input [C, L] but gets {input} ({}); call \
                     setInputType(InputType.recurrent(..))",
                from()
            ))),
        }
    };
    let channels_match = |n_in: usize, c: usize| -> Result<(), NnError> {
        positive(who, "nIn", n_in)?;
        if n_in != c {
            return err(format!(
                "{who}: nIn={n_in} does not match the {c} channels of its input, {input} ({})",
                from()
            ));
        }
        Ok(())
    };
    let no_causal = |mode: ConvolutionMode| -> Result<(), NnError> {
        if mode == ConvolutionMode::Causal {
            return err(format!(
                    "{who}: ConvolutionMode.Causal is only defined for 1-D layers (Convolution1DLayer, \
                     Subsampling1DLayer)"
                ));
        }
        Ok(())
    };
    let wrap =
        |r: Result<Window, String>| r.map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")));
    Ok(match layer.unfrozen() {
        LayerConfig::DenseLayer(c) => {
            flat_n_in(c.n_in)?;
            positive(who, "nOut", c.n_out)?;
            Shape::Flat(c.n_out)
        }
        LayerConfig::OutputLayer(c) => {
            flat_n_in(c.n_in)?;
            positive(who, "nOut", c.n_out)?;
            check_loss_weights(who, &c.loss_weights, c.n_out)?;
            Shape::Flat(c.n_out)
        }
        LayerConfig::LossLayer(c) => {
            check_loss_weights(who, &c.loss_weights, input.len())?;
            input
        }
        LayerConfig::ActivationLayer(_) | LayerConfig::DropoutLayer(_) => input,
        LayerConfig::BatchNormalization(c) => {
            positive(who, "nIn", c.n_in)?;
            if c.n_out != c.n_in {
                return err(format!(
                    "{who}: nOut={} must equal nIn={} (batch normalization keeps the shape)",
                    c.n_out, c.n_in
                ));
            }
            let features = input.channels();
            if c.n_in != features {
                return err(format!(
                    "{who}: nIn={} does not match its input, {input} ({}), which has {features} \
                         {}",
                    c.n_in,
                    from(),
                    if matches!(input, Shape::Flat(_)) {
                        "features"
                    } else {
                        "channels"
                    }
                ));
            }
            if !(c.decay.is_finite() && (0.0..=1.0).contains(&c.decay)) {
                return err(format!(
                    "{who}: decay={} is invalid (must be in [0, 1])",
                    c.decay
                ));
            }
            if !(c.eps.is_finite() && c.eps > 0.0) {
                return err(format!(
                    "{who}: eps={} is invalid (must be a finite number > 0)",
                    c.eps
                ));
            }
            if !(c.gamma.is_finite() && c.beta.is_finite()) {
                return err(format!("{who}: gamma and beta must be finite"));
            }
            input
        }
        LayerConfig::ConvolutionLayer(c) => {
            let (ch, h, w) = image("ConvolutionLayer")?;
            no_causal(c.convolution_mode)?;
            channels_match(c.n_in, ch)?;
            positive(who, "nOut", c.n_out)?;
            let wh = wrap(window(
                "height",
                h,
                c.kernel_size[0],
                c.stride[0],
                c.padding[0],
                c.dilation[0],
                c.convolution_mode,
            ))?;
            let ww = wrap(window(
                "width",
                w,
                c.kernel_size[1],
                c.stride[1],
                c.padding[1],
                c.dilation[1],
                c.convolution_mode,
            ))?;
            Shape::Image {
                c: c.n_out,
                h: wh.out,
                w: ww.out,
            }
        }
        LayerConfig::Convolution1DLayer(c) => {
            let (ch, len) = seq("Convolution1DLayer")?;
            channels_match(c.n_in, ch)?;
            positive(who, "nOut", c.n_out)?;
            let wl = wrap(window(
                "length",
                len,
                c.kernel_size,
                c.stride,
                c.padding,
                c.dilation,
                c.convolution_mode,
            ))?;
            Shape::Seq {
                c: c.n_out,
                len: wl.out,
            }
        }
        LayerConfig::SubsamplingLayer(c) => {
            let (ch, h, w) = image("SubsamplingLayer")?;
            no_causal(c.convolution_mode)?;
            if c.pooling_type == PoolingType::Pnorm && c.pnorm == 0 {
                return err(format!("{who}: pnorm=0 is invalid (must be at least 1)"));
            }
            let wh = wrap(window(
                "height",
                h,
                c.kernel_size[0],
                c.stride[0],
                c.padding[0],
                c.dilation[0],
                c.convolution_mode,
            ))?;
            let ww = wrap(window(
                "width",
                w,
                c.kernel_size[1],
                c.stride[1],
                c.padding[1],
                c.dilation[1],
                c.convolution_mode,
            ))?;
            Shape::Image {
                c: ch,
                h: wh.out,
                w: ww.out,
            }
        }
        LayerConfig::Subsampling1DLayer(c) => {
            let (ch, len) = seq("Subsampling1DLayer")?;
            if c.pooling_type == PoolingType::Pnorm && c.pnorm == 0 {
                return err(format!("{who}: pnorm=0 is invalid (must be at least 1)"));
            }
            let wl = wrap(window(
                "length",
                len,
                c.kernel_size,
                c.stride,
                c.padding,
                c.dilation,
                c.convolution_mode,
            ))?;
            Shape::Seq { c: ch, len: wl.out }
        }
        LayerConfig::Upsampling2D(c) => {
            let (ch, h, w) = image("Upsampling2D")?;
            positive(who, "size[0]", c.size[0])?;
            positive(who, "size[1]", c.size[1])?;
            Shape::Image {
                c: ch,
                h: h * c.size[0],
                w: w * c.size[1],
            }
        }
        LayerConfig::ZeroPaddingLayer(c) => {
            let (ch, h, w) = image("ZeroPaddingLayer")?;
            let [t, b, l, r] = c.padding;
            Shape::Image {
                c: ch,
                h: h + t + b,
                w: w + l + r,
            }
        }
        LayerConfig::GlobalPoolingLayer(c) => {
            if c.pooling_type == PoolingType::Pnorm && c.pnorm == 0 {
                return err(format!("{who}: pnorm=0 is invalid (must be at least 1)"));
            }
            match input {
                Shape::Image { c: ch, .. } if !c.collapse_dimensions => {
                    Shape::Image { c: ch, h: 1, w: 1 }
                }
                Shape::Seq { c: ch, .. } if !c.collapse_dimensions => Shape::Seq { c: ch, len: 1 },
                Shape::Image { c: ch, .. } | Shape::Seq { c: ch, .. } => Shape::Flat(ch),
                Shape::Flat(_) => {
                    return err(format!(
                        "{who}: global pooling needs a convolutional or recurrent input but \
                             gets {input} ({})",
                        from()
                    ))
                }
            }
        }
        LayerConfig::EmbeddingLayer(c) => {
            positive(who, "nIn", c.n_in)?;
            positive(who, "nOut", c.n_out)?;
            if input != Shape::Flat(1) {
                return err(format!(
                    "{who}: the input must be one column of indices in [0, nIn={}), but it is \
                         {input} ({})",
                    c.n_in,
                    from()
                ));
            }
            Shape::Flat(c.n_out)
        }
        LayerConfig::FrozenLayer(_) => unreachable!("unfrozen() removed the wrapper"),
    })
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

/// Parameters of one layer given its shapes (the layouts of ARCHITECTURE.md §2.2).
pub fn layer_num_params(layer: &LayerConfig, s: &LayerShapes) -> usize {
    let bias = |has: bool, n: usize| if has { n } else { 0 };
    match layer.unfrozen() {
        LayerConfig::DenseLayer(c) => c.n_in * c.n_out + bias(c.has_bias, c.n_out),
        LayerConfig::OutputLayer(c) => c.n_in * c.n_out + bias(c.has_bias, c.n_out),
        LayerConfig::EmbeddingLayer(c) => c.n_in * c.n_out + bias(c.has_bias, c.n_out),
        LayerConfig::ConvolutionLayer(c) => {
            c.n_out * c.n_in * c.kernel_size[0] * c.kernel_size[1] + bias(c.has_bias, c.n_out)
        }
        LayerConfig::Convolution1DLayer(c) => {
            c.n_out * c.n_in * c.kernel_size + bias(c.has_bias, c.n_out)
        }
        LayerConfig::BatchNormalization(c) => {
            let n = s.input.channels();
            if c.lock_gamma_beta {
                2 * n
            } else {
                4 * n
            }
        }
        _ => 0,
    }
}
