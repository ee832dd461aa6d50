package org.ferrodl.nn.info;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The text table {@code summary()} prints: a header, one row per layer, then the total, trainable
 * and frozen parameter counts. {@link #render} lays out any columns (a graph adds its vertex
 * inputs); {@link #layers} builds the layer table both network types share. Internal, not a user API.
 */
public final class SummaryTable {
    private SummaryTable() {
    }

    /**
     * The layer table: index, name and type, {@code nIn -> nOut}, activation (an output layer's
     * with its loss function), parameter count and shapes, per-example input and output shapes.
     *
     * @param ni the engine's description of a network
     * @return the table
     */
    public static String layers(NetworkInfo ni) {
        return table(ni, false);
    }

    /**
     * The graph table: the layer table's columns with the vertex index in configuration order,
     * non-layer vertices included ({@code "add (ElementWiseVertex)"}), and a "Vertex Inputs" column
     * naming each vertex's inputs; network inputs are listed first with their widths.
     *
     * @param ni the engine's description of a graph ({@link NetworkInfo#ofGraph})
     * @return the table
     */
    public static String graph(NetworkInfo ni) {
        return table(ni, true);
    }

    private static String table(NetworkInfo ni, boolean graph) {
        String[] head = graph
                ? new String[] {"#", "VertexName (VertexType)", "nIn -> nOut", "Activation", "Params", "ParamShapes",
                    "Vertex Inputs", "Input -> Output"}
                : new String[] {"#", "LayerName (LayerType)", "nIn -> nOut", "Activation", "Params", "ParamShapes",
                    "Input -> Output"};
        List<String[]> rows = new ArrayList<>();
        if (graph) {
            for (NetworkInfo.GraphPort in : ni.graphInputs) {
                rows.add(new String[] {"-", in.name + " (InputVertex)", "-", "-", "0", "-", "-",
                    "[" + in.width + "]"});
            }
        }
        long total = 0;
        long frozen = 0;
        for (NetworkInfo.LayerEntry e : ni.layers) {
            String[] common = {Integer.toString(e.index), nameAndType(e), inOut(e), activation(e),
                Long.toString(e.numParams), paramShapes(e)};
            String[] row = Arrays.copyOf(common, head.length);
            if (graph) {
                row[6] = String.join(", ", e.inputs);
            }
            row[head.length - 1] = ioShapes(e);
            rows.add(row);
            total += e.numParams;
            if (e.frozen) {
                frozen += e.numParams;
            }
        }
        return render(head, rows, total, frozen);
    }

    /** @return {@code "name (Type)"}, a frozen layer as {@code "name (FrozenLayer:Inner)"} */
    public static String nameAndType(NetworkInfo.LayerEntry e) {
        String type = e.frozen ? e.type + ":" + e.innerType : e.type;
        return e.displayName() + " (" + type + ")";
    }

    /** @return {@code "nIn -> nOut"}, or {@code "-"} for a layer without them */
    public static String inOut(NetworkInfo.LayerEntry e) {
        return e.nIn == null ? "-" : e.nIn + " -> " + e.nOut;
    }

    /** @return the activation; for an output layer {@code "ACTIVATION / LOSS"} */
    public static String activation(NetworkInfo.LayerEntry e) {
        String act = e.activation == null ? "-" : e.activation;
        if (e.lossFunction != null) {
            act = (e.outputActivation != null ? e.outputActivation : act) + " / " + e.lossFunction;
        }
        return act;
    }

    /** @return {@code "W:{3,4}, b:{1,4}"}, or {@code "-"} */
    public static String paramShapes(NetworkInfo.LayerEntry e) {
        StringBuilder shapes = new StringBuilder();
        for (NetworkInfo.ParamEntry p : e.params) {
            if (shapes.length() > 0) {
                shapes.append(", ");
            }
            shapes.append(p.name).append(':').append(shapeText(p.shape, '{', '}'));
        }
        return shapes.length() == 0 ? "-" : shapes.toString();
    }

    /** @return {@code "[784] -> [500]"}; a vertex with several inputs {@code "[4] + [2] -> [6]"} */
    public static String ioShapes(NetworkInfo.LayerEntry e) {
        StringBuilder in = new StringBuilder();
        if (e.inputShapes != null && e.inputShapes.size() > 1) {
            for (long[] s : e.inputShapes) {
                in.append(in.length() == 0 ? "" : " + ").append(shapeText(s, '[', ']'));
            }
        } else {
            in.append(shapeText(e.inputShape, '[', ']'));
        }
        return in + " -> " + shapeText(e.outputShape, '[', ']');
    }

    /**
     * Lays out columns to the widest cell, separated by two spaces, between rules of {@code =}.
     *
     * @param head column titles
     * @param rows cells, one array per row, as many as {@code head}
     * @param total total parameter count
     * @param frozen frozen parameter count
     * @return the table, one line per row
     */
    public static String render(String[] head, List<String[]> rows, long total, long frozen) {
        int[] w = new int[head.length];
        for (int k = 0; k < head.length; k++) {
            w[k] = head[k].length();
        }
        for (String[] r : rows) {
            for (int k = 0; k < r.length; k++) {
                w[k] = Math.max(w[k], r[k].length());
            }
        }
        int width = head.length * 2 - 2;
        for (int x : w) {
            width += x;
        }
        String rule = "=".repeat(width);
        StringBuilder b = new StringBuilder();
        b.append(rule).append('\n');
        appendRow(b, head, w);
        b.append(rule).append('\n');
        for (String[] r : rows) {
            appendRow(b, r, w);
        }
        b.append("-".repeat(width)).append('\n');
        b.append("Total parameters:     ").append(total).append('\n');
        b.append("Trainable parameters: ").append(total - frozen).append('\n');
        b.append("Frozen parameters:    ").append(frozen).append('\n');
        b.append(rule).append('\n');
        return b.toString();
    }

    private static void appendRow(StringBuilder b, String[] cells, int[] w) {
        StringBuilder line = new StringBuilder();
        for (int k = 0; k < cells.length; k++) {
            line.append(cells[k]);
            if (k + 1 < cells.length) {
                line.append(" ".repeat(w[k] - cells[k].length() + 2));
            }
        }
        b.append(line).append('\n');
    }

    /**
     * @param s a shape
     * @param open opening bracket
     * @param close closing bracket
     * @return e.g. {@code [28,28,1]}
     */
    public static String shapeText(long[] s, char open, char close) {
        StringBuilder b = new StringBuilder().append(open);
        for (int i = 0; i < s.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(s[i]);
        }
        return b.append(close).toString();
    }
}
