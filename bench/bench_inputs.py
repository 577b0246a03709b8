"""Benchmark: problin on the inputs users actually pass (issue 33).

Each topic lives in its own module, ``bench/_inputs_<topic>.py``, which defines
``TITLE`` and ``measure(repeats, quick) -> list[dict]``: one dict per table row with
``workload``, ``problin`` (seconds per repeat), ``reference`` (what it is compared with),
``ref`` (seconds per repeat), ``target`` (the largest allowed median ratio) and ``note``.
Every module interleaves problin and its reference in one process (a, b, a, b, ...), so
both see the same load on a shared machine; this script prints one table per topic with
the median, the min-max range and the verdict.

    python bench/bench_inputs.py                         # every topic, 3 repeats
    python bench/bench_inputs.py --topics frames wide    # some topics
    python bench/bench_inputs.py --quick                 # small sizes (a smoke run)
    python bench/bench_inputs.py --json out.json

Topics: ``frames`` (pandas DataFrames in C and F order against the array they hold),
``dask`` (one-pass models on Dask arrays against the same data in memory, threaded
scheduler and a two-worker LocalCluster), ``parquet`` (a Parquet-backed logistic fit
through the Python API, the CLI and dask-ml), ``wide`` (dense logistic regression with
hundreds to a thousand columns against scikit-learn's ``lbfgs``).
"""
import argparse
import importlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment_report  # noqa: E402

TOPICS = ("frames", "dask", "parquet", "wide")


def _row(r):
    p, q = np.median(r["problin"]), np.median(r["ref"])
    ratio = p / q if q > 0 else float("inf")
    return {
        "workload": r["workload"],
        "problin_s": f"{p:.3g} ({min(r['problin']):.3g}-{max(r['problin']):.3g})",
        "reference": r["reference"],
        "ref_s": f"{q:.3g} ({min(r['ref']):.3g}-{max(r['ref']):.3g})",
        "ratio": f"{ratio:.2f}",
        "target": f"<= {r['target']:g}",
        "verdict": "PASS" if ratio <= r["target"] else "FAIL",
        "note": r.get("note", ""),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", nargs="+", choices=TOPICS, default=list(TOPICS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    print("\n".join(environment_report()))
    out = {}
    for topic in args.topics:
        module = importlib.import_module(f"_inputs_{topic}")
        rows = module.measure(args.repeats, args.quick)
        out[topic] = rows
        print(f"\n== {module.TITLE} == median (min-max) of {args.repeats} interleaved runs")
        table = [_row(r) for r in rows]
        keys = list(table[0]) if table else []
        widths = {k: max(len(k), *(len(str(t[k])) for t in table)) for k in keys}
        print("  ".join(k.ljust(widths[k]) for k in keys))
        for t in table:
            print("  ".join(str(t[k]).ljust(widths[k]) for k in keys))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
