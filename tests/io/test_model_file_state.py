"""Model files whose fitted state was edited and re-signed (the checksum is an integrity
check anyone can recompute): ``problin.load`` refuses state that does not make a working
model with a ModelFileError naming the file and the problem, instead of an AttributeError
or IndexError at predict; legitimate models of many configurations still load and predict
bit-identically, and the check leaves them as they were; the command line reports a
broken model file in one line."""
import hashlib
import io
import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import problin
from problin.cli.main import cli
from problin.io import ModelFileError
from problin.io import model_file as model_file_module
from problin.io._codec import Encoder, registries
from problin.io._self_check import check_model_works

RNG = np.random.default_rng(0)
X = np.abs(RNG.normal(size=(40, 3))) + 0.1  # non-negative: counts for MultinomialNB
LABELS = np.where(X[:, 0] + RNG.normal(scale=0.5, size=40) > 1.0, "yes", "no").astype(object)
LABELS3 = np.array(["r", "g", "b"])[RNG.integers(0, 3, 40)]
T = X @ np.array([1.0, -2.0, 0.5]) + RNG.normal(scale=0.1, size=40)
FRAME = pd.DataFrame(X, columns=["a", "b", "c"]).assign(
    colour=np.array(["red", "green", "blue"])[RNG.integers(0, 3, 40)], y=LABELS, t=T)
METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform")


def _fit(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(*args)


def _npy(a):
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def resign(path, edit=None, arrays=None):
    """Rewrite a model file in place: ``edit(meta)`` changes the metadata,
    ``arrays(meta)`` returns ``{member: new array}``; then re-sign it, as anyone can."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members.pop("metadata.json"))
    if edit:
        edit(meta)
    for name, a in (arrays(meta) if arrays else {}).items():
        members[name] = _npy(a)
        meta["arrays"][name] = {"sha256": hashlib.sha256(members[name]).hexdigest(),
                                "bytes": len(members[name])}
    meta_bytes = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.json", meta_bytes)
        for name, data in members.items():
            zf.writestr(name, data)
        zf.comment = b"problin-model sha256=" + hashlib.sha256(meta_bytes).hexdigest().encode()


def _parent(node, key):
    """The dict holding ``key`` in an estimator node (its public ``state`` or, for private
    state by its stable name, ``internal``) or in a record node (``fields``)."""
    if "fields" in node:
        return node["fields"]
    return node["internal"] if key in node.get("internal", {}) else node["state"]


def _state(meta, *keys):
    node = meta["estimator"]
    for key in keys:
        node = _parent(node, key)[key]
    return node


def _set(*keys, value):
    def edit(meta):
        parent = _state(meta, *keys[:-1])
        _parent(parent, keys[-1])[keys[-1]] = value
    return edit


def _drop(*keys):
    def edit(meta):
        parent = _state(meta, *keys[:-1])
        _parent(parent, keys[-1]).pop(keys[-1])
    return edit


def _array(*keys, value):
    return lambda meta: {_state(meta, *keys)["$array"]: value}


def _logit():
    return _fit(problin.LogisticRegression(), X, LABELS)


def _gda():
    return _fit(problin.GaussianDiscriminantAnalysis(), X, LABELS)


def _gnb():
    return _fit(problin.GaussianNB(), X, LABELS)


def _ols():
    return _fit(problin.LinearRegression(), X, T)


def _pipeline():
    return _fit(make_pipeline(StandardScaler(), problin.LogisticRegression()), X, LABELS)


def _formula():
    return _fit(problin.Formula("y ~ a + np.log(b) + C(colour)", problin.LogisticRegression()),
                FRAME)


def _in_step(edit):  # the same edit, in the last step of a Pipeline
    def inner(meta):
        step = meta["estimator"]["params"]["steps"][-1]["$tuple"][1]
        edit({"estimator": step})
    return inner


def _in_formula(edit):  # the same edit, in a formula's fitted estimator
    return lambda meta: edit({"estimator": meta["estimator"]["state"]["estimator_"]})


# (model, metadata edit, array edit, what the message must say)
TAMPERED = {
    "classes_ text": (_logit, _set("classes_", value="zzz"), None,
                      r"model\.classes_ is 'zzz', not a non-empty array of class labels"),
    "classes_ emptied": (_logit, None, _array("classes_", value=np.array([], dtype="<U3")),
                         r"model\.classes_ is an array of object of shape \(0,\)"),
    "classes_ deleted": (_gda, _drop("classes_"), None, r"model lacks classes_"),
    "classes_ one too many": (_gda, None, _array("classes_", value=np.array(["a", "b", "c"])),
                              r"predict_proba on a row of zeros gives shape \(1, 2\), not one "
                              r"column per class \(3\)"),
    "n_features_in_ deleted": (_logit, _drop("n_features_in_"), None,
                               r"model lacks n_features_in_"),
    "n_features_in_ huge": (_logit, _set("n_features_in_", value=10 ** 12), None,
                            r"n_features_in_ = 1000000000000: the file holds \d+ values, "
                            r"fewer than one per feature"),
    "_result a number": (_logit, _set("fit", value=5), None,
                         r"model\.predict fails on a row of zeros \(AttributeError: 'int'"),
    "record field text": (_logit, None,
                          _array("fit", "theta_standard", value=np.array(["a", "b"])),
                          r"model\._result\.theta_standard: expected an array of float64 "
                          r"\(GLMFit declares it\), found an array of <U1"),
    "record field missing": (_logit, _drop("fit", "theta"), None,
                             r"model\._result: GLMFit lacks the fields \['theta'\]"),
    "record array complex": (_gnb, None,
                             _array("gaussian_model", "means", value=np.ones((2, 3), dtype=complex)),
                             r"model\._model\.means: expected an array of numbers, found an "
                             r"array of complex128"),
    "record array wrong shape": (_gnb, None, _array("gaussian_model", "prec_chol", value=np.zeros(7)),
                                 r"model\.predict fails on a row of zeros \(AxisError"),
    "declared attribute": (_ols, _set("ols_fit", value=5), None,
                           r"model\._ols: expected OLSFit or None \(LinearRegression "
                           r"declares it\), found int 5"),
    "pipeline step": (_pipeline, _in_step(_drop("classes_")), None, r"model lacks classes_"),
    "formula estimator": (_formula, _in_formula(_set("fit", value=5)), None,
                          r"model\.estimator_\.predict fails on a row of zeros "
                          r"\(AttributeError"),
    "formula columns": (_formula, _set("design_columns_", value=5), None,
                        r"model\.design_columns_ is not a list of column names"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_edited_state_is_refused_at_load_naming_the_problem(case, tmp_path):
    make, edit, arrays, message = TAMPERED[case]
    path = tmp_path / "m.problin"
    problin.save(make(), path)
    resign(path, edit, arrays)
    with pytest.raises(ModelFileError, match=message) as info:
        problin.load(path)
    assert str(info.value).startswith(f"{path}: ")


def test_the_reported_reproductions(tmp_path):
    """The audit's cases: each an AttributeError or IndexError at predict before."""
    path = tmp_path / "m.problin"
    for make, edit, arrays in [(_logit, _set("classes_", value="zzz"), None),
                               (_logit, _set("fit", value=5), None),
                               (_logit, None, _array("classes_", value=np.array([], dtype="<U3"))),
                               (_gda, _drop("classes_"), None)]:
        problin.save(make(), path)
        resign(path, edit, arrays)
        with pytest.raises(ModelFileError, match="does not make a working model"):
            problin.load(path)


def test_an_unfitted_estimator_loads_as_saved(tmp_path):
    problin.save(problin.LogisticRegression(alpha=2.0), tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    assert loaded.alpha == 2.0
    with pytest.raises(NotFittedError):
        loaded.predict(X)


# Legitimate models beyond the defaults of test_model_file.py: the check must accept them.
LEGIT = {
    "logistic multiclass": lambda: _fit(problin.LogisticRegression(alpha=1.0), X, LABELS3),
    "logistic categorical frame": lambda: _fit(problin.LogisticRegression(),
                                               FRAME[["a", "b", "colour"]], LABELS),
    "decision categorical frame": lambda: _fit(
        problin.BayesDecision(problin.LogisticRegression(alpha=1.0)),
        FRAME[["a", "b", "colour"]], LABELS),
    "decision naive bayes": lambda: _fit(problin.BayesDecision(problin.GaussianNB()), X, LABELS),
    "pipeline scaler": _pipeline,
    "pipeline basis": lambda: _fit(make_pipeline(MinMaxScaler(), problin.PolynomialBasis(
        degree=2), problin.LinearRegression(alpha=1.0)), X, T),
    "ols without intercept, two targets": lambda: _fit(
        problin.LinearRegression(fit_intercept=False), X, np.c_[T, -T]),
    "bayesian linear": lambda: _fit(problin.BayesianLinearRegression(), X, T),
    "bayesian logistic mcmc": lambda: _fit(problin.BayesianLogisticRegression(
        inference="mcmc", n_samples=100, random_state=0, progress=False), X, LABELS),
    "qda far from zero": lambda: _fit(problin.QuadraticDiscriminantAnalysis(), X + 1e6, LABELS),
    "naive bayes partial fit": lambda: _fit(problin.GaussianNB(), X, LABELS).partial_fit(
        X[:10], LABELS[:10]),
    "formula": _formula,
    "formula without intercept": lambda: _fit(
        problin.Formula("t ~ a + center(b) - 1", problin.LinearRegression()), FRAME),
}


def _outputs(model, data):
    out = {m: np.asarray(getattr(model, m)(data)) for m in METHODS if hasattr(model, m)}
    if isinstance(model, problin.BayesianLinearRegression):
        out["std"] = model.predict(data, return_std=True)[1]
    return out


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_legitimate_models_still_load_and_predict_bit_identically(name, tmp_path):
    model = LEGIT[name]()
    problin.save(model, tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    data = (FRAME if isinstance(model, problin.Formula) else
            FRAME[["a", "b", "colour"]] if "frame" in name else X + 1e6 if "far" in name else X)
    before, after = _outputs(model, data), _outputs(loaded, data)
    assert before.keys() == after.keys() and before
    for key, a in before.items():
        assert a.dtype == after[key].dtype and np.array_equal(a, after[key]), key


@pytest.mark.parametrize("name", sorted(LEGIT))
def test_the_check_leaves_the_model_as_it_was(name, tmp_path, monkeypatch):
    problin.save(LEGIT[name](), tmp_path / "m.problin")
    monkeypatch.setattr(model_file_module, "check_model_works", lambda *args: None)
    loaded = problin.load(tmp_path / "m.problin")

    def snapshot():
        enc = Encoder()
        return json.dumps(enc.value(loaded, "model"), sort_keys=True), enc.arrays

    before = snapshot()
    estimators = registries()[0].values()
    check_model_works(loaded, "m.problin", 10 ** 6,
                      lambda obj: any(type(obj) is cls for cls in estimators))
    assert snapshot() == before


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_the_command_line_reports_a_broken_model_file_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    FRAME[["a", "b", "c"]].to_csv("new.csv", index=False)
    problin.save(_logit(), "m.problin")
    resign(tmp_path / "m.problin", _set("fit", value=5))
    result = _invoke("predict", "m.problin", "new.csv")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("Error: m.problin: the fitted state does not make a working "
                               "model: model.predict fails on a row of zeros (AttributeError")


def test_a_failure_beyond_prediction_is_one_line_too(tmp_path, monkeypatch):
    """``summary`` reads state that no prediction does (GDA's intercept_): the load check
    passes it, and the command names the file in one line instead of a traceback."""
    monkeypatch.chdir(tmp_path)
    problin.save(_gda(), "m.problin")
    resign(tmp_path / "m.problin", _drop("intercept_"))
    problin.load("m.problin")  # predicts: loads
    result = _invoke("summary", "m.problin")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("Error: m.problin: the model fails (AttributeError: ")
    assert "intercept_" in lines[0] and "damaged or edited" in lines[0]
    debug = _invoke("--debug", "summary", "m.problin")  # the traceback, as asked
    assert isinstance(debug.exception, ModelFileError)
    assert isinstance(debug.exception.__cause__, AttributeError)
