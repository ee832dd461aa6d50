package org.ferrodl.linalg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.ferrodl.linalg.api.ndarray.INDArray;
import org.ferrodl.linalg.factory.Nd4j;
import org.ferrodl.testutil.SerializationUtil;
import org.junit.jupiter.api.Test;

class NDArrayTest {

    private static final INDArray M = Nd4j.create(new double[][] {{1, 5, 2}, {7, 0, 7}});

    @Test
    void shapeAndElementAccess() {
        assertArrayEquals(new long[] {2, 3}, M.shape());
        assertEquals(2, M.rows());
        assertEquals(3, M.columns());
        assertEquals(6, M.length());
        assertEquals(2, M.rank());
        assertEquals(5f, M.getFloat(0, 1));
        assertEquals(7f, M.getFloat(3));
        assertEquals(2.0, M.getDouble(0, 2));
        assertEquals('c', M.ordering());
        assertTrue(M.isMatrix());
        assertFalse(M.isVector());
        assertThrows(IndexOutOfBoundsException.class, () -> M.getFloat(2, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> M.getFloat(6));
    }

    @Test
    void createFromFlatDataIsCOrderAndCopies() {
        float[] data = {1, 2, 3, 4, 5, 6};
        INDArray a = Nd4j.create(data, 3, 2);
        data[0] = 99;
        assertEquals(1f, a.getFloat(0, 0));
        assertEquals(4f, a.getFloat(1, 1));
        assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, a.toFloatVector());
        assertArrayEquals(new long[] {6}, Nd4j.create(new float[6]).shape());
        assertArrayEquals(new long[] {3}, Nd4j.createFromArray(1f, 2f, 3f).shape());
        assertThrows(IllegalArgumentException.class, () -> Nd4j.create(new float[5], 2, 3));
        assertEquals(a, Nd4j.create(new float[][] {{1, 2}, {3, 4}, {5, 6}}));
        assertEquals(a, Nd4j.createFromArray(new double[][] {{1, 2}, {3, 4}, {5, 6}}));
    }

    @Test
    void putScalarDupReshapeAndRows() {
        INDArray a = Nd4j.zeros(2, 2);
        a.putScalar(0, 1, 3.5).putScalar(3, -1).putScalar(new long[] {1, 0}, 2);
        assertArrayEquals(new float[] {0, 3.5f, 2, -1}, a.toFloatVector());
        INDArray d = a.dup();
        d.putScalar(0, 9);
        assertEquals(0f, a.getFloat(0));
        INDArray r = a.reshape(1, -1);
        assertArrayEquals(new long[] {1, 4}, r.shape());
        assertArrayEquals(a.toFloatVector(), r.toFloatVector());
        assertThrows(IllegalArgumentException.class, () -> a.reshape(3, 2));
        assertEquals(Nd4j.createFromArray(7f, 0f, 7f), M.getRow(1));
        assertArrayEquals(new long[] {1, 3}, M.getRow(1, true).shape());
        assertEquals(Nd4j.create(new float[] {7, 0, 7}, 1, 3), M.getRows(1, 2));
        assertArrayEquals(new float[][] {{1, 5, 2}, {7, 0, 7}}, M.toFloatMatrix());
        assertEquals(Nd4j.ones(2, 2).mul(3), Nd4j.ones(2, 2).addi(Nd4j.ones(2, 2)).add(Nd4j.ones(2, 2)));
        assertEquals(22.0, M.sumNumber().doubleValue(), 1e-9);
        assertEquals(22.0 / 6, M.meanNumber().doubleValue(), 1e-9);
    }

    @Test
    void argMaxAlongDimensionOneTakesTheFirstMaximum() {
        assertEquals(Nd4j.createFromArray(1f, 0f), M.argMax(1));
        assertEquals(Nd4j.createFromArray(1f, 0f, 1f), M.argMax(0));
        assertEquals(3f, M.argMax().getFloat(0));
        INDArray withNaN = Nd4j.create(new float[] {1, Float.NaN, 3}, 1, 3);
        assertEquals(1f, withNaN.argMax(1).getFloat(0));
    }

    @Test
    void equalityIsByShapeAndValue() {
        INDArray a = Nd4j.create(new float[] {1, 2, 3, 4}, 2, 2);
        assertEquals(a, Nd4j.create(new float[] {1, 2, 3, 4}, 2, 2));
        assertEquals(a.hashCode(), Nd4j.create(new float[] {1, 2, 3, 4}, 2, 2).hashCode());
        assertNotEquals(a, Nd4j.create(new float[] {1, 2, 3, 4}, 4, 1));
        assertNotEquals(a, Nd4j.create(new float[] {1, 2, 3, 4.001f}, 2, 2));
        assertTrue(a.equalsWithEps(Nd4j.create(new float[] {1, 2, 3, 4.001f}, 2, 2), 1e-2));
        assertFalse(a.equalsWithEps(Nd4j.create(new float[] {1, 2, 3, 4.1f}, 2, 2), 1e-2));
    }

    @Test
    void toStringPrintsNestedRows() {
        assertEquals("[[1.0000, 5.0000, 2.0000],\n [7.0000, 0.0000, 7.0000]]", M.toString());
    }

    @Test
    void seededRandIsReproducibleAndInUnitInterval() {
        INDArray a = Nd4j.rand(42, new long[] {50, 20});
        assertEquals(a, Nd4j.rand(42, new long[] {50, 20}));
        assertNotEquals(a, Nd4j.rand(43, new long[] {50, 20}));
        for (float v : a.toFloatVector()) {
            assertTrue(v >= 0f && v < 1f, "value " + v);
        }
        // the mean of 1000 uniforms is 0.5 ± 4 standard errors (0.0365)
        assertEquals(0.5, a.meanNumber().doubleValue(), 0.0365);
        assertArrayEquals(new long[] {3, 4}, Nd4j.rand(3, 4).shape());
    }

    @Test
    void vstackConcatenatesRows() {
        INDArray s = Nd4j.vstack(Nd4j.ones(1, 3), M);
        assertEquals(Nd4j.create(new float[] {1, 1, 1, 1, 5, 2, 7, 0, 7}, 3, 3), s);
        assertThrows(IllegalArgumentException.class, () -> Nd4j.vstack(Nd4j.ones(1, 2), M));
    }

    @Test
    void javaSerializationAndKryoRoundTrip() throws Exception {
        INDArray a = Nd4j.rand(7, new long[] {3, 5});
        assertEquals(a, SerializationUtil.javaRoundTrip(a));
        assertEquals(a, SerializationUtil.kryoRoundTrip(a));
    }
}
