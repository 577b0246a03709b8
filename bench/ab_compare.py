"""A/B timing of problin itself: two checkouts, the same bench scripts, interleaved runs.

On a shared machine the load drifts by more than the effects worth measuring, so a
ratio of two separately measured medians says little. This runs each workload's command
under ``PYTHONPATH=<before>/src`` and ``PYTHONPATH=<after>/src`` alternately (B, A, B,
A, ...), reads problin's own fit time from each run's output, and prints per workload the
median times, the AFTER/BEFORE ratio of the medians and the min-max of the per-pair
ratios, with the 1-minute load average (``/proc/loadavg``) at the start of each run.

    python bench/ab_compare.py --before /work/wt-golden-src --after . --pairs 4
    python bench/ab_compare.py --before OLD --after NEW --workloads small,regression
    python bench/ab_compare.py --before OLD --after NEW --one-core 1   # loaded machine

On a loaded machine, thread pools that wait on each other (BLAS, problin's row-block
workers) make a 2-core wall time vary by 3x from run to run; ``--one-core CPU`` pins both
sides to that CPU (``taskset``; problin sizes its pool by the affinity) with one BLAS/OpenMP
thread, which measures the same code with far less spread; ``--cpu-clock`` (with
``--one-core``) makes the scripts' clock ``time.process_time``: one thread's CPU time is the
work itself, not the time spent waiting for the core, so other agents' load drops out.

The bench scripts run are the ones next to this file (one harness for both sides);
``--bench-before DIR`` runs the BEFORE side from another bench directory, for a script
that imports something the older code does not have.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPREAD_WARN = 0.10   # the tolerance: flag a pair spread wider than this

# name -> (script, arguments, parser); every script prints problin's fit time per case.
# Sizes are chosen so that one problin fit takes ~0.05-2 s on 2 cores (seconds, not minutes).
WORKLOADS = {
    "logistic": ("bench_logistic.py", ["--only", "problin", "--no-memory", "--repeats", "3",
                                       "--n", "200000", "--d", "50"], "harness"),
    "softmax": ("bench_softmax.py", ["--only", "problin", "--no-memory", "--repeats", "3",
                                     "--n", "60000", "--d", "30", "--k", "10"], "harness"),
    "probit": ("bench_probit.py", ["--only", "problin", "--no-memory", "--repeats", "3",
                                   "--n", "200000", "--d", "50"], "harness"),
    "sparse": ("bench_sparse.py", ["--only", "problin", "--no-memory", "--repeats", "3",
                                   "--n", "50000", "--d", "20000", "--nnz", "40"], "harness"),
    "small": ("bench_small.py", ["small-binary", "small-softmax", "medium-binary",
                                 "--only", "problin", "--no-memory", "--repeats", "9"],
              "harness"),
    "generative": ("bench_generative.py", ["--only", "lda,qda,gaussiannb", "--no-memory",
                                           "--repeats", "5", "--n", "100000", "--d", "50"],
                   "generative"),
    "regression": ("bench_regression.py", ["--n", "300000", "--d", "50", "--repeats", "5"],
                   "regression"),
}


def parse_harness(out):
    """problin's ``time_s`` in each ``== results: <title> ==`` table of _harness.show."""
    times, title, header = {}, None, None
    for line in out.splitlines():
        m = re.match(r"== results: (.+?) ==", line)
        if m:
            title, header = m.group(1), None
        elif title and header is None and "time_s" in line.split():
            header = line.split()
        elif title and header and line.split()[:1] == ["problin"]:
            times[title] = float(line.split()[header.index("time_s")])
            title = None
    return times


def parse_generative(out):
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^\s+(\S+): problin ([0-9.]+) s", out, re.M)}


def parse_regression(out):
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^\s+(.+?): problin ([0-9.]+) s, sklearn", out, re.M)}


PARSERS = {"harness": parse_harness, "generative": parse_generative,
           "regression": parse_regression}


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# Runs a bench script with its timer swapped for this process's CPU time (--cpu-clock).
CPU_CLOCK_SHIM = ("import runpy, sys, time; time.perf_counter = time.process_time; "
                  "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def run_side(checkout, bench_dir, script, argv, parser, cpu=None, cpu_clock=False):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(checkout), "src"))
    pin = []
    if cpu is not None:
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        pin = ["taskset", "-c", str(cpu)]
    load = load1()
    shim = ["-c", CPU_CLOCK_SHIM] if cpu_clock else []
    proc = subprocess.run([*pin, sys.executable, *shim, os.path.join(bench_dir, script), *argv],
                          env=env, capture_output=True, text=True, cwd=bench_dir)
    times = PARSERS[parser](proc.stdout)
    if proc.returncode != 0 or not times:
        raise RuntimeError(f"{script} under {checkout} failed (rc {proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return times, load


def check_import(checkout):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(checkout), "src"))
    path = subprocess.run([sys.executable, "-c", "import problin; print(problin.__file__)"],
                          env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not path.startswith(os.path.abspath(checkout)):
        raise SystemExit(f"PYTHONPATH={checkout}/src imports problin from {path}")
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="checkout whose src/ is BEFORE")
    p.add_argument("--after", required=True, help="checkout whose src/ is AFTER")
    p.add_argument("--bench-before", default=HERE,
                   help="bench directory for the BEFORE side (default: this one)")
    p.add_argument("--pairs", type=int, default=3, help="B,A pairs per workload")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help=f"comma list of {list(WORKLOADS)}")
    p.add_argument("--extra", default="", metavar="ARGS",
                   help="arguments appended to each workload's (the last --n wins): "
                        "'--n 400000'")
    p.add_argument("--one-core", type=int, default=None, metavar="CPU",
                   help="pin both sides to this CPU with one BLAS/OpenMP thread")
    p.add_argument("--cpu-clock", action="store_true",
                   help="time CPU seconds (time.process_time) instead of wall seconds; "
                        "needs --one-core")
    args = p.parse_args(argv)
    if args.cpu_clock and args.one_core is None:
        p.error("--cpu-clock needs --one-core (CPU time of several threads is not a duration)")
    names = [s for s in args.workloads.split(",") if s]
    bad = set(names) - set(WORKLOADS)
    if bad:
        p.error(f"unknown workload(s) {sorted(bad)}")
    print(f"BEFORE imports {check_import(args.before)}")
    print(f"AFTER  imports {check_import(args.after)}")
    rows = []
    for name in names:
        script, wargv, parser = WORKLOADS[name]
        wargv = wargv + args.extra.split()
        print(f"\n== {name}: {script} {' '.join(wargv)}", flush=True)
        per_case = {}
        for i in range(args.pairs):
            b, lb = run_side(args.before, args.bench_before, script, wargv, parser,
                             args.one_core, args.cpu_clock)
            a, la = run_side(args.after, HERE, script, wargv, parser, args.one_core,
                             args.cpu_clock)
            for case in b:
                per_case.setdefault(case, []).append((b[case], a.get(case), lb, la))
            print(f"  pair {i + 1}: load B {lb:.2f} A {la:.2f}; "
                  + "; ".join(f"{c}: B {b[c]:.4g} A {a.get(c, float('nan')):.4g}" for c in b),
                  flush=True)
        for case, pairs in per_case.items():
            bt = [x[0] for x in pairs]
            at = [x[1] for x in pairs if x[1] is not None]
            ratios = [x[1] / x[0] for x in pairs if x[1] is not None and x[0] > 0]
            rows.append((name, case, statistics.median(bt), statistics.median(at),
                         statistics.median(at) / statistics.median(bt), min(at) / min(bt),
                         min(ratios),
                         max(ratios), " ".join(f"{x[2]:.1f}/{x[3]:.1f}" for x in pairs)))
    print(f"\n== A/B summary: {args.pairs} interleaved pair(s) per workload; times in s "
          "(each the script's own median of its repeats)"
          + (f"; pinned to CPU {args.one_core}, 1 thread" if args.one_core is not None
             else "") + ("; CPU seconds (process_time)" if args.cpu_clock else "; wall seconds"))
    head = f"{'workload':<11} {'case':<42} {'B med':>8} {'A med':>8} {'A/B':>6} {'best':>6} " \
           f"{'pair min-max':>13}  flag  load1 B/A per pair"
    print(head)
    for name, case, bm, am, r, best, lo, hi, loads in rows:
        flag = ("SLOWER" if lo > 1 + SPREAD_WARN else "faster" if hi < 1 - SPREAD_WARN
                else "") + (" wide" if hi - lo > SPREAD_WARN else "")
        print(f"{name:<11} {case[:42]:<42} {bm:8.4f} {am:8.4f} {r:6.3f} {best:6.3f} "
              f"{lo:6.3f}-{hi:<6.3f}  {flag:<5} {loads}")
    print("  A/B: ratio of the medians; best: ratio of the fastest runs; "
          "pair min-max: per-pair AFTER/BEFORE ratios; "
          f"'wide': spread > {SPREAD_WARN:.0%}; SLOWER/faster: every pair beyond "
          f"{SPREAD_WARN:.0%}")


if __name__ == "__main__":
    main()
