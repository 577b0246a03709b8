"""The versioned schema of fitted state (format 3, problin.io._schema): what a file holds,
and the upgrades that absorb renamed private state, newer schemas and unknown names."""
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

import problin
from problin.glm.result import GLMFit
from problin.io import ModelFileError
from problin.io import _schema
from problin.io._schema import EstimatorSchema, RecordSchema
from tests.io.test_model_file_state import resign as _resign

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "v2"
_RNG = np.random.default_rng(3)
X = _RNG.normal(size=(30, 2))
Y = np.where(X[:, 0] + _RNG.normal(size=30) > 0, "b", "a").astype(object)


def _meta(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("metadata.json"))


def _keys(node):
    """Every (tag, key) of the estimator and record nodes of a metadata tree."""
    if isinstance(node, list):
        return [k for e in node for k in _keys(e)]
    if not isinstance(node, dict):
        return []
    own = [(t, k) for t in ("state", "internal", "fields") if isinstance(node.get(t), dict)
           for k in node[t]]
    return own + [k for v in node.values() for k in _keys(v)]


def test_a_format_3_file_names_no_private_attribute(tmp_path):
    model = problin.LogisticRegression().fit(X, Y)
    problin.save(model, tmp_path / "m.problin")
    meta = _meta(tmp_path / "m.problin")
    assert meta["format_version"] == 3 and meta["estimator"]["schema"] == 1
    assert meta["estimator"]["internal"].keys() == {"fit"}
    assert meta["estimator"]["internal"]["fit"]["schema"] == 1
    keys = _keys(meta["estimator"])
    assert not [k for t, k in keys if t != "fields" and k.startswith("_")]
    assert ("state", "coef_") in keys and ("fields", "theta") in keys


def _golden_copy(tmp_path, name="logistic_binary"):
    shutil.copy(GOLDEN / f"{name}.problin", tmp_path / "m.problin")
    return tmp_path / "m.problin"


def _same_predictions(model, name="logistic_binary"):
    with np.load(GOLDEN / f"{name}.npz") as npz:
        assert np.array_equal(model.predict_proba(npz["probe"]), npz["predict_proba"])


def test_a_renamed_private_attribute_is_absorbed_by_its_stable_name(tmp_path, monkeypatch):
    """The fit record moved from ``_result`` to ``_fit``: one line of the schema, and both
    the format-2 file and a format-3 one load into the renamed attribute."""
    monkeypatch.setitem(_schema.INTERNAL, "fit", "_fit")  # (INTERNAL is a plain dict)
    monkeypatch.setattr(problin.LogisticRegression, "_result",
                        property(lambda self: self._fit), raising=False)
    loaded = problin.load(_golden_copy(tmp_path))
    assert isinstance(loaded.__dict__["_fit"], GLMFit) and "_result" not in loaded.__dict__
    _same_predictions(loaded)
    problin.save(loaded, tmp_path / "again.problin")  # saved by the new name, as "fit"
    assert "fit" in _meta(tmp_path / "again.problin")["estimator"]["internal"]
    _same_predictions(problin.load(tmp_path / "again.problin"))


def test_the_state_of_an_older_schema_version_goes_through_its_upgrade(tmp_path,
                                                                       monkeypatch):
    calls = []

    def upgrade(stored):  # version 1 -> 2: say, a record now also kept as an attribute
        calls.append(sorted(stored.internal))
        stored.attributes["upgraded_"] = True
        return stored

    monkeypatch.setitem(_schema._ESTIMATORS, "problin.LogisticRegression",
                        EstimatorSchema(version=2, upgrades={1: upgrade}))
    loaded = problin.load(_golden_copy(tmp_path))  # format 2 -> 3 -> kind version 2
    assert calls == [["fit"]] and loaded.upgraded_ is True
    _same_predictions(loaded)
    del loaded.upgraded_
    problin.save(loaded, tmp_path / "v2.problin")
    assert _meta(tmp_path / "v2.problin")["estimator"]["schema"] == 2
    problin.load(tmp_path / "v2.problin")
    assert len(calls) == 1  # today's version: no upgrade
    monkeypatch.setitem(_schema._ESTIMATORS, "problin.LogisticRegression", EstimatorSchema())
    with pytest.raises(ModelFileError, match=r"LogisticRegression: its state was written with "
                       r"schema version 2 by a newer problin; this problin reads versions up "
                       r"to 1: upgrade problin"):
        problin.load(tmp_path / "v2.problin")


def test_a_record_field_rename_and_upgrade(monkeypatch, tmp_path):
    schema = RecordSchema(version=2, renamed={"weights": "theta"},
                          upgrades={1: lambda f: {("weights" if k == "w" else k): v
                                                  for k, v in f.items()}})
    assert schema.to_file({"theta": 1, "n_iter": 2}) == {"weights": 1, "n_iter": 2}
    assert schema.from_file(1, {"w": 1, "n_iter": 2}) == {"theta": 1, "n_iter": 2}
    assert schema.from_file(2, {"weights": 1}) == {"theta": 1}
    # the format-2 GLMFit (fields verbatim: version 1) through the same chain
    monkeypatch.setitem(_schema._RECORDS, "problin.GLMFit", RecordSchema(
        version=2, upgrades={1: lambda f: {**f, "theta": f["theta"]}}))
    _same_predictions(problin.load(_golden_copy(tmp_path)))


def test_derived_state_is_not_stored_and_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setitem(_schema._ESTIMATORS, "problin.LogisticRegression", EstimatorSchema(
        derived={"_n_classes": lambda est: est.classes_.size}))
    model = problin.LogisticRegression().fit(X, Y)
    model._n_classes = 2
    problin.save(model, tmp_path / "m.problin")
    assert "_n_classes" not in json.dumps(_meta(tmp_path / "m.problin"))
    assert problin.load(tmp_path / "m.problin")._n_classes == 2


def test_undeclared_private_state_is_refused_at_save(tmp_path):
    model = problin.GaussianNB().fit(X, Y)
    model._cache = np.zeros(2)
    with pytest.raises(TypeError, match=r"cannot save model\._cache: private state that the "
                       r"model-file schema does not declare \(problin/io/_schema\.py"):
        problin.save(model, tmp_path / "m.problin")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: m["estimator"]["state"].update(_evil=1),
     r"model\._evil: private state that no format-2 problin wrote"),
    (lambda m: m["estimator"]["state"]["_result"].update({"$record": "os.system"}),
     r"model\._result: unknown record type 'os.system'"),
], ids=["unknown private name", "unknown record"])
def test_a_format_2_file_is_held_to_what_format_2_wrote(tmp_path, edit, message):
    path = _golden_copy(tmp_path)
    _resign(path, edit)
    with pytest.raises(ModelFileError, match=message):
        problin.load(path)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda e: e.pop("schema"), r"model: LogisticRegression: bad or missing schema version"),
    (lambda e: e.update(schema=True), r"bad or missing schema version True"),
    (lambda e: e["internal"].update(evil=1),
     r"internal state 'evil' is not part of LogisticRegression's schema"),
    (lambda e: e["state"].update(_result=1), r"fitted state names \['_result'\] are not"),
    (lambda e: e["internal"]["fit"].update(schema=9),
     r"model\._result: GLMFit: its state was written with schema version 9 by a newer"),
], ids=["no version", "bool version", "unknown internal", "private in state", "newer record"])
def test_a_format_3_file_is_held_to_its_schema(tmp_path, edit, message):
    problin.save(problin.LogisticRegression().fit(X, Y), tmp_path / "m.problin")
    _resign(tmp_path / "m.problin", lambda m: edit(m["estimator"]))
    with pytest.raises(ModelFileError, match=message):
        problin.load(tmp_path / "m.problin")
