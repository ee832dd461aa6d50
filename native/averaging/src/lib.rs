//! ferrodl-averaging: the averaging rounds of `ParameterAveragingTrainingMaster` inside one Spark
//! job, without JNI.
//!
//! The per-split design (one Spark job per averaging round: broadcast the parameters, run one task
//! per worker, send every worker's parameters and updater state back as a task result) pays a
//! Spark job, a broadcast and two big task results per round. Here every worker task of the fit
//! keeps its network for all rounds and, after each round, sends one [`RoundMessage`] (its dense
//! parameters and updater state as little-endian f32, or "nothing to contribute") through the
//! driver's relay (`ferrodl-relay`, which authenticates and optionally seals it), receives the
//! other workers' messages of that round, and takes their [`average`]: the sum in partition order
//! in f64 divided by the number of contributors, as f32 — the same arithmetic, in the same order,
//! on every worker and on the driver ([`AveragingMaster`], the relay's state, which keeps the last
//! round's contributions and the counters and computes the final average once at the end), so all
//! of them hold bit-identical parameters after every round, equal to what the driver-side average
//! of the per-split design gives.
//!
//! Traffic per round: each worker sends one message and receives `workers - 1`; the relay
//! forwards `workers × (workers - 1)` messages (docs/ARCHITECTURE.md §9.2).

mod local;
pub mod message;
pub mod master;
pub mod worker;

pub use master::{AveragingDriver, AveragingMaster, FinalState};
pub use message::{average, mean_into, Average, RoundMessage};
pub use worker::{AveragingWorker, AveragingWorkerConfig, Summary};
