"""Shared by the command-line tests: running several ``problin`` commands at once."""
import subprocess
import sys

import pytest


def _run_all(commands, cwd):
    """Run ``{key: argv}`` concurrently; returns ``{key: CompletedProcess}``."""
    procs = {key: subprocess.Popen([sys.executable, "-m", "problin", *map(str, argv)],
                                   cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
             for key, argv in commands.items()}
    out = {}
    for key, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=240)
        out[key] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    return out


@pytest.fixture(scope="session")
def run_all():
    """``run_all({key: argv}, cwd)``: the commands' results, run in parallel processes."""
    return _run_all
