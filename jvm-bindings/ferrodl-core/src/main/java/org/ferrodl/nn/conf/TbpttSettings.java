package org.ferrodl.nn.conf;

import org.ferrodl.exception.DL4JInvalidConfigException;

/**
 * The truncated-BPTT settings both configuration types carry ({@code backpropType},
 * {@code tbpttFwdLength}, {@code tbpttBackLength}; defaults Standard, 20, 20 as in the reference),
 * their one settings check, and the JSON filters that leave the defaults out of the document (the
 * engine reads absent fields as the defaults).
 */
final class TbpttSettings {
    /** The reference's default forward and backward length. */
    static final int DEFAULT_LENGTH = 20;

    private TbpttSettings() {
    }

    /**
     * @param backpropType the backpropagation type
     * @param fwd the forward length
     * @param back the backward length
     * @throws DL4JInvalidConfigException naming the setting and the fix
     */
    static void check(BackpropType backpropType, int fwd, int back) {
        if (backpropType == null) {
            throw new DL4JInvalidConfigException("backpropType must not be null (Standard or TruncatedBPTT)");
        }
        if (fwd <= 0) {
            throw new DL4JInvalidConfigException("tbpttFwdLength is " + fwd + ": the truncated BPTT forward length "
                    + "must be at least 1 (set it with tBPTTForwardLength(..) or tBPTTLength(..))");
        }
        if (back <= 0) {
            throw new DL4JInvalidConfigException("tbpttBackLength is " + back + ": the truncated BPTT backward length "
                    + "must be at least 1 (set it with tBPTTBackwardLength(..) or tBPTTLength(..))");
        }
    }

    /** JSON filter: leaves {@code backpropType} out when it is Standard. */
    static final class StandardBackprop {
        @Override
        public boolean equals(Object o) {
            return o == null || o == BackpropType.Standard;
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }

    /** JSON filter: leaves a TBPTT length out when it is the default. */
    static final class DefaultLength {
        @Override
        public boolean equals(Object o) {
            return o instanceof Integer && (Integer) o == DEFAULT_LENGTH;
        }

        @Override
        public int hashCode() {
            return 0;
        }
    }
}
