"""Chart of docs/SCALING.md from the `SCALING {json}` lines of native/sharing/examples/scaling.rs.

  .build/bench-venv/bin/python bench/spark/scaling_chart.py bench/spark/scaling-results.txt \
      docs/scaling.png
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, png):
    rows = [json.loads(line[len("SCALING "):]) for line in open(src) if line.startswith("SCALING ")]
    series = {}
    for r in rows:
        key = f"{r['mode']} {r['params']:,} params"
        series.setdefault(key, []).append(r)
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for key, rs in series.items():
        n = [r["workers"] for r in rs]
        a.plot(n, [r["relay_messages_in_per_s"] for r in rs], marker="o", label=key)
        b.plot(n, [r["worker_iterations_per_s_mean"] for r in rs], marker="o", label=key)
    for ax, title in ((a, "one relay: update messages received per second"),
                      (b, "each worker: iterations (messages sent) per second, mean")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([2, 4, 8, 16, 32])
        ax.set_xticklabels(["2", "4", "8", "16", "32"])
        ax.set_xlabel("workers (threads on one 16-core host, 127.0.0.1)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Gradient sharing through one relay (real codec, relay, master copy; train = real MLP steps, "
                 "batch 16, 1 engine thread per worker)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
