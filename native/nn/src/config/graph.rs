//! `ComputationGraphConfiguration`: the graph JSON of ARCHITECTURE.md §2.4, its validation
//! (names, connections, cycles, output layers, every vertex's shape rule) and `nIn` inference.
//!
//! Every rule about what a graph may look like lives here, so Java's `GraphBuilder.build()` asks
//! the engine instead of repeating it. Messages name the vertex: `vertex "add" (ElementWiseVertex)`.

use super::validate::{
    check_layer, check_pre_format, infer_n_in, input_type_format, region_input, region_layer,
};
use super::{InputType, LayerConfig, Shape, FORMAT_VERSION};
use crate::error::NnError;
use crate::vertices::{RowFactor, VertexConfig};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

use super::defaults::default_true;

/// A whole graph configuration plus its training counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComputationGraphConfiguration {
    pub format_version: u32,
    /// Seed of the parameter initialisation (a Java `long`; its bits are used as a `u64`).
    pub seed: i64,
    #[serde(default = "default_true")]
    pub mini_batch: bool,
    #[serde(default)]
    pub iteration_count: u64,
    #[serde(default)]
    pub epoch_count: u64,
    pub network_inputs: Vec<String>,
    pub network_outputs: Vec<String>,
    /// One input type per network input (`setInputTypes`), or none.
    #[serde(default)]
    pub input_types: Option<Vec<InputType>>,
    /// Truncated backpropagation through time, as in `MultiLayerConfiguration`.
    #[serde(default, skip_serializing_if = "super::BackpropType::is_standard")]
    pub backprop_type: super::BackpropType,
    #[serde(default = "super::default_tbptt", skip_serializing_if = "is_default_tbptt")]
    pub tbptt_fwd_length: usize,
    #[serde(default = "super::default_tbptt", skip_serializing_if = "is_default_tbptt")]
    pub tbptt_back_length: usize,
    /// In the order the user added them; execution order is topological.
    pub vertices: Vec<GraphVertexConfig>,
}

fn is_default_tbptt(v: &usize) -> bool {
    *v == super::default_tbptt()
}

/// One named vertex with the names of its inputs (network inputs or other vertices).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GraphVertexConfig {
    pub name: String,
    pub inputs: Vec<String>,
    pub vertex: VertexConfig,
}

/// Where a vertex input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphSource {
    /// Network input `k` (index into `networkInputs`).
    Input(usize),
    /// The output of vertex `v` (index into `vertices`).
    Vertex(usize),
}

/// The validated structure of a graph: execution order, connections and shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphPlan {
    /// Indices into `vertices`, in execution (topological) order; ties keep insertion order.
    pub order: Vec<usize>,
    /// Per vertex (index into `vertices`): where each of its inputs comes from.
    pub sources: Vec<Vec<GraphSource>>,
    /// Per network input: its per-example shape.
    pub input_shapes: Vec<Shape>,
    /// Per vertex: the shapes it receives (a layer vertex: its layer's input, after the
    /// preprocessor).
    pub in_shapes: Vec<Vec<Shape>>,
    /// Per vertex: its output shape.
    pub out_shapes: Vec<Shape>,
    /// Per vertex: its output is one time step of an `RnnToCnnPreProcessor`'s region (the
    /// reference's `[N·T, C, H, W]`), so its shapes above are one step's; a layer vertex then runs
    /// at every step (`LayerShapes::per_step`), and the executor's node carries `[N, len, T]`.
    pub per_step: Vec<bool>,
    /// Per vertex: its rows as a fraction of the minibatch.
    pub row_factors: Vec<RowFactor>,
    /// Vertex index of each network output, in `networkOutputs` order.
    pub outputs: Vec<usize>,
}

fn invalid<X>(m: String) -> Result<X, NnError> {
    Err(NnError::InvalidConfig(m))
}

impl GraphVertexConfig {
    /// `vertex "dense1" (DenseLayer)`, `vertex "add" (ElementWiseVertex)`,
    /// `vertex "f" (FrozenVertex DenseLayer)` — how messages name a vertex.
    pub fn describe(&self) -> String {
        let inner = match self.vertex.layer() {
            Some(l) => l.type_name(),
            None => self.vertex.unfrozen().type_name(),
        };
        if self.vertex.is_frozen() {
            format!("vertex \"{}\" (FrozenVertex {inner})", self.name)
        } else {
            format!("vertex \"{}\" ({inner})", self.name)
        }
    }

    /// Whether this vertex is an OutputLayer/LossLayer (possibly frozen).
    pub fn is_output_layer(&self) -> bool {
        self.vertex.layer().is_some_and(LayerConfig::is_output)
    }

    /// Whether the vertex's parameters are frozen (a FrozenVertex or a FrozenLayer).
    pub fn is_frozen(&self) -> bool {
        self.vertex.is_frozen() || self.vertex.layer().is_some_and(LayerConfig::is_frozen)
    }
}

impl ComputationGraphConfiguration {
    /// Parses and validates a configuration.
    pub fn from_json(json: &str) -> Result<Self, NnError> {
        let conf = Self::parse_json(json)?;
        conf.plan()?;
        Ok(conf)
    }

    /// Parses without validating (unset `nIn` allowed): the input of [`resolve`](Self::resolve).
    pub fn parse_json(json: &str) -> Result<Self, NnError> {
        let conf: ComputationGraphConfiguration = serde_json::from_str(json).map_err(|e| {
            NnError::InvalidConfig(format!("invalid graph configuration JSON: {e}"))
        })?;
        if conf.format_version != FORMAT_VERSION {
            return invalid(format!(
                "unsupported configuration formatVersion {} (this build reads {FORMAT_VERSION})",
                conf.format_version
            ));
        }
        Ok(conf)
    }

    /// Serialises to the §2.4 JSON shape (every field written).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Checks everything serde cannot.
    pub fn validate(&self) -> Result<(), NnError> {
        self.plan().map(|_| ())
    }

    /// Vertex index by name.
    pub fn vertex_index(&self, name: &str) -> Option<usize> {
        self.vertices.iter().position(|v| v.name == name)
    }

    /// Fills every unset `nIn` (0) from the shape of the layer's input, in execution order, then
    /// validates.
    pub fn resolve(&mut self) -> Result<(), NnError> {
        let (sources, order) = self.structure()?;
        let input_shapes = self.input_shapes(&sources)?;
        let mut out: Vec<Option<(Shape, bool)>> = vec![None; self.vertices.len()];
        for &v in &order {
            let ins: Option<Vec<(Shape, bool)>> = sources[v]
                .iter()
                .map(|s| match *s {
                    GraphSource::Input(k) => Some((input_shapes[k], false)),
                    GraphSource::Vertex(u) => out[u],
                })
                .collect();
            let Some(ins) = ins else { continue };
            let (ins, steps): (Vec<Shape>, Vec<bool>) = ins.into_iter().unzip();
            let who = self.vertices[v].describe();
            if let Ok((shape, _)) = pre_processed(&self.vertices[v].vertex, ins[0], steps[0], &who) {
                if let Some(layer) = layer_mut(&mut self.vertices[v].vertex) {
                    infer_n_in(layer, shape);
                }
            }
            // Errors are reported by plan() below, with the full context.
            out[v] = self.vertex_output(v, &ins, &steps, &input_shapes, None).ok();
        }
        let plan = self.plan()?;
        // Build every layer once (nothing is allocated) so rules a layer applies when it is
        // constructed fail here too: Java's build() and the engine's init() agree.
        for (v, vc) in self.vertices.iter().enumerate() {
            if let Some(layer) = vc.vertex.layer() {
                layer.build::<f32>(plan.layer_shapes(v)).map_err(|e| {
                    NnError::InvalidConfig(format!("{}: {}", vc.describe(), e.message()))
                })?;
            }
        }
        Ok(())
    }

    /// Validates the whole graph and returns its execution plan.
    pub fn plan(&self) -> Result<GraphPlan, NnError> {
        super::check_tbptt(self.backprop_type, self.tbptt_fwd_length, self.tbptt_back_length)?;
        if self.backprop_type == super::BackpropType::TruncatedBptt {
            let ends = self.vertices.iter().find(|v| {
                matches!(v.vertex.unfrozen(), VertexConfig::LastTimeStepVertex(_))
                    || v.vertex.layer().is_some_and(LayerConfig::ends_time_axis)
            });
            if let Some(v) = ends {
                return invalid(format!(
                    "{}: truncated BPTT cannot be combined with LastTimeStep/LastTimeStepVertex \
                     (each segment would end at its own last step); use BackpropType.Standard, \
                     or an RnnOutputLayer",
                    v.describe()
                ));
            }
        }
        let (sources, order) = self.structure()?;
        let input_shapes = self.input_shapes(&sources)?;
        let n = self.vertices.len();
        let mut in_shapes = vec![Vec::new(); n];
        let mut out_shapes = vec![Shape::Flat(0); n];
        let mut row_factors = vec![RowFactor::ONE; n];
        let mut per_step = vec![false; n];
        for &v in &order {
            let vc = &self.vertices[v];
            let who = vc.describe();
            let mut ins = Vec::with_capacity(sources[v].len());
            let mut steps = Vec::with_capacity(sources[v].len());
            let mut factor = None;
            for (j, s) in sources[v].iter().enumerate() {
                let (shape, f, step) = match *s {
                    GraphSource::Input(k) => (input_shapes[k], RowFactor::ONE, false),
                    GraphSource::Vertex(u) => (out_shapes[u], row_factors[u], per_step[u]),
                };
                steps.push(step);
                match factor {
                    None => factor = Some(f),
                    Some(f0) if f0 != f => {
                        return invalid(format!(
                            "{who}: input {j} (\"{}\") has {f} rows but input 0 (\"{}\") has {f0}; \
                             inputs of one vertex need the same number of rows",
                            vc.inputs[j], vc.inputs[0]
                        ))
                    }
                    _ => {}
                }
                ins.push(shape);
            }
            let source_desc = |j: usize| match sources[v][j] {
                GraphSource::Input(k) => (
                    None,
                    format!("network input \"{}\"", self.network_inputs[k]),
                ),
                GraphSource::Vertex(u) => {
                    let d = self.vertices[u].describe();
                    (Some(d.clone()), format!("the output of {d}"))
                }
            };
            self.check_formats(v, &sources[v])?;
            let (prev, from) = source_desc(0);
            (out_shapes[v], per_step[v]) = self.vertex_output(
                v,
                &ins,
                &steps,
                &input_shapes,
                Some((prev.as_deref(), &from)),
            )?;
            row_factors[v] = factor.unwrap_or(RowFactor::ONE).times(
                vc.vertex.row_factor(ins.len()).num,
                vc.vertex.row_factor(ins.len()).den,
            );
            if vc.vertex.layer().is_some() {
                ins[0] = pre_processed(&vc.vertex, ins[0], steps[0], &who)?.0;
            }
            in_shapes[v] = ins;
        }
        let outputs: Vec<usize> = self
            .network_outputs
            .iter()
            .map(|o| {
                self.vertex_index(o)
                    .expect("structure() checked the outputs")
            })
            .collect();
        for &o in &outputs {
            if row_factors[o] != RowFactor::ONE {
                return invalid(format!(
                    "{}: a network output must have one row per example, but it has {} rows \
                     (unstack what was stacked before the output)",
                    self.vertices[o].describe(),
                    row_factors[o]
                ));
            }
        }
        Ok(GraphPlan {
            order,
            sources,
            input_shapes,
            in_shapes,
            out_shapes,
            per_step,
            row_factors,
            outputs,
        })
    }

    /// Output shape of vertex `v` for input shapes `ins` (`steps[j]`: input `j` is one time
    /// step of a per-step region), with the vertex's own checks, and whether the output is one
    /// time step; `from` is (the producing vertex's description, a phrase for where input 0 comes
    /// from).
    fn vertex_output(
        &self,
        v: usize,
        ins: &[Shape],
        steps: &[bool],
        input_shapes: &[Shape],
        from: Option<(Option<&str>, &str)>,
    ) -> Result<(Shape, bool), NnError> {
        let vc = &self.vertices[v];
        let who = vc.describe();
        let fail = |m: String| NnError::InvalidConfig(format!("{who}: {m}"));
        match vc.vertex.unfrozen() {
            VertexConfig::LayerVertex(l) => {
                let (input, step) = pre_processed(&vc.vertex, ins[0], steps[0], &who)?;
                let (prev, from) = from.unwrap_or((None, "its input"));
                Ok((check_layer(&l.layer, &who, input, prev, from)?, step))
            }
            // The same region rule as a layer vertex's own preprocessor.
            VertexConfig::PreprocessorVertex(p) => {
                region_input(false, Some(&p.pre_processor), ins[0], steps[0]).map_err(fail)
            }
            other => {
                let step = steps.iter().any(|&s| s);
                if step {
                    if let Some(j) = steps.iter().position(|&s| !s) {
                        let k = steps.iter().position(|&s| s).unwrap_or(0);
                        return Err(fail(format!(
                            "input {k} (\"{}\") is one time step of an RnnToCnnPreProcessor's \
                             region but input {j} (\"{}\") is not; close the region (a \
                             CnnToRnnPreProcessor or a recurrent layer) before combining them",
                            vc.inputs[k], vc.inputs[j]
                        )));
                    }
                    // The time-series vertices need whole sequences; every other vertex runs on
                    // each step's values as the reference's [N·T, ...] rows (PerStepVertex).
                    if matches!(
                        other,
                        VertexConfig::LastTimeStepVertex(_)
                            | VertexConfig::DuplicateToTimeSeriesVertex(_)
                    ) {
                        return Err(fail(format!(
                            "a {} cannot run inside the per-step region of an \
                             RnnToCnnPreProcessor (its input is one time step, {}); close the \
                             region first (a CnnToRnnPreProcessor or a recurrent layer)",
                            other.type_name(),
                            ins[0]
                        )));
                    }
                }
                let aux = self.aux_input(v)?.map(|k| input_shapes[k]);
                let out = other.output_shape(ins, aux).map_err(fail)?;
                if step && out.is_seq() {
                    return Err(fail(format!(
                        "its output per time step would be a sequence ({out}) inside the per-step \
                         region of an RnnToCnnPreProcessor; reshape each step to [-1, c, h, w] or \
                         [-1, size], or close the region first"
                    )));
                }
                Ok((out, step))
            }
        }
    }

    /// The `rnnDataFormat` of vertex `v`'s preprocessor (a layer vertex's or a
    /// `PreprocessorVertex`) against the layout of what it reads, and that of a
    /// `PreprocessorVertex` feeding layer vertex `v` against the layer's (`check_pre_format`).
    fn check_formats(&self, v: usize, sources: &[GraphSource]) -> Result<(), NnError> {
        let vc = &self.vertices[v];
        let fail = |m: String| NnError::InvalidConfig(format!("{}: {m}", vc.describe()));
        let producer = match sources.first() {
            Some(&GraphSource::Input(k)) => {
                let t = self.input_types.as_ref().and_then(|t| t.get(k));
                input_type_format(t)
                    .map(|f| (f, format!("network input \"{}\"", self.network_inputs[k])))
            }
            Some(&GraphSource::Vertex(u)) => {
                let layer = self.vertices[u].vertex.layer();
                layer.and_then(|l| l.rnn_format()).map(|f| (f, self.vertices[u].describe()))
            }
            None => None,
        };
        match vc.vertex.unfrozen() {
            VertexConfig::LayerVertex(l) => {
                let me = l.layer.rnn_format().map(|f| (f, "the layer itself".to_string()));
                check_pre_format(l.pre_processor.as_ref(), producer, me.clone()).map_err(fail)?;
                if let Some(&GraphSource::Vertex(u)) = sources.first() {
                    if let VertexConfig::PreprocessorVertex(p) = self.vertices[u].vertex.unfrozen() {
                        let me = me.map(|(f, _)| (f, vc.describe()));
                        check_pre_format(Some(&p.pre_processor), None, me).map_err(|m| {
                            NnError::InvalidConfig(format!("{}: {m}", self.vertices[u].describe()))
                        })?;
                    }
                }
                Ok(())
            }
            VertexConfig::PreprocessorVertex(p) => {
                check_pre_format(Some(&p.pre_processor), producer, None).map_err(fail)
            }
            _ => Ok(()),
        }
    }

    /// The network input a vertex is tied to by name (`maskArrayInputName`, `inputName`).
    pub fn aux_input(&self, v: usize) -> Result<Option<usize>, NnError> {
        let Some(name) = self.vertices[v].vertex.unfrozen().aux_input_name() else {
            return Ok(None);
        };
        match self.network_inputs.iter().position(|n| n == name) {
            Some(k) => Ok(Some(k)),
            None => Err(NnError::InvalidConfig(format!(
                "{}: \"{name}\" is not a network input (the inputs are {:?})",
                self.vertices[v].describe(),
                self.network_inputs
            ))),
        }
    }

    /// Names, connections, input counts, outputs, cycles and connectivity; returns every
    /// vertex's sources and the execution order.
    fn structure(&self) -> Result<(Vec<Vec<GraphSource>>, Vec<usize>), NnError> {
        if self.network_inputs.is_empty() {
            return invalid("the graph has no network inputs: call addInputs(..)".into());
        }
        if self.network_outputs.is_empty() {
            return invalid("the graph has no network outputs: call setOutputs(..)".into());
        }
        if self.vertices.is_empty() {
            return invalid("the graph has no layers or vertices".into());
        }
        let mut names: HashMap<&str, GraphSource> = HashMap::new();
        for (k, name) in self.network_inputs.iter().enumerate() {
            if name.is_empty() {
                return invalid(format!("network input {k} has an empty name"));
            }
            if names.insert(name, GraphSource::Input(k)).is_some() {
                return invalid(format!(
                    "duplicate name \"{name}\": network inputs must be unique"
                ));
            }
        }
        for (v, vc) in self.vertices.iter().enumerate() {
            if vc.name.is_empty() {
                return invalid(format!(
                    "vertex {v} ({}) has an empty name",
                    vc.vertex.type_name()
                ));
            }
            match names.insert(&vc.name, GraphSource::Vertex(v)) {
                Some(GraphSource::Input(_)) => {
                    return invalid(format!(
                        "duplicate name \"{}\": {} has the name of a network input",
                        vc.name,
                        vc.describe()
                    ))
                }
                Some(GraphSource::Vertex(_)) => {
                    return invalid(format!(
                        "duplicate name \"{}\": two vertices are called that (second: {})",
                        vc.name,
                        vc.describe()
                    ))
                }
                None => {}
            }
            if let Some(l) = vc.vertex.layer() {
                if let Some(n) = l.name() {
                    if n != vc.name {
                        return invalid(format!(
                            "{}: its layer is named \"{n}\"; a layer in a graph takes its vertex's \
                             name",
                            vc.describe()
                        ));
                    }
                }
            }
            if let VertexConfig::FrozenVertex(f) = &vc.vertex {
                if f.vertex.is_frozen() {
                    return invalid(format!(
                        "{}: a FrozenVertex cannot wrap another FrozenVertex",
                        vc.describe()
                    ));
                }
            }
        }
        if let Some(types) = &self.input_types {
            if types.len() != self.network_inputs.len() {
                return invalid(format!(
                    "inputTypes has {} entries but the graph has {} network inputs ({:?}): give \
                     one input type per input, in the order of addInputs(..)",
                    types.len(),
                    self.network_inputs.len(),
                    self.network_inputs
                ));
            }
            for (k, t) in types.iter().enumerate() {
                super::validate::check_input_type(t).map_err(|e| {
                    NnError::InvalidConfig(format!("network input \"{}\": {e}", self.network_inputs[k]))
                })?;
            }
        }
        let mut sources = Vec::with_capacity(self.vertices.len());
        for vc in &self.vertices {
            let who = vc.describe();
            let (lo, hi) = vc.vertex.input_count();
            let n = vc.inputs.len();
            if n < lo || n > hi {
                let want = if lo == hi {
                    format!("exactly {lo}")
                } else {
                    format!("at least {lo}")
                };
                let hint = if vc.vertex.layer().is_some() && n > 1 {
                    "; merge several inputs with a MergeVertex first (GraphBuilder.addLayer does \
                     that for you)"
                } else {
                    ""
                };
                return invalid(format!("{who}: has {n} input(s) but takes {want}{hint}"));
            }
            let mut src = Vec::with_capacity(n);
            for name in &vc.inputs {
                match names.get(name.as_str()) {
                    Some(s) => src.push(*s),
                    None => {
                        return invalid(format!(
                            "{who}: unknown input \"{name}\" (neither a network input nor a vertex)"
                        ))
                    }
                }
            }
            sources.push(src);
        }
        // Outputs: existing vertices, each a loss layer, listed once.
        let mut seen = BTreeSet::new();
        for o in &self.network_outputs {
            let Some(v) = self.vertex_index(o) else {
                return invalid(match names.get(o.as_str()) {
                    Some(GraphSource::Input(_)) => format!(
                        "network output \"{o}\" is a network input; outputs must be output layers"
                    ),
                    _ => format!("network output \"{o}\" is not a vertex of the graph"),
                });
            };
            if !seen.insert(v) {
                return invalid(format!(
                    "network output \"{o}\" is listed twice in setOutputs"
                ));
            }
            if !self.vertices[v].is_output_layer() {
                return invalid(format!(
                    "{}: a network output must be an OutputLayer or LossLayer (it defines the \
                     loss function)",
                    self.vertices[v].describe()
                ));
            }
        }
        let mut consumers = vec![Vec::new(); self.vertices.len()];
        for (v, src) in sources.iter().enumerate() {
            for s in src {
                if let GraphSource::Vertex(u) = *s {
                    consumers[u].push(v);
                }
            }
        }
        for (v, vc) in self.vertices.iter().enumerate() {
            if vc.is_output_layer() && !seen.contains(&v) {
                return invalid(format!(
                    "{}: an output layer must be a network output; add it to setOutputs(..) or \
                     use a DenseLayer",
                    vc.describe()
                ));
            }
            if vc.is_output_layer() && !consumers[v].is_empty() {
                return invalid(format!(
                    "{}: an output layer cannot feed other vertices (it feeds \"{}\")",
                    vc.describe(),
                    self.vertices[consumers[v][0]].name
                ));
            }
        }
        let order = self.topological_order(&sources, &consumers)?;
        // Connectivity: everything must lead to an output.
        let mut useful = vec![false; self.vertices.len()];
        let mut stack: Vec<usize> = seen.iter().copied().collect();
        let mut input_used = vec![false; self.network_inputs.len()];
        while let Some(v) = stack.pop() {
            if std::mem::replace(&mut useful[v], true) {
                continue;
            }
            for s in &sources[v] {
                match *s {
                    GraphSource::Vertex(u) => stack.push(u),
                    GraphSource::Input(k) => input_used[k] = true,
                }
            }
        }
        if let Some(v) = useful.iter().position(|u| !u) {
            return invalid(format!(
                "{}: is not connected to any network output (remove it or connect it)",
                self.vertices[v].describe()
            ));
        }
        if let Some(k) = input_used.iter().position(|u| !u) {
            return invalid(format!(
                "network input \"{}\" is not used by any vertex",
                self.network_inputs[k]
            ));
        }
        Ok((sources, order))
    }

    /// Kahn's algorithm; among ready vertices the earliest added runs first.
    fn topological_order(
        &self,
        sources: &[Vec<GraphSource>],
        consumers: &[Vec<usize>],
    ) -> Result<Vec<usize>, NnError> {
        let n = self.vertices.len();
        let mut pending: Vec<usize> = sources
            .iter()
            .map(|s| {
                s.iter()
                    .filter(|x| matches!(x, GraphSource::Vertex(_)))
                    .count()
            })
            .collect();
        let mut ready: BTreeSet<usize> = (0..n).filter(|&v| pending[v] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(v) = ready.pop_first() {
            order.push(v);
            for &c in &consumers[v] {
                pending[c] -= 1;
                if pending[c] == 0 {
                    ready.insert(c);
                }
            }
        }
        if order.len() == n {
            return Ok(order);
        }
        // Walk back along unfinished inputs until a vertex repeats: that is a cycle.
        let start = (0..n)
            .find(|&v| pending[v] > 0)
            .expect("some vertex is unfinished");
        let mut path = vec![start];
        let mut v = start;
        loop {
            let u = sources[v]
                .iter()
                .find_map(|s| match *s {
                    GraphSource::Vertex(u) if pending[u] > 0 => Some(u),
                    _ => None,
                })
                .expect("an unfinished vertex has an unfinished input");
            if let Some(p) = path.iter().position(|&x| x == u) {
                // `path` follows inputs backwards; data flows the other way.
                let name = |x: usize| self.vertices[x].name.as_str();
                let mut cycle = vec![name(u)];
                cycle.extend(path[p + 1..].iter().rev().map(|&x| name(x)));
                cycle.push(name(u));
                return invalid(format!(
                    "the graph has a cycle: {} (vertex \"{}\" depends on its own output)",
                    cycle
                        .iter()
                        .map(|c| format!("\"{c}\""))
                        .collect::<Vec<_>>()
                        .join(" -> "),
                    self.vertices[u].name
                ));
            }
            path.push(u);
            v = u;
        }
    }

    /// The shape of every network input: its input type, or what the layers it feeds expect.
    fn input_shapes(&self, sources: &[Vec<GraphSource>]) -> Result<Vec<Shape>, NnError> {
        if let Some(types) = &self.input_types {
            return Ok(types.iter().map(InputType::shape).collect());
        }
        let mut shapes = Vec::with_capacity(self.network_inputs.len());
        for (k, name) in self.network_inputs.iter().enumerate() {
            let mut found: Option<(Shape, String)> = None;
            let mut unsized_reader: Option<String> = None;
            for (v, src) in sources.iter().enumerate() {
                if !src.contains(&GraphSource::Input(k)) {
                    continue;
                }
                let vc = &self.vertices[v];
                let wants = match (&vc.vertex.unfrozen(), vc.vertex.layer()) {
                    (VertexConfig::LayerVertex(lv), Some(l)) if lv.pre_processor.is_none() => {
                        l.implied_input()
                    }
                    _ => None,
                };
                // A reader without an nIn (a vertex, a preprocessed layer) says nothing here; its
                // own shape rule checks what it gets.
                let Some(s) = wants else {
                    unsized_reader.get_or_insert_with(|| vc.describe());
                    continue;
                };
                match &found {
                    Some((s0, who0)) if *s0 != s => {
                        return invalid(format!(
                            "network input \"{name}\": {who0} expects {s0} but {} expects {s}",
                            vc.describe()
                        ))
                    }
                    Some(_) => {}
                    None => found = Some((s, vc.describe())),
                }
            }
            match (found, unsized_reader) {
                (Some((s, _)), _) => shapes.push(s),
                (None, Some(reader)) => {
                    return invalid(format!(
                        "network input \"{name}\": its size is unknown ({reader} reads it and has \
                         no nIn to take it from): call setInputTypes(..)"
                    ))
                }
                (None, None) => {
                    return invalid(format!(
                        "network input \"{name}\" is not used by any vertex"
                    ))
                }
            }
        }
        Ok(shapes)
    }
}

/// The input shape a LayerVertex's layer sees (after its preprocessor, if any) and whether it
/// runs at every time step, by the rule a MultiLayerNetwork's layers follow; `per_step`: its
/// input is one step of a region.
fn pre_processed(
    vertex: &VertexConfig,
    input: Shape,
    per_step: bool,
    who: &str,
) -> Result<(Shape, bool), NnError> {
    match vertex.unfrozen() {
        VertexConfig::LayerVertex(l) => {
            region_layer(&l.layer, l.pre_processor.as_ref(), input, per_step)
                .map_err(|m| NnError::InvalidConfig(format!("{who}: {m}")))
        }
        _ => Ok((input, per_step)),
    }
}

impl GraphPlan {
    /// The shapes of layer vertex `v` (one step's, with `per_step`, inside a region).
    pub fn layer_shapes(&self, v: usize) -> super::LayerShapes {
        super::LayerShapes {
            input: self.in_shapes[v][0],
            output: self.out_shapes[v],
            per_step: self.per_step[v],
        }
    }

    /// For a non-layer vertex inside a per-step region (its inputs are one time step), the
    /// per-step shapes of its inputs, which `PerStepVertex` runs it on; `None` elsewhere. A
    /// `PreprocessorVertex` opening or closing a region moves no values and runs as it is.
    pub fn step_shapes(&self, v: usize, vertex: &VertexConfig) -> Option<Vec<Shape>> {
        let inside = self.sources[v]
            .iter()
            .any(|s| matches!(*s, GraphSource::Vertex(u) if self.per_step[u]));
        let reshapes = matches!(
            vertex.unfrozen(),
            VertexConfig::LayerVertex(_) | VertexConfig::PreprocessorVertex(_)
        );
        (inside && !reshapes).then(|| self.in_shapes[v].clone())
    }

    /// The shapes the executor's node of non-layer vertex `v` has (inputs, output): those of one
    /// step of a region as the `[N, len, T]` sequences the node carries.
    pub fn node_shapes(&self, v: usize) -> (Vec<Shape>, Shape) {
        let seq = |s: Shape, step: bool| if step { Shape::Seq { c: s.len(), len: 0 } } else { s };
        let ins = self.in_shapes[v]
            .iter()
            .zip(&self.sources[v])
            .map(|(&s, src)| match *src {
                GraphSource::Vertex(u) => seq(s, self.per_step[u]),
                GraphSource::Input(_) => s,
            })
            .collect();
        (ins, seq(self.out_shapes[v], self.per_step[v]))
    }
}

fn layer_mut(vertex: &mut VertexConfig) -> Option<&mut LayerConfig> {
    match vertex.unfrozen_mut() {
        VertexConfig::LayerVertex(l) => Some(&mut l.layer),
        _ => None,
    }
}
