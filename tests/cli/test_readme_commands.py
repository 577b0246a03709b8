"""The README's command-line example runs as written, line by line, in a fresh folder."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _commands() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- cli-example[^>]*-->\n```\n(.*?)```", text, re.S)
    assert block, "the README's command-line example went missing"
    lines = [line.split("  #")[0].strip() for line in block[1].splitlines()]
    return [shlex.split(line) for line in lines if line]


def _argv(words: list[str]) -> list[str]:
    """``problin ...``, ``python3 -m problin ...`` and ``python3 -c ...`` with this Python."""
    if words[0] == "problin":
        return [sys.executable, "-m", "problin", *words[1:]]
    assert words[0] == "python3", words
    return [sys.executable, *words[1:]]


@pytest.mark.slow
def test_readme_command_line_example_runs(tmp_path):
    commands = _commands()
    assert any(words[0] == "problin" for words in commands)
    for words in commands:
        done = subprocess.run(_argv(words), cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, f"{' '.join(words)}\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "sex.problin").is_file()
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<html" in page.lower() and "cross-validation" in page
