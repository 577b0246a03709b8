"""Run every benchmark workload in one process and print one combined summary.

    python bench/run_all.py                    # full sizes (long: MNLogit alone takes minutes)
    python bench/run_all.py --quick            # smoke run, small sizes (< 30 s)
    python bench/run_all.py --workloads logistic,probit --only problin,statsmodels
    python bench/run_all.py --json all.json

Each workload prints its own table (as its ``bench_*.py`` script would), then
the summary lists, per workload and targeted reference: problin's time ratio
against its target, the relative loss difference (problin must reach the
reference's loss, or penalised objective, within 1e-9) and problin's peak extra
memory relative to the size of X (target <= 1.3).
"""
import argparse
import gc
import json
import os
import sys
import time

import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_logistic
import bench_probit
import bench_softmax
import bench_sparse
from _common import LOSS_RTOL, MEMORY_TARGET, environment_report
from _harness import (
    add_common_args,
    fmt_or_dash,
    import_versions,
    left_aligned,
    parse_args,
    run_workload,
    show,
    to_json,
)

WORKLOADS = {m.WORKLOAD.name: m.WORKLOAD
             for m in (bench_logistic, bench_softmax, bench_probit, bench_sparse)}


def summary_table(results):
    rows = [r for res in results for r in res["summary"]]
    if not rows:
        return "(no targeted reference was run)"
    s = pd.DataFrame(rows)
    s["target"] = [f"<={g:g}" for g in s["target"]]
    s["note"] = left_aligned([n[:60] + ("..." if len(n) > 60 else "") for n in s["note"]])
    fmt = {"problin/ref": fmt_or_dash("{:.3f}"), "rel_loss_diff": fmt_or_dash("{:+.2e}"),
           "problin_mem/X": fmt_or_dash("{:.2f}")}
    s = s.rename(columns={"rel_diff": "rel_loss_diff"})
    return s.to_string(index=False, formatters=fmt, na_rep="-")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(p)
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help=f"comma list of {list(WORKLOADS)} (default: all)")
    args = p.parse_args(argv)
    names = [s.strip() for s in args.workloads.split(",") if s.strip()]
    unknown = set(names) - set(WORKLOADS)
    if unknown:
        p.error(f"--workloads: unknown {sorted(unknown)}; choose from {list(WORKLOADS)}")
    known = {x for w in WORKLOADS.values() for c in w.contenders for x in (c.key, c.library)}
    bad = {s.strip() for s in args.only.split(",") if s.strip()} - known
    if bad:
        p.error(f"--only: unknown name(s) {sorted(bad)}; choose from {sorted(known)}")
    passed = (["--quick"] if args.quick else []) + [
        "--repeats", str(args.repeats), "--repeats-slow", str(args.repeats_slow),
        "--slow-after", str(args.slow_after), "--seed", str(args.seed), "--only", args.only,
    ] + ([] if args.memory else ["--no-memory"])
    wargs = {n: parse_args(WORKLOADS[n], passed, strict=False) for n in names}
    names = [n for n in names if wargs[n].selected]   # --only may leave a workload empty
    if not names:
        p.error(f"--only {args.only!r} selects nothing in any workload")

    t0 = time.perf_counter()
    for n in names:   # import everything first so that all thread pools are listed
        import_versions(wargs[n].selected)
    print("== environment ==\n" + "\n".join(environment_report()))
    results = []
    for n in names:
        res = run_workload(WORKLOADS[n], wargs[n], print_env=False)
        show(res, wargs[n])
        results.append(res)
        gc.collect()
    total = time.perf_counter() - t0

    print(f"\n== summary == {'--quick sizes, ' if args.quick else ''}median of "
          f"{args.repeats} fit(s) per library unless marked '*' in reps")
    print(summary_table(results))
    print(f"  time: problin/ref <= target ('*' in reps: a reference slower than "
          f"{args.slow_after:g} s, timed over --repeats-slow={args.repeats_slow} fit(s))\n"
          f"  loss: rel_loss_diff = (problin - ref) / |ref| <= {LOSS_RTOL:g} (of the penalised "
          f"objective for 'sparse'; < 0: problin's loss is lower)\n"
          f"  memory: problin's peak extra memory (max of tracemalloc and RSS) / size of X <= "
          f"{MEMORY_TARGET}" + (": at --quick sizes X is ~1 MB and fixed overheads dominate, "
                                "ignore" if args.quick else ""))
    print(f"\ntotal wall time {total:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items()},
                       "environment": environment_report(), "total_seconds": total,
                       "workloads": [to_json(r) for r in results]}, f, indent=2)
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()
