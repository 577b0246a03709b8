"""Safe model files: every problin estimator round-trips bit-identically; bad files fail clearly."""
import io
import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import problin
from problin.io import ModelFileError, read_model_file
from problin.io.model_file import FORMAT_VERSION, MIN_FORMAT_VERSION

ESTIMATORS = sorted(name for name in problin.__all__
                    if isinstance(getattr(problin, name), type)
                    and issubclass(getattr(problin, name), BaseEstimator)
                    and name != "Formula")  # reads DataFrames: tests/test_formula.py
# Classes whose constructor needs an argument.
SPECIAL = {"BayesDecision": lambda: problin.BayesDecision(problin.LogisticRegression(alpha=1.0))}
METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform",
           "score_samples")


def _data(rng, n=40, d=3):
    X = np.abs(rng.normal(size=(n, d))) + 0.1  # non-negative: valid counts for MultinomialNB
    labels = np.where(X[:, 0] + rng.normal(scale=0.5, size=n) > 1.0, "yes", "no").astype(object)
    return X, labels, X @ np.array([1.0, -2.0, 0.5])[:d] + rng.normal(scale=0.1, size=n)


def _target(model, t):
    """Targets the regressor accepts: proportions for the binomial, positive values for
    the GLMs of counts and sizes (tagged ``positive_only``)."""
    if isinstance(model, problin.BinomialRegression):
        return 1.0 / (1.0 + np.exp(-t))
    return np.exp(t / 4.0) if model.__sklearn_tags__().target_tags.positive_only else t


def _fit(name, X, labels, t):
    cls = getattr(problin, name)
    model = SPECIAL.get(name, cls)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", problin.ProblinWarning)
        if issubclass(cls, ClassifierMixin) or name in SPECIAL:
            return model.fit(X, labels)
        if issubclass(cls, RegressorMixin):
            return model.fit(X, _target(model, t))
        assert issubclass(cls, TransformerMixin), name
        return model.fit(X)


def _outputs(model, X):
    out = {m: getattr(model, m)(X) for m in METHODS if hasattr(model, m)}
    if hasattr(model, "summary"):
        out["summary"] = model.summary().to_numpy()
    return out


@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_estimator_round_trips_bit_identically(name, tmp_path):
    X, labels, t = _data(np.random.default_rng(0))
    model = _fit(name, X, labels, t)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    loaded = problin.load(path)
    assert type(loaded) is type(model)
    assert loaded.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    X_new = np.abs(np.random.default_rng(1).normal(size=(7, 3)))
    before, after = _outputs(model, X_new), _outputs(loaded, X_new)
    assert before.keys() == after.keys() and before
    for key in before:
        a, b = np.asarray(before[key]), np.asarray(after[key])
        assert a.dtype == b.dtype and a.shape == b.shape, key
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), key
    if hasattr(model, "classes_"):
        assert loaded.classes_.dtype == model.classes_.dtype == object


def test_multiclass_pandas_pipeline_and_metadata(tmp_path):
    X = pd.DataFrame(np.random.default_rng(2).normal(size=(60, 2)), columns=["a", "b"])
    y = pd.Series(np.repeat(["r", "g", "b"], 20))
    model = make_pipeline(StandardScaler(), problin.LogisticRegression(alpha=1.0)).fit(X, y)
    encoding = {"columns": [{"name": "a", "kind": "numeric"},
                            {"name": "b", "kind": "numeric"}]}
    problin.save(model, tmp_path / "p.problin", encoding=encoding, target="colour")
    bundle = read_model_file(tmp_path / "p.problin")
    assert bundle.feature_names == ["a", "b"] and bundle.classes == ["b", "g", "r"]
    assert bundle.encoding == encoding and bundle.target == "colour"
    assert bundle.problin_version == problin.__version__
    np.testing.assert_array_equal(bundle.model.predict_proba(X), model.predict_proba(X))
    assert list(bundle.model.feature_names_in_) == ["a", "b"]


def test_same_model_gives_the_same_bytes(tmp_path):
    model = problin.GaussianNB().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    problin.save(model, tmp_path / "a")
    problin.save(model, tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_unsupported_values_are_refused_at_save_time(tmp_path):
    model = problin.GaussianNB().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    model.extra_ = lambda: None
    with pytest.raises(TypeError, match="extra_"):
        problin.save(model, tmp_path / "m")
    with pytest.raises(TypeError, match="not a problin estimator"):
        problin.save(object(), tmp_path / "m")
    assert not (tmp_path / "m").exists()


@pytest.fixture
def saved(tmp_path):
    model = problin.LogisticRegression().fit([[0.0], [1.0], [2.0], [3.0], [1.5]], [0, 1, 0, 1, 1])
    path = tmp_path / "m.problin"
    problin.save(model, path)
    return path


def _rewrite(path, edit_meta=None, comment=None, drop=None, replace=None):
    """Copy a model file, editing metadata (keeping its checksum valid unless told)."""
    import hashlib
    src = zipfile.ZipFile(path)
    members = {n: src.read(n) for n in src.namelist() if n != drop}
    if replace:
        members.update(replace)
    if edit_meta:
        meta = json.loads(members["metadata.json"])
        edit_meta(meta)
        members["metadata.json"] = json.dumps(meta).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
        digest = hashlib.sha256(members["metadata.json"]).hexdigest().encode()
        zf.comment = comment if comment is not None else b"problin-model sha256=" + digest
    path.write_bytes(out.getvalue())


@pytest.mark.parametrize("case, message", [
    ("truncated", "not a zip archive"),
    ("foreign_zip", "no metadata.json"),
    ("foreign_format", "not a problin model file"),
    ("future", "newer problin"),
    ("past", "older problin"),
    ("tampered_array", "checksum mismatch for member"),
    ("tampered_meta", "checksum mismatch for metadata.json"),
    ("missing_member", "missing"),
    ("extra_member", "unexpected members"),
    ("unknown_class", "not a known problin estimator"),
    ("not_json", "not valid JSON"),
    ("shadowed_method", "not attributes of LogisticRegression"),
])
def test_bad_files_raise_model_file_error(saved, case, message):
    raw = saved.read_bytes()
    if case == "truncated":
        saved.write_bytes(raw[: len(raw) // 2])
    elif case == "foreign_zip":
        with zipfile.ZipFile(saved, "w") as zf:
            zf.writestr("hello.txt", "hi")
    elif case == "foreign_format":
        _rewrite(saved, lambda m: m.update(format="other"))
    elif case == "future":
        _rewrite(saved, lambda m: m.update(format_version=FORMAT_VERSION + 1))
    elif case == "past":  # state from before the fit records: refused, never half-loaded
        _rewrite(saved, lambda m: m.update(format_version=MIN_FORMAT_VERSION - 1))
    elif case == "tampered_array":
        _rewrite(saved, replace={"arrays/1.npy": zipfile.ZipFile(saved).read("arrays/1.npy")[:-8]
                                 + np.float64(7.0).tobytes()})
    elif case == "tampered_meta":
        _rewrite(saved, lambda m: m["estimator"]["params"].update(alpha=5.0),
                 comment=zipfile.ZipFile(saved).comment)
    elif case == "missing_member":
        _rewrite(saved, drop="arrays/0.npy")
    elif case == "extra_member":
        _rewrite(saved, replace={"evil.pkl": b"cos\nsystem\n"})
    elif case == "unknown_class":
        _rewrite(saved, lambda m: m["estimator"].update({"$estimator": "os.system"}))
    elif case == "not_json":
        _rewrite(saved, replace={"metadata.json": b"{not json"})
    elif case == "shadowed_method":  # re-signed, but `predict` would become data
        _rewrite(saved, lambda m: m["estimator"]["state"].update(predict=1.0))
    with pytest.raises(ModelFileError, match=message):
        problin.load(saved)
    assert issubclass(ModelFileError, ValueError)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        problin.load(tmp_path / "nope.problin")
