"""What the command line prints from data or a model file is shown, never obeyed (issue
31, item 3): terminal escapes (ESC/CSI/OSC sequences, BEL, carriage returns, bidi
overrides) in column names, category levels, class labels or a model file's metadata are
printed escaped (``\\x1b``), by ``fit``, ``summary``, ``predict``, ``compare`` and in
warnings and errors."""
import numpy as np
import pandas as pd
import pytest
from tests.cli.conftest import invoke
from tests.io.test_model_file_state import resign


OSC = "\x1b]0;owned\x07"  # sets the terminal's title
CSI = "\x1b[2J"  # clears the screen
RNG = np.random.default_rng(0)


def _raw(result):
    return result.stdout + result.stderr


def _assert_shown_not_obeyed(text):
    assert not any(c in text for c in "\x1b\x07\x9b\r\u202e"), repr(text)
    assert "\\x1b" in text, text


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame({f"a{OSC}": RNG.normal(size=40),
                          "g": RNG.choice([f"u{CSI}", "v\u202e", "w\x9b31m"], 40)})
    frame["y"] = np.where(frame.iloc[:, 0] + RNG.normal(size=40) > 0, f"yes{CSI}", "no\r")
    frame.to_csv("d.csv", index=False)
    return tmp_path


def test_printable_escapes_controls_and_keeps_text():
    from problin.cli._common import printable
    assert printable("a\x1b[31mb\x07c\r\u202ed\x9b") == "a\\x1b[31mb\\x07c\\r\\u202ed\\x9b"
    assert printable("line 1\n\tline 2 ± é 漢 🙂") == "line 1\n\tline 2 ± é 漢 🙂"
    assert printable("a\nb", newlines=False) == "a\\nb"


def test_fit_summary_and_predict_print_escapes_escaped(hostile):
    fit = invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "--alpha", "1", "-o", "m.problin")
    assert fit.exit_code == 0, fit.output
    _assert_shown_not_obeyed(_raw(fit))
    assert "a\\x1b]0;owned\\x07" in fit.stdout and "g=v\\u202e" in fit.stdout
    summary = invoke("summary", "m.problin")
    assert summary.exit_code == 0, summary.output
    _assert_shown_not_obeyed(_raw(summary))
    predict = invoke("predict", "m.problin", "d.csv", "--proba")
    assert predict.exit_code == 0, predict.output
    _assert_shown_not_obeyed(_raw(predict))
    assert "p_yes\\x1b[2J" in predict.stdout.splitlines()[0]


def test_compare_and_errors_print_escapes_escaped(hostile):
    compare = invoke("compare", "d.csv", "-t", "y", "--models", "logistic", "--cv", "2")
    assert compare.exit_code == 0, compare.output
    assert "\x1b" not in _raw(compare)
    # an unseen category at predict: the error quotes data
    invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "--alpha", "1", "-o", "m.problin")
    pd.DataFrame({f"a{OSC}": [0.0], "g": [f"z{OSC}"]}).to_csv("new.csv", index=False)
    error = invoke("predict", "m.problin", "new.csv")
    assert error.exit_code == 1 and "Traceback" not in error.output
    assert not any(c in _raw(error) for c in "\x1b\x07"), repr(_raw(error))


def test_a_model_files_metadata_is_escaped_too(hostile):
    assert invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "--alpha", "1",
                  "-o", "m.problin").exit_code == 0

    def edit(meta):  # the target's name and the problin version, as a file may claim them
        meta["target"] = f"y{OSC}"
        meta["problin_version"] = f"9{CSI}"
    resign(hostile / "m.problin", edit)
    summary = invoke("summary", "m.problin")
    assert summary.exit_code == 0, summary.output
    _assert_shown_not_obeyed(_raw(summary))


def test_a_formula_fit_prints_levels_escaped(hostile):
    # C(g)'s design columns name its levels: the formula path prints them too
    result = invoke("fit", "d.csv", "-m", "logistic", "--alpha", "1", "-f", "y ~ C(g)",
                    "-o", "f.problin")
    assert result.exit_code == 0, result.output
    assert not any(c in _raw(result) for c in "\x1b\x07\x9b\r\u202e"), repr(_raw(result))
    assert "\\x9b31m" in result.stdout and "\\u202e" in result.stdout
