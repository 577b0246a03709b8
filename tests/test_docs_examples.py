"""The code in the README and in the documentation pages runs and prints what they say.

``>>>`` examples are doctests (the README's in ``tests/test_docstrings.py``). A fenced
```python block without prompts that is followed by a plain fenced block is a script and
its real output: the script is run and its printed output compared line by line.
"""
import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").rglob("*.md"))
PAGES = [p for p in PAGES if "_build" not in p.parts and "auto_examples" not in p.parts]
DOCTEST_PAGES = [p for p in PAGES if ">>>" in p.read_text(encoding="utf-8")]

# a ```python block without >>> prompts, a blank line, then an unlabelled ``` block
SCRIPT_AND_OUTPUT = re.compile(r"^```python\n(?P<code>(?:(?!>>>)(?!```).*\n)+?)```\n\n"
                               r"```\n(?P<output>(?:(?!```).*\n)*?)```$", re.MULTILINE)


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("page", DOCTEST_PAGES, ids=_name)
def test_page_doctests(page: Path) -> None:
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, f"{result.failed} failed in {page}"


SCRIPTS = [(page, match) for page in [ROOT / "README.md", *PAGES]
           for match in SCRIPT_AND_OUTPUT.finditer(page.read_text(encoding="utf-8"))]


def test_there_are_scripts_with_output() -> None:
    assert SCRIPTS, "the summary_text() example with its real output went missing"


@pytest.mark.parametrize(("page", "match"), SCRIPTS,
                         ids=[f"{_name(p)}:{m.start()}" for p, m in SCRIPTS])
def test_script_prints_its_output(page: Path, match: re.Match[str]) -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(match["code"], str(page), "exec"), {"__name__": "__docs__"})
    got = [line.rstrip() for line in printed.getvalue().rstrip("\n").splitlines()]
    expected = [line.rstrip() for line in match["output"].rstrip("\n").splitlines()]
    assert got == expected
