"""Model files saved by earlier problin versions load and predict bit-identically today.

``tests/golden/<dir>/`` holds files written by ``tests/golden/make_golden.py`` with the code
of the time (``v2``: format 2, before the engine redesign of issue 32, whose private state
was saved verbatim; ``v3``: format 3, the versioned schema of public fitted state), and
what each model gave on fixed probe rows at save time. Each file is read by today's code
(through the schema's upgrade steps) and must give exactly the same arrays: same dtypes,
``np.array_equal``, not ``allclose``: a saved model is its numbers, and a rounding change
is a change a user would see.
"""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import problin

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
_spec = importlib.util.spec_from_file_location("_make_golden", GOLDEN / "make_golden.py")
assert _spec is not None and _spec.loader is not None
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)

CASES = [(d.name, name, entry) for d in sorted(GOLDEN.glob("v*")) if d.is_dir()
         for name, entry in json.loads((d / "manifest.json").read_text())["models"].items()]


@pytest.mark.parametrize("folder", sorted(d for d in GOLDEN.glob("v*") if d.is_dir()),
                         ids=lambda d: d.name)
def test_each_golden_set_covers_every_estimator_of_its_time(folder):
    """Every public estimator class of the problin that wrote a set has a file in it (as a
    model, or inside a Pipeline); and it is still public today."""
    manifest = json.loads((folder / "manifest.json").read_text())
    classes = {e["class"] for e in manifest["models"].values()}
    names = set(manifest["models"])
    assert set(manifest["public"]) - classes <= {"StandardScaler", "MinMaxScaler"}
    assert set(manifest["public"]) <= set(make_golden.public_estimators(problin))
    assert {"logistic_softmax", "bayes_logistic_mcmc", "formula_logistic_spline",
            "pipeline_scaler_logistic", "dask_logistic_binary"} <= names


def _probe(npz):
    if "probe" in npz:
        return npz["probe"]
    return make_golden.probe_frame(npz)


@pytest.mark.parametrize(("version", "name", "entry"), CASES,
                         ids=[f"{v}-{n}" for v, n, _ in CASES])
def test_golden_file_loads_and_predicts_bit_identically(version, name, entry):
    folder = GOLDEN / version
    model = problin.load(folder / f"{name}.problin")
    assert type(model).__name__ == entry["class"]
    with np.load(folder / f"{name}.npz", allow_pickle=False) as npz:
        probe = _probe(npz)
        expected = {k: npz[k] for k in npz.files if k != "probe" and not k.startswith("frame")}
    got = make_golden.outputs(model, probe)
    assert set(expected) <= set(got), sorted(set(expected) - set(got))
    for key, want in expected.items():
        have = got[key]
        assert have.dtype == want.dtype and have.shape == want.shape, key
        assert np.array_equal(have, want, equal_nan=want.dtype.kind == "f"), key
    for method, dtype in entry["dtypes"].items():  # labels keep their dtype (object)
        assert str(np.asarray(getattr(model, method)(probe)).dtype) == dtype, method
    assert isinstance(probe, (np.ndarray, pd.DataFrame))
