//! The driver's master copy of the parameters, kept by applying every update the relay receives.

use crate::payload::{add_final_states, read_update, Snapshot};
use ferrodl_relay::{MasterState, WorkerId};
use std::sync::{Arc, Mutex, MutexGuard};

/// The sum of the final updater states the workers sent with their FINISH, read by the driver
/// once the relay has stopped.
#[derive(Debug, Default)]
pub struct FinalUpdaterStates {
    sum: Vec<f64>,
    count: u32,
}

impl FinalUpdaterStates {
    /// The mean of the states received (None: none was).
    pub fn mean(&self) -> Option<Vec<f32>> {
        (self.count > 0).then(|| self.sum.iter().map(|s| (s / f64::from(self.count)) as f32).collect())
    }

    /// How many states were received.
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// Shared between the relay's master copy and the driver.
pub type SharedFinalStates = Arc<Mutex<FinalUpdaterStates>>;

pub(crate) fn lock_finals(f: &SharedFinalStates) -> MutexGuard<'_, FinalUpdaterStates> {
    f.lock().unwrap_or_else(|e| e.into_inner())
}

/// Parameters and counters on the driver. Every update message is subtracted as it arrives, so
/// the final model never has to be collected from the workers.
pub struct MasterCopy {
    snapshot: Snapshot,
    applied: u64,
    /// Where the workers' final updater states are summed (the driver's relay), or None (a relay
    /// tree node, which refuses them).
    finals: Option<SharedFinalStates>,
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
            finals: None,
        }
    }

    /// Also takes the workers' final updater states (each as long as the start state), summing
    /// them into `finals`.
    pub fn with_final_states(mut self, finals: SharedFinalStates) -> Self {
        lock_finals(&finals).sum = vec![0.0; self.snapshot.updater_state.len()];
        self.finals = Some(finals);
        self
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

    fn finish(&mut self, worker: WorkerId, state: &[u8]) -> Result<(), String> {
        if state.is_empty() {
            return Ok(());
        }
        let Some(finals) = &self.finals else {
            return Err(format!(
                "partition {}: a relay tree node takes no final updater state",
                worker.partition
            ));
        };
        let mut f = lock_finals(finals);
        // checked whole before anything is added
        let mut sum = std::mem::take(&mut f.sum);
        let res = add_final_states(state, &mut sum);
        f.sum = sum;
        let count = res.map_err(|e| format!("partition {}: {e}", worker.partition))?;
        f.count += count;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::write_final_states;

    #[test]
    fn final_updater_states_are_averaged_and_checked_whole() {
        let w = WorkerId { partition: 1, attempt: 0 };
        let finals = SharedFinalStates::default();
        let mut m = MasterCopy::new(vec![0.0; 2], vec![0.0; 3], 0, 0).with_final_states(finals.clone());
        m.finish(w, &write_final_states(&[&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]]).unwrap()).unwrap();
        m.finish(w, &write_final_states(&[&[2.0, 5.0, -1.0]]).unwrap()).unwrap();
        m.finish(w, &[]).unwrap(); // a worker without states
        // refused whole: wrong length, a NaN, truncated bytes; nothing of them is added
        let e = m.finish(w, &write_final_states(&[&[1.0, 2.0]]).unwrap()).unwrap_err();
        assert!(e.contains("partition 1: final updater states: states of 2 values, but the network's updater state has 3"), "{e}");
        let e = m.finish(w, &write_final_states(&[&[1.0, f32::NAN, 0.0]]).unwrap()).unwrap_err();
        assert!(e.contains("value 1 is NaN"), "{e}");
        let bytes = write_final_states(&[&[9.0, 9.0, 9.0]]).unwrap();
        assert!(m.finish(w, &bytes[..bytes.len() - 1]).is_err());
        let f = lock_finals(&finals);
        assert_eq!((f.mean().unwrap(), f.count()), (vec![2.0, 3.0, 1.0], 3));
        drop(f);
        // a relay tree node's master copy takes none
        let mut node = MasterCopy::new(vec![0.0; 2], vec![0.0; 3], 0, 0);
        let e = node.finish(w, &write_final_states(&[&[1.0, 2.0, 3.0]]).unwrap()).unwrap_err();
        assert!(e.contains("a relay tree node takes no final updater state"), "{e}");
        assert!(write_final_states(&[&[1.0], &[1.0, 2.0]]).is_err());
    }
}
