"""A fork after a fit: the children fit too (issue 31, item 11).

Block passes run on a module-level thread pool. A forked child inherits the pool's
bookkeeping but none of its threads, so a pass that queued work on it waited forever:
fit, fork (``os.fork``, a ``multiprocessing`` fork pool, joblib's multiprocessing
backend, a preforking server), fit again in the child -- a hang. The scenarios run in
a subprocess of their own, each with a deadline, so that a regression fails here
instead of hanging the suite.
"""
import os
import signal
import subprocess
import sys
import textwrap

_SCRIPT = textwrap.dedent("""
    import multiprocessing, os, threading, time
    import joblib
    import numpy as np
    from problin._core import blocks
    from problin.glm import LogisticRegression
    from problin.linear_model import LinearRegression

    blocks.n_workers = lambda: 2  # two block threads even on a one-core runner

    # Large enough for the block pool (8 element-wise chunks of 16,384 rows: two
    # threads), small enough to fit in ~0.1 s.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(140_000, 2))
    y = (X[:, 0] + rng.normal(size=len(X)) > 0).astype(int)

    def fit(_=None):
        LogisticRegression().fit(X, y)
        LinearRegression().fit(X, X[:, 1] + 0.5 * X[:, 0])
        return "fitted"

    fit()
    assert any(t.name.startswith("problin-block") for t in threading.enumerate()), \\
        "the parent's fit did not use the block threads: the scenario tests nothing"

    DEADLINE = 20.0

    pid = os.fork()
    if pid == 0:
        fit()
        os._exit(0)
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("fork", "ok" if os.waitstatus_to_exitcode(status) == 0 else "failed",
                  flush=True)
            break
        time.sleep(0.02)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print("fork hung", flush=True)

    pool = multiprocessing.get_context("fork").Pool(2)
    try:
        print("pool", pool.map_async(fit, range(2)).get(DEADLINE) == ["fitted"] * 2,
              flush=True)
    except multiprocessing.TimeoutError:
        print("pool hung", flush=True)
    finally:
        pool.terminate()
        pool.join()

    try:
        out = joblib.Parallel(n_jobs=2, backend="multiprocessing", timeout=DEADLINE)(
            joblib.delayed(fit)() for _ in range(2))
        print("joblib", out == ["fitted"] * 2, flush=True)
    except Exception as error:  # joblib's TimeoutError (its class varies by version)
        print("joblib", type(error).__name__, flush=True)
""")


def test_children_fit_after_a_fit_in_the_parent():
    # A session of its own: on a timeout the whole group goes, hung children included.
    with subprocess.Popen([sys.executable, "-c", _SCRIPT], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"the fork scenarios did not finish: {out}{err}") from None
    assert proc.returncode == 0, err
    assert out.split("\n")[:3] == ["fork ok", "pool True", "joblib True"], out + err
