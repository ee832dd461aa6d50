//! The driver's master copy of the parameters, kept by applying every update the relay receives.

use crate::payload::{read_update, Snapshot};
use ferrodl_relay::{MasterState, WorkerId};

/// Parameters and counters on the driver. Every update message is subtracted as it arrives, so
/// the final model never has to be collected from the workers.
pub struct MasterCopy {
    snapshot: Snapshot,
    applied: u64,
}

impl MasterCopy {
    /// `updater_state`: the fit's start updater state, handed to every connecting worker (empty: none).
    pub fn new(params: Vec<f32>, updater_state: Vec<f32>, iteration: u64, epoch: u64) -> Self {
        MasterCopy {
            snapshot: Snapshot {
                iteration,
                epoch,
                params,
                updater_state,
            },
            applied: 0,
        }
    }

    pub fn state(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Number of update messages applied so far.
    pub fn applied(&self) -> u64 {
        self.applied
    }
}

impl MasterState for MasterCopy {
    fn apply(&mut self, worker: WorkerId, payload: &[u8]) -> Result<(), String> {
        let (iteration, epoch, encoded) = read_update(payload).map_err(|e| e.to_string())?;
        // decode_add validates the whole message before touching the parameters.
        ferrodl_comm::decode_add(encoded, -1.0, &mut self.snapshot.params)
            .map_err(|e| format!("update from partition {}: {e}", worker.partition))?;
        self.snapshot.iteration = self.snapshot.iteration.max(iteration);
        self.snapshot.epoch = self.snapshot.epoch.max(epoch);
        self.applied += 1;
        Ok(())
    }

    fn snapshot(&self) -> Vec<u8> {
        self.snapshot.to_bytes()
    }
}
