"""Run one problin call in a child process with a bounded address space.

A hostile file must cost bounded memory: the child limits its address space to
what it uses after the imports plus 1 GiB (so a regression fails with a
``MemoryError`` instead of exhausting the machine), makes the call, and reports
the outcome and how far the call raised its peak RSS (``ru_maxrss``, in MB).
"""
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent("""
    import resource, sys
    import problin
    from problin.io import DataFileError, ModelFileError
    from problin.io.readers import read_data
    call = {{"load": problin.load, "read_data": read_data}}[sys.argv[1]]
    with open("/proc/self/status") as fh:
        vm = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + 2 ** 30, resource.RLIM_INFINITY))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        call(sys.argv[2])
        outcome = "{ok}"
    except (DataFileError, ModelFileError) as exc:
        outcome = type(exc).__name__ + ": " + str(exc)
    except MemoryError:
        outcome = "MemoryError"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{{(after - before) / 1024:.0f}}")
    print(outcome)
""")


def run_bounded(call, path, ok="done"):
    """``(peak_mb, outcome)`` of ``call`` ("load" or "read_data") on ``path`` in a child;
    ``outcome`` is ``ok``, ``"<ErrorClass>: message"`` or ``"MemoryError"``."""
    done = subprocess.run([sys.executable, "-c", _CHILD.format(ok=ok), call, str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    peak, outcome = done.stdout.strip().split("\n", 1)
    return float(peak), outcome
