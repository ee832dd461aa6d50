//! ferrodl-sharing: gradient-sharing training (SharedTrainingMaster) without JNI.
//!
//! [`WorkerNode`] and [`ReplicaTrainer`] run inside a Spark task: replicas train, threshold-encode
//! their updates (ferrodl-comm) and exchange them through the driver's relay (ferrodl-relay).
//! [`MasterCopy`] is the relay's state on the driver: the parameters, kept current by applying
//! every message. See DESIGN.md §3 and docs/ARCHITECTURE.md.

pub mod driver;
pub mod error;
pub mod master;
pub mod payload;
pub mod replica_network;
pub mod thresholds;
pub mod worker;

pub use driver::{relay_stats_json, start_tree_node, DriverRelay, RelaySettings};
pub use error::SharingError;
pub use master::MasterCopy;
pub use payload::Snapshot;
pub use replica_network::{ReplicaBatch, ReplicaNetwork};
pub use thresholds::average_threshold_states;
pub use worker::{
    NodeReport, ReplicaReport, ReplicaTrainer, StepRecord, StepTimes, WorkerConfig, WorkerNode,
};
