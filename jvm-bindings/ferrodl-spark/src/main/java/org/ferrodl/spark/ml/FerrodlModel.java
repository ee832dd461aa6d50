package org.ferrodl.spark.ml;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DefaultParamsWriter;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;
import org.ferrodl.exception.DL4JInvalidInputException;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.nn.multilayer.MultiLayerNetwork;
import org.ferrodl.spark.impl.common.NetworkKind;
import org.ferrodl.spark.impl.common.NetworkSnapshot;
import org.ferrodl.util.ModelSerializer;

/**
 * What {@link FerrodlClassificationModel} and {@link FerrodlRegressionModel} share: the trained
 * network (on the driver), a transform that evaluates it once per partition on batches of rows, and
 * persistence ({@code metadata/} as Spark writes it for any Params, plus {@code network.zip} in
 * ferrodl's model format), so the model works as a Pipeline stage.
 */
public abstract class FerrodlModel<M extends FerrodlModel<M>> extends Model<M> implements MLWritable {
    private static final long serialVersionUID = 1L;
    /** rows per native call in transform */
    static final int TRANSFORM_BATCH = 256;

    private final String uid;
    private final transient MultiLayerNetwork network;
    final Param<String> featuresCol;
    final Param<String> predictionCol;

    protected FerrodlModel(String uid, MultiLayerNetwork network) {
        this.uid = uid;
        this.network = network;
        featuresCol = new Param<>(this, "featuresCol", "features column (ml Vector)");
        predictionCol = new Param<>(this, "predictionCol", "prediction column");
        setDefault(featuresCol, "features");
        setDefault(predictionCol, "prediction");
    }

    @Override
    public String uid() {
        return uid;
    }

    public Param<String> featuresCol() { return featuresCol; }
    public Param<String> predictionCol() { return predictionCol; }

    /** The trained network (driver side). */
    public MultiLayerNetwork getNetwork() {
        return network;
    }

    /** The columns this model appends (after the input columns). */
    abstract StructType addOutputColumns(StructType schema);

    /** The appended values of one row from the network's output row {@code out[offset, offset+width)}. */
    abstract Object[] outputValues(float[] out, int offset, int width);

    @Override
    public StructType transformSchema(StructType schema) {
        FerrodlEstimator.requireColumn(schema, $(featuresCol), "a vector (org.apache.spark.ml.linalg.Vector) column",
                t -> t instanceof VectorUDT);
        return addOutputColumns(schema);
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        StructType in = dataset.schema();
        StructType out = transformSchema(in);
        int featuresIndex = in.fieldIndex($(featuresCol));
        String featuresName = $(featuresCol);
        int inputColumns = in.fields().length;
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(dataset.sparkSession().sparkContext());
        Broadcast<NetworkSnapshot<MultiLayerNetwork>> snapshot =
                sc.broadcast(NetworkSnapshot.of(NetworkKind.MULTI_LAYER, network, false));
        FerrodlModel<M> self = this;
        return dataset.toDF().mapPartitions((Iterator<Row> rows) -> {
            List<Row> result = new ArrayList<>();
            if (!rows.hasNext()) {
                return result.iterator();
            }
            try (MultiLayerNetwork net = snapshot.value().restore()) {
                List<Row> batch = new ArrayList<>(TRANSFORM_BATCH);
                while (rows.hasNext()) {
                    batch.add(rows.next());
                    if (batch.size() == TRANSFORM_BATCH || !rows.hasNext()) {
                        self.predictBatch(net, batch, featuresIndex, featuresName, inputColumns, result);
                        batch.clear();
                    }
                }
            }
            return result.iterator();
        }, Encoders.row(out));
    }

    private void predictBatch(MultiLayerNetwork net, List<Row> batch, int featuresIndex, String featuresName,
                              int inputColumns, List<Row> result) {
        int nIn = ((Vector) batch.get(0).get(featuresIndex)).size();
        float[] x = new float[batch.size() * nIn];
        for (int i = 0; i < batch.size(); i++) {
            Vector v = (Vector) batch.get(i).get(featuresIndex);
            if (v == null || v.size() != nIn) {
                throw new DL4JInvalidInputException("column '" + featuresName + "': a row has "
                        + (v == null ? "no vector" : v.size() + " features") + ", the batch's first row " + nIn);
            }
            for (int j = 0; j < nIn; j++) {
                x[i * nIn + j] = (float) v.apply(j);
            }
        }
        float[] y = net.output(Nd4j.create(x, batch.size(), nIn)).toFloatVector();
        int width = y.length / batch.size();
        for (int i = 0; i < batch.size(); i++) {
            Object[] extra = outputValues(y, i * width, width);
            Object[] values = new Object[inputColumns + extra.length];
            Row r = batch.get(i);
            for (int c = 0; c < inputColumns; c++) {
                values[c] = r.get(c);
            }
            System.arraycopy(extra, 0, values, inputColumns, extra.length);
            result.add(RowFactory.create(values));
        }
    }

    @Override
    public M copy(ParamMap extra) {
        M copy = newInstance(uid, network);
        return copyValues(copy, extra).setParent(parent());
    }

    /** A model of this class around {@code net} (copy and read). */
    abstract M newInstance(String uid, MultiLayerNetwork net);

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    /** {@code <path>/metadata} (Spark's Params metadata: class, uid, params) and {@code <path>/network.zip}. */
    static final class Writer extends MLWriter {
        private final FerrodlModel<?> instance;

        Writer(FerrodlModel<?> instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            Path file = new Path(path, "network.zip");
            try {
                new DefaultParamsWriter(instance).save(path);
                FileSystem fs = file.getFileSystem(sparkSession().sparkContext().hadoopConfiguration());
                try (OutputStream os = fs.create(file, false)) {
                    ModelSerializer.writeModel(instance.network, os, false);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the network to " + file, e);
            }
        }
    }

    /** Reads what {@link Writer} wrote; the metadata must name {@code expectedClass}. */
    static final class Reader<M extends FerrodlModel<M>> extends MLReader<M> {
        private final Class<M> expectedClass;
        private final BiFunction<String, MultiLayerNetwork, M> factory;

        Reader(Class<M> expectedClass, BiFunction<String, MultiLayerNetwork, M> factory) {
            this.expectedClass = expectedClass;
            this.factory = factory;
        }

        @Override
        public M load(String path) {
            String text = sparkSession().sparkContext().textFile(path + "/metadata", 1).first();
            try {
                JsonNode meta = new ObjectMapper().readTree(text);
                String className = meta.path("class").asText();
                if (!className.equals(expectedClass.getName())) {
                    throw new IllegalArgumentException("the model at " + path + " is a " + className + ", not a "
                            + expectedClass.getName());
                }
                Path file = new Path(path, "network.zip");
                MultiLayerNetwork net;
                FileSystem fs = file.getFileSystem(sparkSession().sparkContext().hadoopConfiguration());
                try (InputStream is = fs.open(file)) {
                    net = ModelSerializer.restoreMultiLayerNetwork(is, false);
                }
                M model = factory.apply(meta.path("uid").asText(), net);
                for (Iterator<Map.Entry<String, JsonNode>> it = meta.path("paramMap").fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    if (model.hasParam(e.getKey())) {
                        Param<Object> p = model.getParam(e.getKey());
                        model.set(p, p.jsonDecode(e.getValue().toString()));
                    }
                }
                return model;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the ferrodl model at " + path, e);
            }
        }
    }
}
