package org.ferrodl.nn.conf.layers;

/** Pooling of subsampling and global pooling layers (the JSON value is the constant's name). */
public enum PoolingType {
    /** Maximum. */
    MAX,
    /** Mean (padding cells excluded from the divisor). */
    AVG,
    /** Sum. */
    SUM,
    /** P-norm {@code (Σ|x|^p)^(1/p)}. */
    PNORM
}
