//! The driver's master copy of the parameters, kept by applying every update the relay receives.

use crate::payload::{add_final_states, read_update, snapshot_bytes};
use ferrodl_relay::{MasterState, SnapshotBytes, WorkerId};
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
        (self.count > 0).then(|| self.sum.iter().map(|s| self.mean_of(*s)).collect())
    }

    /// The mean written into `out` (the driver network's updater state, no vector of its own):
    /// `Ok(false)` when no state was received (`out` is left alone); refuses another length.
    pub fn mean_into(&self, out: &mut [f32]) -> Result<bool, String> {
        if self.count == 0 {
            return Ok(false);
        }
        if out.len() != self.sum.len() {
            return Err(format!(
                "the workers' final updater states have {} values but the driver's network has {}",
                self.sum.len(),
                out.len()
            ));
        }
        for (o, s) in out.iter_mut().zip(&self.sum) {
            *o = self.mean_of(*s);
        }
        Ok(true)
    }

    fn mean_of(&self, sum: f64) -> f32 {
        (sum / f64::from(self.count)) as f32
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
///
/// The arrays are shared with the snapshots the relay is still sending (copy on write): a
/// connect costs a few pointer copies under the relay's lock, workers connecting between two
/// updates share one copy of the parameters, and every worker shares the one copy of the fit's
/// start updater state (3.5 MB for the MNIST MLP with Adam, 200 MB for 25M parameters), which
/// never changes. An update that arrives while a snapshot still holds the parameters copies them
/// once before applying.
pub struct MasterCopy {
    iteration: u64,
    epoch: u64,
    params: Arc<Vec<f32>>,
    updater_state: Arc<Vec<f32>>,
    applied: u64,
    /// Where the workers' final updater states are summed (the driver's relay), or None (a relay
    /// tree node, which refuses them).
    finals: Option<SharedFinalStates>,
}

impl MasterCopy {
    /// `updater_state`: the fit's start updater state, handed to every connecting worker (empty: none).
    pub fn new(params: Vec<f32>, updater_state: Vec<f32>, iteration: u64, epoch: u64) -> Self {
        MasterCopy {
            iteration,
            epoch,
            params: Arc::new(params),
            updater_state: Arc::new(updater_state),
            applied: 0,
            finals: None,
        }
    }

    /// Also takes the workers' final updater states (each as long as the start state), summing
    /// them into `finals`.
    pub fn with_final_states(mut self, finals: SharedFinalStates) -> Self {
        lock_finals(&finals).sum = vec![0.0; self.updater_state.len()];
        self.finals = Some(finals);
        self
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
        ferrodl_comm::decode_add(encoded, -1.0, Arc::make_mut(&mut self.params).as_mut_slice())
            .map_err(|e| format!("update from partition {}: {e}", worker.partition))?;
        self.iteration = self.iteration.max(iteration);
        self.epoch = self.epoch.max(epoch);
        self.applied += 1;
        Ok(())
    }

    fn snapshot(&self) -> SnapshotBytes {
        snapshot_bytes(self.iteration, self.epoch, &self.params, &self.updater_state)
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

    /// Snapshots share the master copy's arrays: connects between two updates share one copy of
    /// the parameters, every connect shares the start updater state, and an update that arrives
    /// while a snapshot is still being sent changes the master copy, never the bytes being sent.
    #[test]
    fn snapshots_share_the_arrays_and_an_update_copies_the_parameters_first() {
        use crate::payload::{write_update, Snapshot};
        let w = WorkerId { partition: 2, attempt: 0 };
        let params: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
        let updater: Vec<f32> = (0..2000).map(|i| -(i as f32)).collect();
        let mut m = MasterCopy::new(params.clone(), updater.clone(), 5, 1);
        let ptrs = |s: &SnapshotBytes| s.parts().map(<[u8]>::as_ptr).collect::<Vec<_>>();
        let (a, b) = (m.snapshot(), m.snapshot());
        let before = Snapshot { iteration: 5, epoch: 1, params: params.clone(), updater_state: updater.clone() };
        assert_eq!(a.to_vec(), before.to_bytes(), "the wire layout of Snapshot::to_bytes");
        assert_eq!(ptrs(&a)[1..], ptrs(&b)[1..], "no copy of the arrays between two connects");
        assert_eq!(ptrs(&a)[1], params_ptr(&m), "the snapshot holds the master copy itself");

        // an update of +1 at index 3 (the master copy subtracts it), from iteration 9
        let mut residual = vec![0.0f32; 1000];
        residual[3] = 1.0;
        let mut encoded = Vec::new();
        ferrodl_comm::encode(&mut residual, 1.0, &mut encoded).unwrap();
        let mut payload = Vec::new();
        write_update(9, 1, &encoded, &mut payload);
        m.apply(w, &payload).unwrap();
        assert_eq!(a.to_vec(), before.to_bytes(), "the bytes being sent did not change");
        let c = m.snapshot();
        let mut after = before.clone();
        after.iteration = 9;
        after.params[3] -= 1.0;
        assert_eq!(Snapshot::from_bytes(&c.to_vec()).unwrap(), after);
        assert_ne!(ptrs(&c)[1], ptrs(&a)[1], "the update copied the parameters once");
        assert_eq!(ptrs(&c)[2], ptrs(&a)[2], "one start updater state for every connect");
        // with no snapshot left holding them, updates apply in place
        drop((a, b, c));
        let p = params_ptr(&m);
        m.apply(w, &payload).unwrap();
        assert_eq!(params_ptr(&m), p);
        assert_eq!(m.applied(), 2);
    }

    fn params_ptr(m: &MasterCopy) -> *const u8 {
        m.params.as_ptr().cast()
    }

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
        // written into the driver network's array: the same values; another length is refused
        let mut out = vec![7.0; 3];
        assert!(f.mean_into(&mut out).unwrap());
        assert_eq!(out, vec![2.0, 3.0, 1.0]);
        let e = f.mean_into(&mut [0.0; 2]).unwrap_err();
        assert!(e.contains("have 3 values but the driver's network has 2"), "{e}");
        drop(f);
        assert!(!FinalUpdaterStates::default().mean_into(&mut out).unwrap());
        // a relay tree node's master copy takes none
        let mut node = MasterCopy::new(vec![0.0; 2], vec![0.0; 3], 0, 0);
        let e = node.finish(w, &write_final_states(&[&[1.0, 2.0, 3.0]]).unwrap()).unwrap_err();
        assert!(e.contains("a relay tree node takes no final updater state"), "{e}");
        assert!(write_final_states(&[&[1.0], &[1.0, 2.0]]).is_err());
    }
}
