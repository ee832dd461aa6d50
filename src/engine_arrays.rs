//! The engine arrays of a network or graph handle, for the JNI calls that read or write them
//! without a Java copy: the averaging rounds' messages and averages, and both masters' final
//! state written into the driver's network.

use crate::errors::FerroResult;
use crate::native_graph::graphs;
use crate::native_network::networks;
use ferrodl_nn::{ComputationGraph, MultiLayerNetwork, NnError};
use jni::sys::jlong;

/// A network's or a graph's parameters and updater state.
pub(crate) trait Engine {
    fn params(&self) -> &[f32];
    fn params_mut(&mut self) -> &mut [f32];
    fn updater_state(&self) -> &[f32];
    fn set_updater_state(&mut self, s: &[f32]) -> Result<(), NnError>;
    fn updater_state_mut(&mut self) -> &mut [f32];
    /// What a newly built network has besides its arrays: the training RNG at the configuration's
    /// seed and no recurrent state carried from `rnnTimeStep`.
    fn restart_training(&mut self);
}

macro_rules! engine {
    ($t:ty) => {
        impl Engine for $t {
            fn params(&self) -> &[f32] {
                <$t>::params(self)
            }
            fn params_mut(&mut self) -> &mut [f32] {
                <$t>::params_mut(self)
            }
            fn updater_state(&self) -> &[f32] {
                <$t>::updater_state(self)
            }
            fn set_updater_state(&mut self, s: &[f32]) -> Result<(), NnError> {
                <$t>::set_updater_state(self, s)
            }
            fn updater_state_mut(&mut self) -> &mut [f32] {
                <$t>::updater_state_mut(self)
            }
            fn restart_training(&mut self) {
                <$t>::reset_training_rng(self);
                <$t>::rnn_clear_previous_state(self);
            }
        }
    };
}
engine!(MultiLayerNetwork);
engine!(ComputationGraph);

/// Runs `f` on the network or graph behind `handle` (its registry is named by the handle's kind byte).
pub(crate) fn with_engine<R>(handle: jlong, f: impl FnOnce(&mut dyn Engine) -> FerroResult<R>) -> FerroResult<R> {
    if (handle as u64 >> 56) as u8 == 0x47 {
        graphs().with(handle, |g| f(g))
    } else {
        networks().with(handle, |n| f(n))
    }
}
