package org.ferrodl.spark.api;

/**
 * How shares are formed when repartitioning. ferrodl always balances exactly: {@link #Balanced}
 * (the only strategy) assigns every worker the same number of DataSet objects per split.
 */
public enum RepartitionStrategy {
    Balanced
}
