"""Fuzzing ``problin.load`` and every reader with random bytes and mutated valid files.

Every case must end in a clear error (``ModelFileError`` / ``DataFileError``, both
``ValueError``) or a correct result, never another exception type or a hang (each batch
runs under a SIGALRM deadline).
"""
import contextlib
import hashlib
import json
import signal
import zipfile

import numpy as np
import pandas as pd
import pytest

import problin
from problin.io import DataFileError, ModelFileError
from problin.io.readers import read_data

SEED = 20261121


@contextlib.contextmanager
def deadline(seconds):
    def expire(signum, frame):
        raise TimeoutError(f"fuzz batch still running after {seconds} s (a hang?)")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def mutate(raw, rng):
    """Flip, overwrite, delete, insert or duplicate bytes, or truncate."""
    data = bytearray(raw)
    for _ in range(int(rng.integers(1, 4))):
        op = rng.integers(6)
        i = int(rng.integers(max(len(data), 1)))
        if op == 0 and data:
            data[i] ^= 1 << int(rng.integers(8))
        elif op == 1 and data:
            data[i] = int(rng.integers(256))
        elif op == 2:
            del data[i:i + int(rng.integers(1, 16))]
        elif op == 3:
            data[i:i] = rng.bytes(int(rng.integers(1, 16)))
        elif op == 4:
            data = data[:i]
        else:
            data[i:i] = data[i:i + int(rng.integers(1, 64))]
    return bytes(data)


def cases(valid, rng, n_random, n_mutated):
    for _ in range(n_random):
        yield rng.bytes(int(rng.integers(0, 600)))
    yield b""
    for _ in range(n_mutated):
        yield mutate(valid, rng)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    model = problin.LogisticRegression(alpha=1.0).fit(X, y)
    path = d / "m.problin"
    problin.save(model, path)
    return path, model, X


def test_fuzz_load_bytes(model_file, tmp_path):
    path, model, X = model_file
    rng = np.random.default_rng(SEED)
    target = tmp_path / "f.problin"
    outcomes = {"error": 0, "loaded": 0}
    with deadline(60):
        for raw in cases(path.read_bytes(), rng, 150, 400):
            target.write_bytes(raw)
            try:
                loaded = problin.load(target)
            except ModelFileError:
                outcomes["error"] += 1
                continue
            outcomes["loaded"] += 1  # an untouched part of the zip changed: same model
            np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert outcomes["error"] > 500


def _fuzz_json(node, rng):
    """Replace a random node of a JSON tree by a random value."""
    junk = [None, True, -1, 2 ** 70, 1e308, "x", "$array", [], {}, {"$array": "nope"},
            {"$estimator": "problin.LogisticRegression"}, {"$dict": 3}, {"$tuple": {}},
            {"$scalar": {"$array": "arrays/0.npy"}}, {"$float": "1"}, {"$record": "os.system"},
            {"$random_state": [1, 2]}, [[[]]], {"$estimator": "problin.GaussianNB",
                                                "params": {"bogus": 1}, "state": {}}]
    if isinstance(node, dict) and node and rng.random() < 0.8:
        key = list(node)[int(rng.integers(len(node)))]
        node[key] = _fuzz_json(node[key], rng)
        return node
    if isinstance(node, list) and node and rng.random() < 0.8:
        i = int(rng.integers(len(node)))
        node[i] = _fuzz_json(node[i], rng)
        return node
    return junk[int(rng.integers(len(junk)))]


def test_fuzz_load_metadata_with_valid_checksums(model_file, tmp_path):
    """Structured mutations of metadata.json, re-signed so that the decoder itself is hit."""
    path, _, _ = model_file
    rng = np.random.default_rng(SEED + 1)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    target = tmp_path / "f.problin"
    with deadline(60):
        for _ in range(300):
            edited = _fuzz_json(json.loads(json.dumps(meta)), rng)
            blob = json.dumps(edited).encode()
            with zipfile.ZipFile(target, "w") as zf:
                for name, data in members.items():
                    zf.writestr(name, blob if name == "metadata.json" else data)
                zf.comment = b"problin-model sha256=" + hashlib.sha256(blob).hexdigest().encode()
            try:
                problin.load(target)
            except ModelFileError:
                pass


def _valid_files(d):
    frame = pd.DataFrame({"x": [1.5, 2.0, -3.0, 4.0], "c": ["u", "v", "u", "w"],
                          "t": [0, 1, 0, 1]})
    frame.to_csv(d / "v.csv", index=False)
    frame.to_parquet(d / "v.parquet")
    (d / "v.svm").write_text("1 1:0.5 3:2\n0 2:1.5\n1 1:1 2:1 3:1\n")
    np.savez(d / "v.npz", X=np.arange(8.0).reshape(4, 2), y=np.array([0, 1, 0, 1]))
    return {"csv": "t", "parquet": "t", "svm": None, "npz": None}


@pytest.mark.parametrize("ext", ["csv", "parquet", "svm", "npz"])
def test_fuzz_readers(tmp_path, ext):
    targets = _valid_files(tmp_path)
    valid = (tmp_path / f"v.{ext}").read_bytes()
    rng = np.random.default_rng(SEED + ["csv", "parquet", "svm", "npz"].index(ext))
    path = tmp_path / f"f.{ext}"
    ok = 0
    with deadline(60):
        for raw in cases(valid, rng, 60, 140):
            path.write_bytes(raw)
            try:
                ds = read_data(path, targets[ext])
            except DataFileError:
                continue
            ok += 1
            X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
            assert X.dtype == np.float64 and np.isfinite(X).all()
            assert X.shape == (len(ds.y) if ds.y is not None else X.shape[0],
                               len(ds.feature_names))
    assert ok < 200  # most random inputs are refused
