"""Shared by the command-line tests: running several ``problin`` commands at once, and
one command in process (:func:`invoke`)."""
import subprocess
import sys

import pytest
from click.testing import CliRunner

from problin.cli.main import cli


def invoke(*args, env=None):
    """``problin ARGS`` in this process (arguments as strings), its click Result."""
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


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
