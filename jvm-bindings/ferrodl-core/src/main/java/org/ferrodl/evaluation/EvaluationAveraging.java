package org.ferrodl.evaluation;

/**
 * How per-class metrics are combined into one number.
 */
public enum EvaluationAveraging {
    /** Mean of the per-class values (each class weighs the same). */
    Macro,
    /** Computed from the counts summed over classes (each example weighs the same). */
    Micro
}
