"""The benchmark harness: one workload = one data set, problin and its reference
libraries fitted on it in one process, one table.

A ``bench_*.py`` script defines a :class:`Workload` and calls :func:`main`;
``run_all.py`` calls :func:`parse_args` and :func:`run_workload` for each.
"""
import argparse
import importlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from _common import (
    LOSS_RTOL,
    MB,
    MEMORY_MIN_MB,
    MEMORY_TARGET,
    SLOW_S,
    environment_report,
    nbytes,
    peak_memory,
    timed,
)

# Size options a workload may have: flag -> (type, help).
SIZE_OPTIONS = {"n": (int, "rows"), "d": (int, "features"), "k": (int, "classes"),
                "nnz": (int, "mean non-zeros per row"), "alpha": (float, "L2 penalty")}


@dataclass
class Contender:
    key: str                        # what --only selects (the library name also works)
    library: str                    # importable module, checked before running
    config: str                     # shown under the table
    inference: bool                 # standard errors computed inside the timed fit?
    fit: Callable                   # fit(X, y, args) -> (intercepts (K',), coef (K', D), n_iter)
    #                                 and optionally a 4th: standard errors computed (bool)
    target: float | None = None  # required problin time / this time; None: no target


@dataclass
class Workload:
    name: str                       # short name, used by run_all.py --workloads
    title: str
    contenders: list                # problin first
    make_data: Callable             # make_data(args) -> (X, y, one-line description)
    loss: Callable                  # loss(X, y, b, W) -> mean log-loss
    full: dict                      # default sizes, e.g. {"n": 10**6, "d": 50}
    quick: dict                     # --quick sizes
    penalised: bool = False         # compare sum log-loss + alpha/2 |W|^2 (needs args.alpha)


def add_common_args(p):
    p.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    p.add_argument("--repeats", type=int, default=3, help="timed fits per library; median")
    p.add_argument("--repeats-slow", type=int, default=1,
                   help="timed fits for a reference slower than --slow-after (default 1)")
    p.add_argument("--slow-after", type=float, default=SLOW_S, metavar="SECONDS",
                   help=f"what 'slow' means for --repeats-slow (default {SLOW_S:g} s)")
    p.add_argument("--only", default="", help="comma list of keys or library names")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-memory", dest="memory", action="store_false",
                   help="skip the untimed first fit that measures peak memory")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")


def parse_args(w, argv=None, strict=True):
    p = argparse.ArgumentParser(description=f"{w.title}: problin vs. reference libraries")
    add_common_args(p)
    for key, full in w.full.items():
        typ, help_ = SIZE_OPTIONS[key]
        p.add_argument(f"--{key}", type=typ, default=None,
                       help=f"{help_} (default {full:,}; --quick {w.quick[key]:,})")
    args = p.parse_args(argv)
    for key, value in (w.quick if args.quick else w.full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.repeats < 1 or args.repeats_slow < 1:
        p.error("--repeats and --repeats-slow must be >= 1")
    args.selected = select(w, args.only, strict)
    return args


def select(w, only, strict=True):
    if not only:
        return list(w.contenders)
    wanted = {s.strip() for s in only.split(",") if s.strip()}
    unknown = wanted - {c.key for c in w.contenders} - {c.library for c in w.contenders}
    if unknown and strict:
        sys.exit(f"--only: unknown name(s) {sorted(unknown)}; choose from "
                 f"{[c.key for c in w.contenders]} or a library name")
    return [c for c in w.contenders if c.key in wanted or c.library in wanted]


def import_versions(contenders):
    """Import each library (so that its thread pools exist): {key: (version, error)}."""
    out = {}
    for c in contenders:
        try:
            out[c.key] = (getattr(importlib.import_module(c.library), "__version__", "?"), "")
        except Exception as exc:  # noqa: BLE001 -- also a half-edited package's errors
            out[c.key] = ("-", f"cannot import {c.library}: {type(exc).__name__}: {exc}")
    return out


EMPTY_ROW = {"key": "", "version": "", "config": "", "inference": "", "target": None,
             "time_s": np.nan, "reps": "", "n_iter": -1, "log_loss": np.nan,
             "objective": np.nan, "peak_tm_MB": np.nan, "peak_rss_MB": np.nan,
             "warnings": "", "note": "", "_theta": None}


def _fit_one(w, c, X, y, args):
    """Memory fit (untimed, also the warm-up), then the timed fits. Any exception
    is caught and reported in the row's note."""
    row = dict(EMPTY_ROW, key=c.key, config=c.config, target=c.target,
               inference="yes" if c.inference else "no")
    try:
        first = None
        if args.memory:
            row["peak_tm_MB"], row["peak_rss_MB"], first = peak_memory(lambda: c.fit(X, y, args))
        slow = None if c.key == "problin" else args.repeats_slow
        secs, res, msgs, n = timed(lambda: c.fit(X, y, args), args.repeats, slow, first,
                                   args.slow_after)
        b, W, n_iter, *has_se = res     # optional 4th: were standard errors computed?
        if has_se:
            row["inference"] = "yes" if has_se[0] else "no"
        b = np.atleast_1d(np.asarray(b, dtype=np.float64))
        W = np.atleast_2d(np.asarray(W, dtype=np.float64))
        row.update(time_s=secs, n_iter=int(n_iter), warnings="; ".join(msgs),
                   reps=f"{n}" + ("*" if n < args.repeats else ""), log_loss=w.loss(X, y, b, W))
        if w.penalised:
            row["objective"] = X.shape[0] * row["log_loss"] + 0.5 * args.alpha * np.sum(W ** 2)
        if W.shape[0] > 1 and not w.penalised:   # identified: contrasts to the first class
            b, W = b - b[0], W - W[0]
        row["_theta"] = np.r_[b, W.ravel()]
    except Exception as exc:  # noqa: BLE001 -- report and carry on with the next library
        row["note"] = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return row


def _verdict(ok):
    return "PASS" if ok else "FAIL"


def run_workload(w, args, print_env=True):
    t_start = time.perf_counter()
    versions = import_versions(args.selected)
    if print_env:
        print("== environment ==\n" + "\n".join(environment_report()))
    X, y, description = w.make_data(args)
    size_x = nbytes(X)
    print(f"\n== {w.title} == {description}; X {size_x / MB:,.1f} MB")
    rows = []
    for c in args.selected:
        version, error = versions[c.key]
        print(f"-- {c.key} ({c.library} {version}) ...", end=" ", flush=True)
        if error:     # not importable: a row with the error, no fit
            r = dict(EMPTY_ROW, key=c.key, config=c.config, target=c.target, note=error)
        else:
            r = _fit_one(w, c, X, y, args)
        r["version"] = version
        rows.append(r)
        print(f"{r['time_s']:.4g} s" if not r["note"] else f"failed: {r['note'][:100]}",
              flush=True)
    del X, y
    t = pd.DataFrame(rows, columns=list(EMPTY_ROW))
    t["target"] = t["target"].astype(float)
    t["mem/X"] = np.fmax(t["peak_tm_MB"].astype(float), t["peak_rss_MB"].astype(float)) \
        * MB / size_x
    crit = "objective" if w.penalised else "log_loss"   # what problin must reach
    p = t[(t["key"] == "problin") & (t["note"] == "")]
    p = p.iloc[0] if len(p) else None
    if p is not None:
        t["problin/ref"] = p["time_s"] / t["time_s"]
        # > 0: problin's loss is above this reference's, i.e. problin fell short of it.
        t["rel_diff"] = (p[crit] - t[crit]) / np.abs(t[crit])
        t["max_coef_diff"] = [np.max(np.abs(th - p["_theta"])) if th is not None else np.nan
                              for th in t["_theta"]]
    else:
        t["problin/ref"] = t["rel_diff"] = t["max_coef_diff"] = np.nan
    has_target = t["target"].notna()
    # "n/a": the reference itself failed, nothing to compare with.
    t["time_ok"] = [("-" if pd.isna(g) else "n/a" if n else _verdict(r <= g))
                    for r, g, n in zip(t["problin/ref"], t["target"], t["note"])]
    t["loss_ok"] = [("-" if k == "problin" else "n/a" if n else _verdict(d <= LOSS_RTOL))
                    for k, d, n in zip(t["key"], t["rel_diff"], t["note"])]
    p_mem = p["mem/X"] if p is not None else np.nan
    # problin failed: FAIL; not run (--only) or not measured (--no-memory): "-".
    ran = bool((t["key"] == "problin").any())
    mem_ok = ("FAIL" if ran and p is None else "-" if pd.isna(p_mem)
              else "n/a" if size_x < MEMORY_MIN_MB * MB else _verdict(p_mem <= MEMORY_TARGET))
    summary = [{"workload": w.name, "reference": r["key"], "reps": r["reps"],
                "problin/ref": r["problin/ref"], "target": r["target"], "time": r["time_ok"],
                "rel_diff": r["rel_diff"], "loss": r["loss_ok"],
                "problin_mem/X": p_mem, "memory": mem_ok,
                "note": _summary_note(t, r)} for _, r in t[has_target].iterrows()]
    return {"workload": w, "table": t.drop(columns="_theta"), "size_x": size_x,
            "description": description, "summary": summary, "problin_mem": p_mem,
            "mem_ok": mem_ok, "seconds": time.perf_counter() - t_start}


def _summary_note(t, ref):
    """The first of: problin's error, the reference's error, their warnings."""
    p = t[t["key"] == "problin"]
    if not len(p):
        return "problin not run"
    p = p.iloc[0]
    for who, r, col in (("problin", p, "note"), (ref["key"], ref, "note"),
                        ("problin", p, "warnings"), (ref["key"], ref, "warnings")):
        if r[col]:
            return f"{who}: {r[col]}"
    return ""


def left_aligned(strings):
    """Pad to one width, so that ``to_string``'s right-justification leaves them left-aligned."""
    width = max((len(s) for s in strings), default=0)
    return [s.ljust(width) for s in strings]


def fmt_or_dash(spec):
    return lambda v: "-" if pd.isna(v) else spec.format(v)


def show(res, args):
    t, w = res["table"].copy(), res["workload"]
    t["target"] = ["-" if pd.isna(g) else f"<={g:g}" for g in t["target"]]
    t["note"] = left_aligned([n[:48] + ("..." if len(n) > 48 else "") for n in t["note"]])
    diff = "rel_obj_diff" if w.penalised else "rel_loss_diff"
    t = t.rename(columns={"rel_diff": diff})
    cols = ["key", "inference", "reps", "time_s", "problin/ref", "target",
            "time_ok", "n_iter", "log_loss"] + (["objective"] if w.penalised else []) + \
           [diff, "loss_ok", "max_coef_diff", "peak_tm_MB", "peak_rss_MB", "mem/X", "note"]
    specs = {"time_s": "{:.4g}", "problin/ref": "{:.3f}", "log_loss": "{:.10f}",
             "objective": "{:.6f}", diff: "{:+.2e}", "max_coef_diff": "{:.1e}",
             "peak_tm_MB": "{:,.0f}", "peak_rss_MB": "{:,.0f}", "mem/X": "{:.2f}"}
    fmt = {k: fmt_or_dash(v) for k, v in specs.items()}
    fmt["n_iter"] = lambda v: "-" if v < 0 else str(v)
    print(f"\n== results: {w.title} == median of {args.repeats} fit(s)")
    print(t[cols].to_string(index=False, formatters=fmt, na_rep="-"))
    crit = "penalised objective sum(log-loss) + alpha/2 |W|^2" if w.penalised else "mean log-loss"
    print(f"  {diff} = (problin - ref) / |ref| of the {crit}; loss_ok: <= {LOSS_RTOL:g}. "
          f"mem/X = max(tracemalloc, RSS) peak / size of X ({res['size_x'] / MB:,.1f} MB)")
    if (t["reps"].str.endswith("*")).any():
        print(f"  * slower than {args.slow_after:g} s: timed over "
              f"--repeats-slow={args.repeats_slow} fit(s) instead of {args.repeats}")
    mem = "-" if pd.isna(res["problin_mem"]) else f"{res['problin_mem']:.2f}"
    small = res["mem_ok"] == "n/a"
    print(f"  problin peak extra memory = {mem} x size of X (target <= {MEMORY_TARGET}): "
          f"{res['mem_ok']}" + (f" (the target applies from {MEMORY_MIN_MB:g} MB of X: fixed "
                                "buffers dominate below)" if small else "")
          + (" (at --quick sizes fixed overheads dominate: ignore)"
             if args.quick and not small else ""))
    for _, r in res["table"].iterrows():
        extra = (f"  [warnings: {r['warnings']}]" if r["warnings"] else "") + \
                (f"  [error: {r['note'][:300]}]" if r["note"] else "")
        print(f"  {r['key']} ({r['version']}): {r['config']}{extra}")


def to_json(res):
    t = res["table"]
    return {"workload": res["workload"].name, "description": res["description"],
            "size_x_bytes": int(res["size_x"]), "seconds": res["seconds"],
            "results": json.loads(t.to_json(orient="records")),
            "summary": json.loads(pd.DataFrame(res["summary"]).to_json(orient="records"))}


def main(w, argv=None):
    args = parse_args(w, argv)
    res = run_workload(w, args)
    show(res, args)
    print(f"\ntotal wall time {res['seconds']:.1f} s (data, all fits and memory runs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(to_json(res), args={k: v for k, v in vars(args).items()
                                               if k != "selected"},
                           environment=environment_report()), f, indent=2)
        print(f"saved {args.json}")
