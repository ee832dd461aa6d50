package org.ferrodl.nn.conf;

/**
 * Gradient normalization or clipping of a layer, applied to its raw gradient before regularization
 * and the updater. The threshold ({@code gradientNormalizationThreshold}, default 1.0) is used by
 * the three clipping modes.
 */
public enum GradientNormalization {
    /** No normalization (default). */
    None,
    /** Divide the layer's whole gradient by its L2 norm. */
    RenormalizeL2PerLayer,
    /** Divide the gradient of each parameter type (weights, biases) by its own L2 norm. */
    RenormalizeL2PerParamType,
    /** Clip every element to {@code [-threshold, threshold]}. */
    ClipElementWiseAbsoluteValue,
    /** Scale the layer's gradient down when its L2 norm exceeds the threshold. */
    ClipL2PerLayer,
    /** Scale each parameter type's gradient down when its L2 norm exceeds the threshold. */
    ClipL2PerParamType
}
