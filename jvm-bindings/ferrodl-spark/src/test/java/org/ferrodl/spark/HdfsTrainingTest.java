package org.ferrodl.spark;

import static org.ferrodl.spark.SparkTestSupport.conf;
import static org.ferrodl.spark.SparkTestSupport.data;
import static org.ferrodl.spark.SparkTestSupport.maxAbsDiff;
import static org.ferrodl.spark.SparkTestSupport.net;
import static org.ferrodl.spark.SparkTestSupport.sc;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.spark.SparkException;
import org.ferrodl.core.loader.impl.SerializedDataSetLoader;
import org.ferrodl.core.loader.impl.SerializedMultiDataSetLoader;
import org.ferrodl.evaluation.classification.Evaluation;
import org.ferrodl.linalg.dataset.DataSet;
import org.ferrodl.linalg.dataset.MultiDataSet;
import org.ferrodl.linalg.learning.config.Adam;
import org.ferrodl.nn.conf.MultiLayerConfiguration;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.ferrodl.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Training from a real HDFS: a MiniDFSCluster (one name node, one data node) in this JVM, files
 * written and read through hdfs:// URIs by the driver and the (local-mode) executors.
 */
class HdfsTrainingTest {
    private static final MultiLayerConfiguration CONF = conf(new Adam(0.01), 1e-3);

    @TempDir
    static File base;
    private static MiniDFSCluster cluster;
    private static FileSystem fs;
    private static String root;

    @BeforeAll
    static void startHdfs() throws IOException {
        Configuration c = new Configuration();
        c.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(base, "hdfs").getAbsolutePath());
        cluster = new MiniDFSCluster.Builder(c).numDataNodes(1).build();
        cluster.waitActive();
        fs = cluster.getFileSystem();
        root = fs.getUri().toString();
        assertTrue(root.startsWith("hdfs://"), root);
    }

    @AfterAll
    static void stopHdfs() {
        if (cluster != null) {
            cluster.shutdown();
        }
    }

    private static ParameterAveragingTrainingMaster.Builder oneWorker() {
        return new ParameterAveragingTrainingMaster.Builder(1, 4).batchSizePerWorker(8).averagingFrequency(2);
    }

    private static float[] local(List<DataSet> ds) {
        MultiLayerNetwork n = net(CONF);
        for (int i = 0; i < ds.size(); i += 2) {
            n.fit(DataSet.merge(ds.subList(i, i + 2)));
        }
        return n.params().toFloatVector();
    }

    private static List<String> write(String dir, List<DataSet> ds) throws IOException {
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < ds.size(); i++) {
            Path p = new Path(root + dir + String.format("/part-%03d.bin", i));
            try (OutputStream out = fs.create(p)) {
                ds.get(i).save(out);
            }
            paths.add(p.toString());
        }
        return paths;
    }

    @Test
    void fitAndEvaluateFromHdfsDirectoryAndPaths() throws IOException {
        List<DataSet> ds = data(8, 4, 71);
        List<String> paths = write("/train", ds);
        float[] expected = local(ds);

        SparkDl4jMultiLayer fromDir = new SparkDl4jMultiLayer(sc(), CONF, oneWorker().build());
        assertTrue(maxAbsDiff(expected, fromDir.fit(root + "/train").params().toFloatVector()) <= 1e-5f);
        SparkDl4jMultiLayer fromPaths = new SparkDl4jMultiLayer(sc(), CONF, oneWorker().build());
        assertTrue(maxAbsDiff(expected, fromPaths.fitPaths(sc().parallelize(paths, 2)).params().toFloatVector())
                <= 1e-5f);
        Evaluation e = fromDir.evaluate(root + "/train", new SerializedDataSetLoader());
        assertEquals(fromDir.evaluate(sc().parallelize(ds, 2)), e);
    }

    @Test
    void exportApproachWritesToAndCleansHdfs() throws IOException {
        List<DataSet> ds = data(8, 4, 72);
        ParameterAveragingTrainingMaster tm = oneWorker().exportDirectory(root + "/export").build();
        MultiLayerNetwork trained = new SparkDl4jMultiLayer(sc(), CONF, tm).fit(sc().parallelize(ds, 2));
        assertTrue(maxAbsDiff(local(ds), trained.params().toFloatVector()) <= 1e-5f);
        Path export = new Path(root + "/export");
        assertEquals(1, fs.listStatus(export).length, "the export is on HDFS (kept for the next epoch)");
        Path fitDir = fs.listStatus(export)[0].getPath();
        assertEquals(8, fs.listStatus(fitDir).length, "one file per DataSet");
        // owner-only on HDFS too (the export goes through Hadoop's FileSystem there)
        assertEquals((short) 0700, fs.getFileStatus(fitDir).getPermission().toShort());
        for (org.apache.hadoop.fs.FileStatus f : fs.listStatus(fitDir)) {
            assertEquals((short) 0600, f.getPermission().toShort(), f.getPath().toString());
        }
        assertTrue(tm.deleteTempFiles(sc()));
        assertEquals(0, fs.listStatus(export).length, "deleteTempFiles removes it");
    }

    @Test
    void corruptHdfsFileFailsNamingItsHdfsPath() throws IOException {
        List<String> paths = write("/bad", data(2, 4, 73));
        Path bad = new Path(root + "/bad/zz-foreign.bin");
        try (OutputStream out = fs.create(bad)) {
            out.write("not a DataSet".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        SparkDl4jMultiLayer spark = new SparkDl4jMultiLayer(sc(), CONF, oneWorker().build());
        SparkException e = assertThrows(SparkException.class, () -> spark.fit(root + "/bad"));
        assertTrue(e.getMessage().contains(bad.toString()), e.getMessage());
        assertFalse(paths.isEmpty());
    }

    @Test
    void multiDataSetLoaderReadsFromHdfs() throws IOException {
        DataSet d = data(1, 3, 74).get(0);
        MultiDataSet mds = new MultiDataSet(new org.ferrodl.linalg.api.ndarray.INDArray[] {d.getFeatures()},
                new org.ferrodl.linalg.api.ndarray.INDArray[] {d.getLabels()});
        Path p = new Path(root + "/mds/one.bin");
        try (OutputStream out = fs.create(p)) {
            mds.save(out);
        }
        MultiDataSet back = new SerializedMultiDataSetLoader().load(p.toString(), sc().hadoopConfiguration());
        assertArrayEquals(d.getFeatures().toFloatVector(), back.getFeatures(0).toFloatVector());
        assertArrayEquals(d.getLabels().toFloatVector(), back.getLabels(0).toFloatVector());
        IOException e = assertThrows(IOException.class,
                () -> new SerializedMultiDataSetLoader().load(root + "/mds/missing.bin", sc().hadoopConfiguration()));
        assertTrue(e.getMessage().contains(root + "/mds/missing.bin"), e.getMessage());
    }
}
