package org.ferrodl.spark.parameterserver.training;

import org.apache.spark.SparkConf;
import org.ferrodl.exception.DL4JInvalidConfigException;

/**
 * Whether a gradient-sharing fit may run with the cluster's Spark security settings, and how the
 * relay protects its traffic (the one place this rule lives; README "Security" describes it).
 *
 * <ul>
 *   <li>The relay's per-fit secret reaches the workers inside their tasks, whose binary Spark
 *       broadcasts. With
 *       {@code spark.authenticate=false}, Spark's block manager serves broadcast blocks to any
 *       process that can reach the driver or an executor, so a stranger can read the secret, join
 *       the relay, download the parameters and poison the model. On a master other than
 *       {@code local[...]} (where the workers are threads of the driver and the relay listens on
 *       the loopback only) such a fit is therefore refused unless the user allowed it, and then
 *       it is logged as a warning.</li>
 *   <li>With {@code spark.network.crypto.enabled=true} the relay's frames are sealed
 *       (ChaCha20-Poly1305 under per-connection keys derived from the secret), as Spark's own
 *       traffic is then encrypted too.</li>
 * </ul>
 */
public record RelayTrust(boolean localMaster, boolean encrypt, String warning) {

    /** Spark's switch for authenticating its RPC and block transfers. */
    static final String SPARK_AUTHENTICATE = "spark.authenticate";
    /** Spark's switch for encrypting them (AES-based, needs spark.authenticate). */
    static final String SPARK_NETWORK_CRYPTO = "spark.network.crypto.enabled";
    /**
     * The Spark-configuration form of {@code relayAllowWithoutSparkAuthentication(true)}, for
     * operators who cannot change the program ({@code spark-submit --conf ...=true}).
     */
    public static final String ALLOW_WITHOUT_AUTHENTICATION = "spark.ferrodl.relay.allowWithoutSparkAuthentication";

    public static RelayTrust check(SparkConf conf, String master, boolean allowWithoutAuthentication) {
        boolean local = master.equals("local") || master.startsWith("local[");
        boolean authenticated = conf.getBoolean(SPARK_AUTHENTICATE, false);
        boolean encrypt = conf.getBoolean(SPARK_NETWORK_CRYPTO, false);
        boolean allowed = allowWithoutAuthentication || conf.getBoolean(ALLOW_WITHOUT_AUTHENTICATION, false);
        String warning = null;
        if (!local && !authenticated) {
            String risk = SPARK_AUTHENTICATE + " is false on master " + master + ", so Spark's block manager serves "
                    + "the tasks' broadcast binary that carries the relay's per-fit secret to any process that "
                    + "can reach the driver or an executor; with it a stranger can join the relay, read the "
                    + "model's parameters and poison its updates";
            if (!allowed) {
                throw new DL4JInvalidConfigException("SharedTrainingMaster refuses to train: " + risk + ". Set "
                        + SPARK_AUTHENTICATE + "=true (with spark.authenticate.secret on a standalone cluster; YARN "
                        + "and Kubernetes generate the secret), and " + SPARK_NETWORK_CRYPTO + "=true to encrypt the "
                        + "relay's traffic as well; or, only where every process that can reach the cluster is "
                        + "trusted, SharedTrainingMaster.Builder.relayAllowWithoutSparkAuthentication(true) or --conf "
                        + ALLOW_WITHOUT_AUTHENTICATION + "=true");
            }
            warning = "ferrodl gradient sharing: running although " + risk
                    + " (allowed by relayAllowWithoutSparkAuthentication / " + ALLOW_WITHOUT_AUTHENTICATION + ")";
        }
        return new RelayTrust(local, encrypt, warning);
    }
}
