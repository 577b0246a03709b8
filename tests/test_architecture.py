"""The architecture's rules, checked: import contracts (import-linter) and types (mypy).

The contracts live in ``pyproject.toml`` ([tool.importlinter]); what they say
and why is in ``docs/design.md``. Both checks read the source tree only.
"""
import os
import pathlib

from importlinter.cli import lint_imports
from mypy import api as mypy_api

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_import_contracts_hold():
    old = os.getcwd()
    os.chdir(ROOT)  # import-linter reads pyproject.toml from the working directory
    try:
        assert lint_imports(no_cache=True) == 0, "an import contract is broken (run lint-imports)"
    finally:
        os.chdir(old)


def test_mypy_passes():
    stdout, stderr, status = mypy_api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                      "--cache-dir", str(ROOT / ".mypy_cache"),
                                      str(ROOT / "src" / "problin")])
    assert status == 0, stdout + stderr
