"""Spark MLlib peer of the cluster time-to-accuracy benchmark (run by bench/cluster/run.sh through
spark-submit on the pyspark 4.2.0 standalone cluster).

MultilayerPerceptronClassifier with layers [784, 500, 100, 10] and its default solver (l-bfgs) on the
same MNIST digits (the four IDX .gz files, pixels scaled to [0, 1]). MLlib's MLP has sigmoid hidden
layers and a softmax output, trained full-batch by L-BFGS: it offers neither ReLU nor Adam nor
minibatches, so this is the closest configuration it has.

MLlib reports nothing per iteration, so accuracy-vs-time points come from separate fits with growing
maxIter (each from the same seed, each timed on its own): one line per fit,
  POINT max_iter=<k> iterations=<n> accuracy=<a> seconds=<fit seconds> eval_seconds=<e>
The data is read with Python, written once as LIBSVM text and loaded by Spark's libsvm source (so the
executors need no Python), cached and counted before the first fit: loading is not timed.
"""

import argparse
import gzip
import os
import struct
import sys
import time

from pyspark.ml.classification import MultilayerPerceptronClassifier
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.sql import SparkSession


def read_idx(data_dir, split):
    """(images as lists of 784 grey levels 0..255, labels) of one split."""
    with gzip.open(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), "rb") as f:
        img = f.read()
    with gzip.open(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), "rb") as f:
        lab = f.read()
    magic, n, rows, cols = struct.unpack(">IIII", img[:16])
    lmagic, m = struct.unpack(">II", lab[:8])
    if magic != 2051 or lmagic != 2049 or rows * cols != 784 or m != n:
        raise SystemExit(f"{split}: not a pair of MNIST IDX files ({magic}, {lmagic}, {rows}x{cols}, {n}/{m})")
    size = rows * cols
    images = [img[16 + i * size: 16 + (i + 1) * size] for i in range(n)]
    return images, list(lab[8:8 + n])


def write_libsvm(path, images, labels):
    with open(path, "w") as out:
        for pixels, label in zip(images, labels):
            feats = " ".join(f"{j + 1}:{v / 255.0:.6g}" for j, v in enumerate(pixels) if v)
            out.write(f"{label} {feats}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--work-dir", required=True, help="folder for the LIBSVM copies (seen by all executors)")
    ap.add_argument("--max-iters", default="5,10,20,40,80,160")
    ap.add_argument("--budget-seconds", type=float, default=300.0)
    ap.add_argument("--stop-accuracy", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--partitions", type=int, default=2)
    args = ap.parse_args()

    os.makedirs(args.work_dir, exist_ok=True)
    paths = {}
    for split in ("train", "test"):
        images, labels = read_idx(args.data_dir, split)
        paths[split] = os.path.join(args.work_dir, f"{split}.libsvm")
        write_libsvm(paths[split], images, labels)

    spark = SparkSession.builder.appName("mllib MNIST MLP").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    frames = {}
    for split, path in paths.items():
        df = spark.read.format("libsvm").option("numFeatures", "784").load("file://" + path)
        frames[split] = df.repartition(args.partitions).cache()
        frames[split].count()
    print(f"MLLIB MultilayerPerceptronClassifier layers=[784,500,100,10] solver=l-bfgs spark={spark.version} "
          f"master={spark.sparkContext.master} train={frames['train'].count()} test={frames['test'].count()} "
          f"partitions={args.partitions}", flush=True)

    evaluator = MulticlassClassificationEvaluator(metricName="accuracy")
    ladder = [int(x) for x in args.max_iters.split(",")]
    for i, k in enumerate(ladder):
        mlp = MultilayerPerceptronClassifier(layers=[784, 500, 100, 10], maxIter=k, seed=args.seed)
        t0 = time.perf_counter()
        model = mlp.fit(frames["train"])
        seconds = time.perf_counter() - t0
        e0 = time.perf_counter()
        acc = evaluator.evaluate(model.transform(frames["test"]))
        eval_seconds = time.perf_counter() - e0
        iterations = -1
        if model.hasSummary:
            summary = model.summary() if callable(model.summary) else model.summary
            iterations = summary.totalIterations
        print(f"POINT max_iter={k} iterations={iterations} accuracy={acc:.4f} seconds={seconds:.2f} "
              f"eval_seconds={eval_seconds:.2f}", flush=True)
        if args.stop_accuracy > 0 and acc >= args.stop_accuracy:
            break
        if 0 <= iterations < k:
            print(f"CONVERGED after {iterations} iterations (tol): a larger maxIter fits the same model",
                  flush=True)
            break
        # the next fit repeats these iterations and more: skip it when it would overrun the budget
        if i + 1 < len(ladder) and seconds * ladder[i + 1] / k > args.budget_seconds:
            print(f"STOP next max_iter={ladder[i + 1]} would take about {seconds * ladder[i + 1] / k:.0f} s "
                  f"> budget {args.budget_seconds:.0f} s", flush=True)
            break
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
