"""``problin fit -p penalty=firth --ci profile --pvalues lr``: logistf's summary of
endometrial (the numbers of tests/glm/test_firth_lr.py and test_profile_ci.py) printed,
the Firth fit saved and loaded with its penalty, a formula fit alike, and the requests
the refits cannot meet refused before anything is written."""

import numpy as np
import pandas as pd
import pytest

from problin import LogisticRegression, load
from tests.cli.conftest import invoke
from tests.glm.test_firth import _ENDOMETRIAL


@pytest.fixture(scope="module")
def endometrial_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("firth") / "endometrial.csv"
    frame = pd.DataFrame(_ENDOMETRIAL, columns=["NV", "PI", "EH", "HG"])
    frame.astype({"NV": int, "HG": int}).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def firth_fit(endometrial_csv):
    out = endometrial_csv.parent / "m.problin"
    result = invoke("fit", endometrial_csv, "-t", "HG", "-m", "logistic", "-p",
                    "penalty=firth", "--ci", "profile", "--pvalues", "lr", "-o", out)
    return out, result


def test_fit_firth_prints_logistf_summary_and_saves_the_penalty(firth_fit):
    out, result = firth_fit
    assert result.exit_code == 0, result.output
    # logistf: chisq 8.19801, 17.7593 (EH); profile bounds 1.08254 .. 7.20928 (intercept)
    for text in ("8.19801", "17.7593", "1.08254", "7.20928", "-4.36518",
                 "Profile-likelihood 95% intervals (of the penalised likelihood)",
                 "Penalised likelihood-ratio tests"):
        assert text in result.output
    model = load(out)
    assert model.penalty == "firth"
    X, y = _ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3]
    np.testing.assert_allclose(model.coef_, LogisticRegression(penalty="firth").fit(X, y).coef_,
                               rtol=1e-10)
    assert "penalty='firth'" in invoke("summary", out).output


def test_report_parameter_table_refits_behind_a_scaler():
    """The report's table (``problin report --ci profile --pvalues lr``; the page itself,
    its plots a few seconds, is left to the report's tests): a Pipeline's refits read
    the scaler's output, and the caption says the rows are taken as the training rows."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from problin.report.builder import _parameters
    X, y = _ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3]
    model = make_pipeline(StandardScaler(), LogisticRegression(penalty="firth")).fit(X, y)
    table, caption = _parameters(model, X, y, ["NV", "PI", "EH"],
                                 {"ci": "profile", "pvalues": "lr"}, {})
    # the scaled slopes' LR statistics are the raw ones (logistf's, test_firth_lr.py)
    np.testing.assert_allclose(table["chi2"].iloc[1:], [6.798457248666054, 0.746828513432114,
                                                        17.759317479438351], atol=1e-6)
    assert "taken to be the training rows" in caption and "Profile-likelihood" in caption


def test_fit_formula_firth_profile(endometrial_csv, tmp_path):
    result = invoke("fit", endometrial_csv, "-f", "HG ~ NV + PI + EH", "-m", "logistic",
                    "-p", "penalty=firth", "--ci", "profile", "--pvalues", "lr",
                    "-o", tmp_path / "f.problin")
    assert result.exit_code == 0, result.output
    assert "P>chi2" in result.output and "17.7593" in result.output
    assert "Dep. Variable:                     HG" in result.output
    assert load(tmp_path / "f.problin").estimator_.penalty == "firth"


@pytest.mark.parametrize("args, message", [
    (["-p", "penalty=flic", "--ci", "profile"], "use -p penalty=firth"),
    (["--alpha", "1", "--pvalues", "lr"], "L2 penalty"),
    (["--ci", "profile", "--engine", "dask"], "drop them with --engine dask"),
])
def test_fit_refuses_refits_it_cannot_do(endometrial_csv, tmp_path, args, message):
    out = tmp_path / "never.problin"
    result = invoke("fit", endometrial_csv, "-t", "HG", "-m", "logistic", *args, "-o", out)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output and not out.exists()
    lda = invoke("fit", endometrial_csv, "-t", "HG", "-m", "lda", "--ci", "profile", "-o", out)
    assert lda.exit_code == 2 and "apply to the GLMs" in lda.output
