"""The documentation builds with warnings as errors, running every gallery example.

A docstring that numpydoc or docutils cannot parse, a broken cross-reference in the pages,
or an example in ``examples/`` that raises fails this test (and so the test suite). The
build runs on a copy of the sources, so that what Sphinx and sphinx-gallery generate
(``docs/auto_examples``, ``docs/generated``) never lands in the working tree.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = shutil.ignore_patterns("_build", "auto_examples", "generated", "gen_modules",
                                   "__pycache__", "*.pyc")


def _copy_sources(target: Path) -> None:
    """docs/, examples/ and the files the pages include, at their relative places."""
    shutil.copytree(ROOT / "docs", target / "docs", ignore=GENERATED)
    if (ROOT / "examples").is_dir():
        shutil.copytree(ROOT / "examples", target / "examples", ignore=GENERATED)
    (target / "bench").mkdir()
    for name in ("CHANGELOG.md", "LICENSE", "bench/README.md"):
        shutil.copy2(ROOT / name, target / name)


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    sources = tmp_path / "src"
    _copy_sources(sources)
    assert (sources / "examples" / "README.txt").is_file(), "examples/README.txt is missing"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-j", "1", "-q",
               "-b", "html", str(sources / "docs"), str(tmp_path / "html")]
    done = subprocess.run(command, cwd=sources, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, (
        f"sphinx failed ({done.returncode}):\n{done.stderr[-12000:]}\n{done.stdout[-4000:]}")
    html = tmp_path / "html"
    for page in ("index.html", "api.html", "cli.html", "benchmarks.html", "changelog.html",
                 "auto_examples/index.html", "generated/problin.LogisticRegression.html"):
        assert (html / page).is_file(), page
