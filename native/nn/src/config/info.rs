//! What the Java builders ask the engine about a configuration: the completed configuration
//! (`nIn` inferred) and the activation type of every layer or vertex. One place for the shape
//! rules; the JNI class `NativeConfiguration` only passes strings through.

use super::validate::layer_num_params;
use super::{
    ComputationGraphConfiguration, InputType, MultiLayerConfiguration, Shape,
};
use crate::error::NnError;
use serde_json::{json, Value};

impl Shape {
    /// The reference's `InputType` describing activations of this shape (images as
    /// `convolutional`, `[C, L]` as `recurrent`).
    pub fn input_type(self) -> InputType {
        match self {
            Shape::Flat(size) => InputType::FeedForward { size },
            Shape::Image { c, h, w } => InputType::Convolutional {
                height: h,
                width: w,
                channels: c,
            },
            Shape::Seq { c, len } => InputType::Recurrent {
                size: c,
                time_series_length: len,
                format: Default::default(),
            },
        }
    }
}

fn type_json(s: Shape) -> Value {
    serde_json::to_value(s.input_type()).unwrap_or(Value::Null)
}

impl MultiLayerConfiguration {
    /// Parses `json`, infers every unset `nIn`, validates, and returns the completed JSON.
    pub fn resolve_json(json: &str) -> Result<String, NnError> {
        let mut conf = Self::parse_json(json)?;
        conf.resolve()?;
        Ok(conf.to_json())
    }

    /// Per layer: `inputType`, `outputType` (InputType objects) and `numParams`.
    pub fn layer_types_json(&self) -> Result<String, NnError> {
        let shapes = self.layer_shapes()?;
        let rows: Vec<Value> = self
            .layers
            .iter()
            .zip(&shapes)
            .map(|(l, s)| {
                json!({
                    "inputType": type_json(s.input),
                    "outputType": type_json(s.output),
                    "numParams": layer_num_params(l, s),
                })
            })
            .collect();
        Ok(Value::Array(rows).to_string())
    }
}

impl ComputationGraphConfiguration {
    /// Parses `json`, infers every unset `nIn`, validates, and returns the completed JSON.
    pub fn resolve_json(json: &str) -> Result<String, NnError> {
        let mut conf = Self::parse_json(json)?;
        conf.resolve()?;
        Ok(conf.to_json())
    }

    /// `order` (vertex names in execution order), `networkInputs` (`name`, `type`) and
    /// `vertices` (per vertex in configuration order: `name`, `inputTypes`, `outputType`,
    /// `numParams`).
    pub fn vertex_types_json(&self) -> Result<String, NnError> {
        let plan = self.plan()?;
        let inputs: Vec<Value> = self
            .network_inputs
            .iter()
            .zip(&plan.input_shapes)
            .map(|(n, s)| json!({"name": n, "type": type_json(*s)}))
            .collect();
        let vertices: Vec<Value> = self
            .vertices
            .iter()
            .enumerate()
            .map(|(v, vc)| {
                let params =
                    vc.vertex.layer().map_or(0, |l| layer_num_params(l, &plan.layer_shapes(v)));
                json!({
                    "name": vc.name,
                    "inputTypes": plan.in_shapes[v].iter().map(|s| type_json(*s)).collect::<Vec<_>>(),
                    "outputType": type_json(plan.out_shapes[v]),
                    "numParams": params,
                })
            })
            .collect();
        let order: Vec<&str> = plan
            .order
            .iter()
            .map(|&v| self.vertices[v].name.as_str())
            .collect();
        Ok(json!({"order": order, "networkInputs": inputs, "vertices": vertices}).to_string())
    }
}
