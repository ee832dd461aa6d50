"""Spark's own TorchDistributor on the spark part's standalone cluster (issue 15 goal 3): PyTorch DDP
through Spark, the MLP and minibatches of SparkPathBench, time to 0.95 test accuracy.

Submitted by bench/spark/bench.py with spark-submit (client mode) to the same kind of cluster the ferrodl
rows run on (a master and two one-core workers on 127.0.0.1), with spark.pyspark.python set to
.build/bench-venv's python (torch + numpy); prints the same `TTA {json}` lines as SparkPathBench (config
torch-B) and one `INFO {json}` line per configuration (info "torch-distributor") with the overheads.

What each configuration trains, as the ferrodl rows do (SparkPathBench.networkConf / master):
  MLP 784-500 ReLU, 500-100 ReLU, 100-10 softmax + cross-entropy (mean over the minibatch), weights
  N(0, 2 / fan_in) (WeightInit.RELU), biases 0, seed 12345, Adam(lr 1e-3, betas 0.9/0.999, eps 1e-8);
  the 7,996 training digits of spark-example's mnist10k, pixels / 255, in MnistData.shuffledOrder(12345)
  (the same java.util.Random Fisher-Yates, re-implemented below), cut into minibatches of B, split into
  two halves as Spark's parallelize(batches, 2) splits them; process r trains on half r every epoch
  (one fixed shuffle, as the ferrodl rows). TorchDistributor(num_processes=2, local_mode=False,
  use_gpu=False): one barrier task per worker, each running torchrun with one process, DDP over gloo,
  so every step all-reduces (averages) the two processes' gradients: batch B per worker, as the
  masters' batchSizePerWorker. torch.set_num_threads(1) in each process (each worker has one core,
  as each ferrodl task's engine uses its task's one core).

The clock (fit seconds): per epoch, from a barrier both processes pass before their first step to a
barrier after their last, summed over the epochs; the test accuracy (all 2,004 test digits, rank 0)
is taken after each epoch off the clock, and training stops at the first epoch at or above the target.
Not on the clock, as the JVM start and the RDD caching are not on the ferrodl clock: the Spark barrier
job's scheduling, the executors' Python workers, torchrun and the training processes starting,
`import torch`, the gloo rendezvous (init_process_group), reading the data, building the model and
the DDP wrapper, and the teardown after the last epoch. They are measured (startup_seconds,
shutdown_seconds, run_wall_seconds of `TorchDistributor.run`) and printed in the INFO line; a
TorchDistributor user pays them on every run() call (the first run() of an application also starts
the executors' Python workers; the ferrodl rows' executor JVMs are likewise started before their clock).

The executors' python needs torch, numpy, pandas and pyarrow (TorchDistributor's barrier job is a
mapInArrow): bench/spark/requirements-torch-distributor.txt.
"""

import argparse
import json
import os
import sys
import time

SEED = 12345


def loadavg():
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


def java_shuffled_order(n, seed):
    """MnistData.shuffledOrder(seed): Fisher-Yates driven by java.util.Random(seed) (its LCG and its
    nextInt(bound)), so that these are the minibatches the ferrodl rows train on."""
    mask = (1 << 48) - 1
    state = (seed ^ 0x5DEECE66D) & mask

    def next31():
        nonlocal state
        state = (state * 0x5DEECE66D + 0xB) & mask
        return state >> 17

    def next_int(bound):
        r = next31()
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m < 2 ** 31:  # Java retries when this sum overflows int
                return r
            u = next31()

    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = next_int(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def read_split(data_dir, split):
    """(N x 784 uint8 pixels, N labels) of one mnist10k split (the IDX .gz files MnistData reads)."""
    import gzip
    import struct

    import numpy as np

    with gzip.open(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), "rb") as f:
        img = f.read()
    with gzip.open(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), "rb") as f:
        lab = f.read()
    magic, n, rows, cols = struct.unpack(">IIII", img[:16])
    lmagic, m = struct.unpack(">II", lab[:8])
    if magic != 2051 or lmagic != 2049 or rows * cols != 784 or m != n:
        raise ValueError(f"{split}: not a pair of MNIST IDX files ({magic}, {lmagic}, {rows}x{cols}, {n}/{m})")
    pixels = np.frombuffer(img, dtype=np.uint8, offset=16, count=n * 784).reshape(n, 784)
    labels = np.frombuffer(lab, dtype=np.uint8, offset=8, count=n).astype(np.int64)
    return pixels, labels


def train(data_dir, batch, max_epochs, target, threads):
    """One torchrun process (TorchDistributor pickles this function and runs it in each). Returns, from
    rank 0, the accuracy points and the wall-clock timestamps of its phases."""
    t_enter = time.time()
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch import nn

    t_import = time.time()
    torch.set_num_threads(threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    t_group = time.time()

    pixels, labels = read_split(data_dir, "train")
    order = java_shuffled_order(len(labels), SEED)
    batches = [order[s:s + batch] for s in range(0, len(order), batch)]
    # Spark's parallelize(seq, n): slice i is [i * len / n, (i + 1) * len / n)
    mine = batches[rank * len(batches) // world:(rank + 1) * len(batches) // world]
    data = [(torch.from_numpy(pixels[idx].astype(np.float32) / 255.0), torch.from_numpy(labels[idx]))
            for idx in mine]
    test_x, test_y = None, None
    if rank == 0:
        tp, tl = read_split(data_dir, "test")
        test_x, test_y = torch.from_numpy(tp.astype(np.float32) / 255.0), torch.from_numpy(tl)

    torch.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(784, 500), nn.ReLU(), nn.Linear(500, 100), nn.ReLU(), nn.Linear(100, 10))
    for layer in model:
        if isinstance(layer, nn.Linear):  # WeightInit.RELU: N(0, 2 / fan_in); biases 0
            nn.init.normal_(layer.weight, 0.0, (2.0 / layer.in_features) ** 0.5)
            nn.init.zeros_(layer.bias)
    ddp = nn.parallel.DistributedDataParallel(model)  # broadcasts rank 0's parameters
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    loss_fn = nn.CrossEntropyLoss()  # softmax + MCXENT, mean over the minibatch
    t_ready = time.time()

    points, fit, eval_s, t_first_step = [], 0.0, 0.0, None
    stop = torch.zeros(1, dtype=torch.int32)
    for epoch in range(1, max_epochs + 1):
        dist.barrier()
        t0 = time.perf_counter()
        if t_first_step is None:
            t_first_step = time.time()
        ddp.train()
        for x, y in data:
            opt.zero_grad(set_to_none=True)
            loss_fn(ddp(x), y).backward()
            opt.step()
        dist.barrier()
        fit += time.perf_counter() - t0
        e0 = time.perf_counter()
        if rank == 0:
            model.eval()
            with torch.no_grad():
                acc = (model(test_x).argmax(1) == test_y).double().mean().item()
                loss = loss_fn(model(data[-1][0]), data[-1][1]).item()
            points.append({"epoch": epoch, "fit_seconds": fit, "test_accuracy": acc, "load": loadavg()[0],
                           "loss_last_minibatch": loss})
            stop[0] = int(acc >= target)
        dist.broadcast(stop, 0)
        eval_s += time.perf_counter() - e0
        if stop.item():
            break
    t_train_end = time.time()
    dist.destroy_process_group()
    return {"rank": rank, "world_size": world, "minibatches_per_process": len(data),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "points": points, "eval_seconds": eval_s,
            "t_enter": t_enter, "t_import": t_import, "t_group": t_group, "t_ready": t_ready,
            "t_first_step": t_first_step, "t_train_end": t_train_end, "t_return": time.time()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True, help="spark-example/src/main/resources/mnist10k")
    ap.add_argument("--batches", default="32", help="minibatch per process, one configuration each (torch-B)")
    ap.add_argument("--tta", type=int, default=20, help="at most this many epochs per configuration")
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads in each process")
    args = ap.parse_args()

    import pyspark
    from pyspark.ml.torch.distributor import TorchDistributor
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("TorchDistributor MNIST MLP time to accuracy").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        import torch
        torch_version = torch.__version__
    except ImportError as e:  # the driver's python: bench.py checks the venv before submitting
        torch_version = f"not importable: {e}"
    common = {"master": spark.sparkContext.master, "spark_version": spark.version,
              "pyspark": pyspark.__version__, "torch_driver": torch_version, "python": sys.version.split()[0],
              "num_processes": args.processes, "local_mode": False, "use_gpu": False}

    for batch in (int(b) for b in args.batches.split(",")):
        name = f"torch-{batch}"
        distributor = TorchDistributor(num_processes=args.processes, local_mode=False, use_gpu=False)
        l0 = loadavg()
        t0 = time.time()
        r = distributor.run(train, os.path.abspath(args.data_dir), batch, args.tta, args.target, args.threads)
        t1 = time.time()
        for p in r["points"]:
            print("TTA " + json.dumps({"config": name, **p}), flush=True)
        start = r["t_first_step"]
        info = {"info": "torch-distributor", "config": name, "batch_per_process": batch, **common,
                "torch": r["torch"], "torch_threads": r["torch_threads"], "world_size": r["world_size"],
                "minibatches_per_process": r["minibatches_per_process"], "epochs": len(r["points"]),
                "run_wall_seconds": t1 - t0,
                # from the run() call to the first training step; to the function's entry: the barrier
                # job, the executors' Python workers, torchrun and its agent, the training process
                "startup_seconds": start - t0,
                "startup_to_function_seconds": r["t_enter"] - t0,
                "import_torch_seconds": r["t_import"] - r["t_enter"],
                "init_process_group_seconds": r["t_group"] - r["t_import"],
                "data_and_model_seconds": r["t_ready"] - r["t_group"],
                "eval_seconds": r["eval_seconds"],
                "shutdown_seconds": t1 - r["t_train_end"],
                "load_start": l0, "load_end": loadavg()}
        print("INFO " + json.dumps(info), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
