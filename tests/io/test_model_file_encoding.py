"""The data encoding a model file stores (applied by ``problin predict`` before the model
sees the data) is checked against the model and an absolute cap when the file is read:
a re-signed encoding of 400,001 categories for a 2-feature model allocated 6 GiB at
predict (issue 31, item 2). ``save`` refuses what ``load`` would."""
import json

import numpy as np
import pandas as pd
import pytest
from tests.cli.conftest import invoke
from tests.io.test_model_file_state import resign

import problin
from problin.io import ModelFileError, read_model_file

RNG = np.random.default_rng(0)
FRAME = pd.DataFrame({"a": RNG.normal(size=40), "g": RNG.choice(["u", "v", "w"], 40)})
FRAME["y"] = (FRAME.a + RNG.normal(size=40) > 0).astype(int)


@pytest.fixture
def fitted(tmp_path, monkeypatch):
    """A model file written by ``problin fit`` (encoding a numeric and a 3-level column)."""
    monkeypatch.chdir(tmp_path)
    FRAME.to_csv("d.csv", index=False)
    result = invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "--alpha", "1",
                    "-o", "m.problin")
    assert result.exit_code == 0, result.output
    return tmp_path / "m.problin"


def _categories(*levels):
    def edit(meta):
        meta["encoding"]["columns"][1]["categories"] = list(levels)
    return edit


def _set(key, value, column=1):
    def edit(meta):
        meta["encoding"]["columns"][column][key] = value
    return edit


def test_the_sound_file_loads_and_predicts(fitted):
    assert read_model_file(fitted).encoding["columns"][1]["categories"] == ["u", "v", "w"]
    result = invoke("predict", "m.problin", "d.csv")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 41


@pytest.mark.parametrize("edit, words", [
    (_categories("u", "v", "w", "x"), "gives 4 features, but the model takes"),
    (_categories("u", "v"), "gives 2 features, but the model takes"),
    (_categories("u", "v", "v"), "not distinct"),
    (_categories("u", 1, "w"), "not distinct pieces of text"),
    (_categories(), "not a non-empty list"),
    (_set("kind", "ordinal"), "of kind 'ordinal'"),
    (_set("name", "a"), "names the column 'a' twice"),
    (lambda meta: meta["encoding"].update(columns="a"), "'columns' is not a non-empty list"),
    (lambda meta: meta.update(feature_names=["a"]), "the file names 1 features"),
    (lambda meta: meta.update(classes=list(range(1000))), "lists 1000 classes, the model has 2"),
])
def test_an_encoding_that_does_not_fit_the_model_is_refused_at_load(fitted, edit, words):
    resign(fitted, edit)
    with pytest.raises(ModelFileError, match="damaged or edited") as info:
        read_model_file(fitted)
    assert words in str(info.value)


def test_the_reported_bomb_is_refused_before_any_allocation(fitted):
    # 400,001 output columns for a model of 3 features: the 0.9 MB file of the issue
    # (6 GiB at predict on 2,000 rows); refused at load, in one line, no traceback.
    resign(fitted, _categories("u", "v", *(f"c{i}" for i in range(400_000))))
    pd.DataFrame({"a": np.zeros(2000), "g": ["u", "v"] * 1000}).to_csv("big.csv", index=False)
    result = invoke("predict", "m.problin", "big.csv")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("Error: m.problin: ") and "400002 features" in result.stderr


def test_libsvm_and_npz_widths_are_checked(tmp_path):
    X = RNG.normal(size=(30, 2))
    model = problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int))
    path = tmp_path / "m.problin"
    problin.save(model, path, encoding={"format": "libsvm", "target": "label",
                                        "zero_based": False, "n_features": 2})
    resign(path, lambda meta: meta["encoding"].update(n_features=10 ** 12))
    with pytest.raises(ModelFileError, match="n_features is '1000000000000'"):
        read_model_file(path)
    problin.save(model, path, encoding={"format": "npz", "target": "y", "n_features": 2,
                                        "feature_names": ["x0", "x1"]})
    resign(path, lambda meta: meta["encoding"].update(n_features=3,
                                                      feature_names=["x0", "x1", "x2"]))
    with pytest.raises(ModelFileError, match="gives 3 features, but the model takes"):
        read_model_file(path)


def test_save_refuses_an_encoding_that_load_would(tmp_path):
    X = RNG.normal(size=(30, 2))
    model = problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int))
    encoding = {"format": "table", "columns": [{"name": "a", "kind": "numeric"}]}
    with pytest.raises(ValueError, match="gives 1 features, but the model takes"):
        problin.save(model, tmp_path / "m.problin", encoding=encoding)
    assert not (tmp_path / "m.problin").exists()
    # other formats are the caller's own metadata: kept as they are
    problin.save(model, tmp_path / "m.problin", encoding={"format": "mine", "any": [1]})
    assert read_model_file(tmp_path / "m.problin").encoding == {"format": "mine", "any": [1]}
    assert json.loads(json.dumps(read_model_file(tmp_path / "m.problin").encoding))


def test_an_estimators_own_encoding_is_checked_before_a_row_is_built(tmp_path):
    # input_encoding_ (a model fitted on a DataFrame with text columns) is state, not
    # metadata: held to the same rules, named, before the one-row probe builds a row of it
    model = problin.LogisticRegression(alpha=1.0).fit(FRAME[["a", "g"]], FRAME.y)
    path = tmp_path / "m.problin"
    problin.save(model, path)

    def edit(meta):
        columns = meta["estimator"]["state"]["input_encoding_"]["$dict"]["columns"]
        columns[1]["$dict"]["categories"] += [f"c{i}" for i in range(1000)]
    resign(path, edit)
    with pytest.raises(ModelFileError, match=r"input_encoding_: the table encoding gives "
                       r"1003 features, but the model takes n_features_in_ = 3"):
        read_model_file(path)
