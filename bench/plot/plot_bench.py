#!/usr/bin/env python3
"""Plot zyfa-bench JSON: TFLOP/s against sequence length, one line per kernel, one panel per
(dtype, head dims, GQA ratio). Usage: plot_bench.py sweep.json out.png"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    panels = defaultdict(lambda: defaultdict(list))
    for r in data["results"]:
        ratio = r["heads"] // r["heads_k"]
        key = (r["dtype"], r["d_qk"], r["d_v"], ratio)
        panels[key][r["kernel"]].append((r["seqlen"], r["tflops"]))
    keys = sorted(panels)
    cols = 4
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        dtype, dq, dv, ratio = key
        for kernel, pts in sorted(panels[key].items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=kernel)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{dtype.upper()} d={dq}/{dv} {'MHA' if ratio == 1 else f'GQA {ratio}:1'}")
        ax.set_xlabel("sequence length")
        ax.set_ylabel("TFLOP/s")
        ax.grid(True, alpha=0.3)
        ax.legend()
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    peer = f", cuDNN {data['cudnn']}" if data.get("cudnn") else ""
    fig.suptitle(f"Causal attention forward, batch 1 — {data.get('device', '')}{peer}")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
