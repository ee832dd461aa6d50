//! ferrodl-nn: configurations, layers, losses and `MultiLayerNetwork` (no JNI).
//!
//! Entry points: [`MultiLayerConfiguration::from_json`] then [`MultiLayerNetwork::new`]; see
//! `docs/ARCHITECTURE.md` §2–§4 for the JSON shape, numerics and API contracts.

pub mod activation;
pub mod batch;
pub mod computation_graph;
pub mod config;
pub mod error;
mod executor;
mod tbptt;
pub mod init;
pub mod layers;
pub mod layout;
pub mod loss;
pub mod network;
pub mod regularization;
pub mod vertices;

pub use computation_graph::ComputationGraph;
pub use config::{
    Activation, ComputationGraphConfiguration, DenseLayerConfig, GraphVertexConfig, InputType,
    LayerConfig, LayerShapes, LossFunction, MultiLayerConfiguration, OutputLayerConfig, Shape,
    UpdaterConfig, WeightInit,
};
pub use error::NnError;
pub use executor::ParamInit;
pub use layers::{Layer, ParamKind, ParamSpec};
pub use loss::LabelsMask;
pub use network::MultiLayerNetwork;

/// Re-exported so callers can name the element type (`MultiLayerNetwork<f64>` etc.).
pub use ferrodl_tensor::Scalar;

#[cfg(test)]
mod send_check {
    fn assert_send<T: Send>() {}
    #[test]
    fn network_is_send() {
        assert_send::<crate::MultiLayerNetwork>();
        assert_send::<crate::MultiLayerNetwork<f64>>();
    }
}
