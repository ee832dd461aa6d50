"""Chart of docs/SCALING.md from the `SCALING {json}` lines of native/sharing/examples/scaling.rs.

  .build/bench-venv/bin/python bench/spark/scaling_chart.py bench/spark/scaling-tree-results.txt \
      docs/scaling.png

One series per (mode, parameters, fan-out): fan-out 0 is one relay for every worker, k >= 2 a
relay tree with k workers per leaf node. Panels: what the root relay received per second; the
root relay's own CPU per update it received (all its threads, and the part spent holding its
lock: the serial cost), which is what its capacity follows on a host where it has cores of its
own; each worker's send rate.
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(r):
    shape = "one relay" if r.get("fanout", 0) < 2 else f"tree, fan-out {r['fanout']}"
    return f"{r['mode']} {r['params']:,} params, {shape}"


def main(src, png):
    rows = [json.loads(line[len("SCALING "):]) for line in open(src) if line.startswith("SCALING ")]
    series = {}
    for r in rows:
        series.setdefault(label(r), []).append(r)
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(16, 4.8))
    cores = max(r.get("cores", 0) for r in rows)
    for key, rs in series.items():
        n = [r["workers"] for r in rs]
        line = a.plot(n, [r["relay_messages_in_per_s"] for r in rs], marker="o", label=key)[0]
        b.plot(n, [r["root_cpu_us_per_message_in"] for r in rs], marker="o", color=line.get_color(),
               label=key + ": all root threads")
        b.plot(n, [r["root_locked_cpu_us_per_message_in"] for r in rs], marker="x", linestyle="--",
               color=line.get_color(), label=key + ": under the root's lock")
        c.plot(n, [r["worker_iterations_per_s_mean"] for r in rs], marker="o", label=key)
    titles = ((a, "root relay: update messages received per second"),
              (b, "root relay: CPU µs per message received"),
              (c, "each worker: messages sent per second, mean"))
    for ax, title in titles:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([2, 4, 8, 16, 32])
        ax.set_xticklabels(["2", "4", "8", "16", "32"])
        ax.set_xlabel(f"workers (threads on one {cores}-core host, 127.0.0.1)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Gradient sharing through one relay and through a relay tree (real codec, relays, master "
                 "copies; comm = encoded updates sent as fast as the relays take them)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
