//! JSON pieces both network classes' info calls use (`NativeNetwork.layerInfo`/`paramTable`,
//! `NativeGraph.vertexInfo`/`paramTable`), written once.

use ferrodl_nn::Shape;
use serde_json::{json, Value};
use std::ops::Range;

/// `[{"key":"0_W","offset":0,"length":6,"shape":[2,3]}, ...]` in `params()` order.
pub fn param_table_json(table: Vec<(String, Range<usize>, Vec<usize>)>) -> String {
    let rows: Vec<Value> = table
        .into_iter()
        .map(|(key, range, shape)| {
            json!({
                "key": key,
                "offset": range.start,
                "length": range.len(),
                "shape": shape,
            })
        })
        .collect();
    Value::Array(rows).to_string()
}

/// Per-example shape as an array: `[n]`, `[C, H, W]` or `[C, L]`.
pub fn shape_json(s: Shape) -> Value {
    match s {
        Shape::Flat(n) => json!([n]),
        Shape::Image { c, h, w } => json!([c, h, w]),
        Shape::Seq { c, len } => json!([c, len]),
    }
}

/// An enum's JSON name (`"RELU"`, `"MCXENT"`), as the configuration writes it.
pub fn enum_name<E: serde::Serialize>(e: &E) -> Value {
    serde_json::to_value(e).unwrap_or(Value::Null)
}
