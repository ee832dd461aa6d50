package org.ferrodl.optimize.api;

import org.ferrodl.nn.api.Model;

/**
 * A {@link TrainingListener} whose callbacks all do nothing: extend it and override the ones you
 * need.
 */
public abstract class BaseTrainingListener implements TrainingListener {

    @Override
    public void iterationDone(Model model, int iteration, int epoch) {
    }
}
