"""Safe, versioned model files: ``problin.save(model, path)`` and ``problin.load(path)``.

A model file is a zip archive holding

- ``metadata.json``: the format name and version, the problin version, the estimator as a
  tree of JSON values (class name from a whitelist, ``get_params()``, public fitted
  attributes, and private state under the stable, versioned names of :mod:`._schema`,
  which also upgrades files of earlier versions),
  feature names, classes, the data encoding used to build the features, and the SHA-256
  and size of every array member;
- one ``.npy`` file per array, read back with ``np.load(..., allow_pickle=False)``.

The zip comment holds the SHA-256 of ``metadata.json``. Loading executes no code from the
file: no pickle, no eval; classes are looked up by name in a fixed registry of problin's
estimators (plus scikit-learn's ``Pipeline``, ``StandardScaler`` and ``MinMaxScaler``) and of
problin's internal state records. A file that is not a zip, not ours, truncated, tampered with
(checksum mismatch) or written by a newer format version raises :class:`ModelFileError`.
The checksum is an integrity check, not a signature (anyone can re-sign an edited file), so
the decoded state is also checked: values against the types their classes declare
(:mod:`problin.io._types`), and the estimator by predicting one row
(:mod:`problin.io._self_check`); state that does not make a working model is a
:class:`ModelFileError` too, never an ``AttributeError`` at predict time.

Reading is bounded whatever the file declares (see :mod:`problin.io._archive`): at most
``MAX_MEMBERS`` members, arrays of at most ``MAX_MODEL_BYTES`` in all (1 GiB: a 10,000 x
10,000 covariance matrix takes 800 MB) and metadata of at most 64 MiB, by the sizes in the
archive's directory before anything is inflated, and by a running count while inflating.
:func:`save` refuses what :func:`load` would.
"""
import hashlib
import io
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from .._version import __version__
from ._archive import check_npy, open_archive, read_member
from ._codec import Decoder, Encoder, name_of
from ._encodings import encoding_problem
from ._schema import upgrade_format
from ._self_check import check_model_works
from ._write import destination, write_atomically
from .errors import ModelFileError

__all__ = ["save", "load", "read_model_file", "ModelFile", "ModelFileError",
           "FORMAT", "FORMAT_VERSION", "MIN_FORMAT_VERSION", "MAX_MODEL_BYTES", "MAX_MEMBERS"]

FORMAT = "problin-model"
# 3: the versioned schema of fitted state (:mod:`._schema`): public attributes by their
# names, private state under stable names, a schema version per estimator and record
# kind; format-2 files (private state verbatim) are read through the upgrade 2 -> 3.
FORMAT_VERSION = 3
# Files of earlier format versions hold estimator state this version no longer
# has (version 1: least-squares moments without R factors, GLM fits before the
# GLMFit record): refused with a clear message instead of failing at predict.
MIN_FORMAT_VERSION = 2
_METADATA = "metadata.json"
_COMMENT_PREFIX = b"problin-model sha256="
_MAX_METADATA_BYTES = 64 * 2 ** 20
MAX_MODEL_BYTES = 2 ** 30  # all array members together, uncompressed
MAX_MEMBERS = 10_000
_DATE = (2020, 1, 1, 0, 0, 0)  # fixed member dates: the same model gives the same bytes
# Everything the zip and npy layers can raise on damaged input.
_LOW_LEVEL_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
                     RuntimeError, ValueError, struct.error, UnicodeDecodeError, KeyError,
                     IndexError, OverflowError, TypeError, MemoryError)


@dataclass
class ModelFile:
    """A loaded model file: the estimator and the metadata stored with it.

    Attributes
    ----------
    model : estimator
        The fitted estimator, ready to predict.
    feature_names : list of str or None
        Names of the features the model was fitted on.
    classes : list or None
        Class labels of a classifier.
    encoding : dict or None
        How raw data columns were turned into features (see :mod:`problin.io.readers`).
    target : str or None
        Name of the target column at fit time.
    problin_version : str
        The problin version that wrote the file.
    extra : dict
        Any other JSON metadata given to :func:`save`.
    """

    model: object
    feature_names: list[Any] | None = None
    classes: list[Any] | None = None
    encoding: dict[str, Any] | None = None
    target: str | None = None
    problin_version: str = ""
    extra: dict = field(default_factory=dict)


def _jsonable(v: Any) -> list[Any] | None:
    """Plain JSON values of labels or names (numpy scalars and arrays to Python)."""
    if v is None:
        return None
    out = np.asarray(v)
    return [x if isinstance(x, (str, bool, int, float)) else str(x) for x in out.tolist()]


def save(model: Any, path: str | os.PathLike[str], *, feature_names: Sequence[str] | None = None,
         encoding: dict[str, Any] | None = None, target: str | None = None,
         extra: dict[str, Any] | None = None) -> None:
    """Write a fitted problin estimator to a safe model file.

    Parameters
    ----------
    model : estimator
        A problin estimator, or a scikit-learn ``Pipeline`` of problin estimators and
        ``StandardScaler``/``MinMaxScaler``.
    path : str or path-like
        Destination (conventionally ``*.problin``): a regular file, replaced atomically
        (written beside it, then renamed over it) keeping its mode, or created with the
        umask's mode; a symlink's target is written (:mod:`problin.io._write`).
    feature_names : list of str, optional
        Defaults to the model's ``feature_names_in_`` when it has them.
    encoding : dict, optional
        The data encoding of :mod:`problin.io.readers` (applied again at predict time).
    target : str, optional
        Name of the target column.
    extra : dict, optional
        Further JSON-serialisable metadata.

    Raises
    ------
    TypeError
        If the model (or one of its attributes) cannot be stored safely.
    ValueError
        If its arrays are larger than a model file may hold (``MAX_MODEL_BYTES``), if the
        encoding does not fit the model (:mod:`problin.io._encodings`), or if ``path`` is
        a directory, device, FIFO or socket (refused before anything is written).
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> import problin
    >>> model = problin.LogisticRegression().fit([[0.], [1.], [2.], [3.]], [0, 1, 0, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.problin")
    >>> problin.save(model, path)
    >>> problin.load(path).predict([[1.5]]).tolist() == model.predict([[1.5]]).tolist()
    True
    """
    destination(path)  # a path that cannot be written: refused before the work
    enc = Encoder()
    if name_of(model, enc.estimators) is None:
        raise TypeError(f"cannot save a {type(model).__name__}: not a problin estimator "
                        "(or a scikit-learn Pipeline of them)")
    tree = enc.value(model, "model")
    total = sum(len(data) for data in enc.arrays.values())
    if total > MAX_MODEL_BYTES or len(enc.arrays) >= MAX_MEMBERS:
        raise ValueError(f"cannot save the model: its {len(enc.arrays)} arrays take {total} "
                         f"bytes, larger than a model file holds ({MAX_MODEL_BYTES} bytes "
                         f"in at most {MAX_MEMBERS - 1} arrays)")
    est = model[-1] if hasattr(model, "steps") else model
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    problem = encoding_problem(encoding, _width(model), _jsonable(feature_names))
    if problem:
        raise ValueError(f"cannot save the model with this encoding: {problem}")
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "problin_version": __version__,
            "estimator": tree, "feature_names": _jsonable(feature_names),
            "classes": _jsonable(getattr(est, "classes_", None)),
            "encoding": encoding, "target": target, "extra": dict(extra or {}),
            "arrays": {name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                       for name, data in enc.arrays.items()}}
    meta_bytes = json.dumps(meta, indent=1, allow_nan=False).encode("utf-8")

    def write(fh: IO[bytes]) -> None:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in [(_METADATA, meta_bytes), *enc.arrays.items()]:
                zf.writestr(zipfile.ZipInfo(name, _DATE), data, zipfile.ZIP_DEFLATED)
            zf.comment = _COMMENT_PREFIX + hashlib.sha256(meta_bytes).hexdigest().encode()

    write_atomically(path, write)


def load(path: str | os.PathLike[str]) -> Any:
    """Read a model file written by :func:`save`; returns the fitted estimator.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        (a ``ValueError``) if the file is not a problin model file, is truncated or
        tampered with, was written by a newer format version, or holds fitted state that
        does not make a working model (of the wrong type, or failing to predict one row:
        :mod:`problin.io._self_check`).
    """
    return read_model_file(path).model


def read_model_file(path: str | os.PathLike[str]) -> ModelFile:
    """Read a model file with its metadata; returns a :class:`ModelFile`."""
    path = os.fspath(path)
    with open(path, "rb") as fh:  # FileNotFoundError and the like as they are
        try:
            meta, members = _read_archive(fh, path)
            decoder = Decoder(members, path)
            tree = upgrade_format(meta["estimator"], meta["format_version"], FORMAT_VERSION,
                                  decoder.fail)
            model = decoder.value(tree, "model")
        except ModelFileError:
            raise
        except _LOW_LEVEL_ERRORS as exc:
            raise ModelFileError(f"{path}: damaged model file ({type(exc).__name__}: "
                                 f"{exc})") from exc
    if not decoder.is_estimator(model):
        raise ModelFileError(f"{path}: the stored object is not an estimator")
    # The checksum is no signature: a re-signed file may hold state of the right classes
    # that still does not predict. Refused here, not as an AttributeError at predict.
    check_model_works(model, path, sum(a.size for a in decoder.members.values()),
                      decoder.is_estimator)
    # What predict applies before the model sees the data: its sizes are the model's.
    feature_names, encoding = _opt_list(meta, "feature_names", path), \
        _opt(meta, "encoding", dict, path)
    problem = encoding_problem(encoding, _width(model), feature_names)
    classes = _opt_list(meta, "classes", path)
    fitted = _classes(model)
    if not problem and classes is not None and fitted is not None and len(classes) != fitted:
        problem = f"the file lists {len(classes)} classes, the model has {fitted}"
    if problem:
        raise ModelFileError(f"{path}: {problem} (damaged or edited file)")
    return ModelFile(model=model, feature_names=feature_names, classes=classes,
                     encoding=encoding,
                     target=_opt(meta, "target", str, path),
                     problin_version=str(meta.get("problin_version", "")),
                     extra=_opt(meta, "extra", dict, path) or {})


def _width(model: Any) -> Any:
    """The model's ``n_features_in_`` (a Pipeline's: its first step's), None if unfitted."""
    try:
        return model.n_features_in_
    except AttributeError:
        return None


def _classes(model: Any) -> int | None:
    """How many classes the (final) estimator has, as :func:`save` lists them; None if it
    has none (a regressor, an unfitted model)."""
    est = model[-1] if hasattr(model, "steps") else model
    classes = getattr(est, "classes_", None)
    return len(classes) if isinstance(classes, np.ndarray) else None


def _opt(meta: dict[str, Any], key: str, kind: type, path: Any) -> Any:
    v = meta.get(key)
    if v is not None and not isinstance(v, kind):
        raise ModelFileError(f"{path}: metadata field {key!r} is not a {kind.__name__}")
    return v


def _opt_list(meta: dict[str, Any], key: str, path: Any) -> list[Any] | None:
    return _opt(meta, key, list, path)


def _read_archive(fh: IO[bytes], path: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    zf = open_archive(fh, path, MAX_MEMBERS)
    names = zf.namelist()
    if len(set(names)) != len(names):
        raise ModelFileError(f"{path}: the archive holds members of the same name (tampered "
                             "file)")
    if _METADATA not in names:
        raise ModelFileError(f"{path}: not a problin model file (no {_METADATA} inside)")
    info = zf.getinfo(_METADATA)
    if info.file_size > _MAX_METADATA_BYTES:
        raise ModelFileError(f"{path}: {_METADATA} is implausibly large ({info.file_size} bytes)")
    meta_bytes = read_member(fh, info, path)
    try:
        meta = json.loads(meta_bytes.decode("utf-8"))
    except ValueError as exc:
        raise ModelFileError(f"{path}: {_METADATA} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a problin model file (format is not {FORMAT!r})")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(f"{path}: invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: written by a newer problin ({meta.get('problin_version', '?')}, format "
            f"version {version}); this problin reads format version {FORMAT_VERSION} and "
            "older: upgrade problin to load it")
    if version < MIN_FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: written by an older problin ({meta.get('problin_version', '?')}, format "
            f"version {version}) whose fitted state this problin cannot read (it reads format "
            f"versions {MIN_FORMAT_VERSION} to {FORMAT_VERSION}): refit the model and save it "
            "again")
    expected = _COMMENT_PREFIX + hashlib.sha256(meta_bytes).hexdigest().encode()
    if zf.comment != expected:
        raise ModelFileError(f"{path}: checksum mismatch for {_METADATA}: the file was "
                             "modified after it was written")
    table = meta.get("arrays")
    if not isinstance(table, dict) or "estimator" not in meta:
        raise ModelFileError(f"{path}: metadata lacks the 'arrays' table or the estimator")
    extra_members = sorted(set(names) - set(table) - {_METADATA})
    if extra_members:
        raise ModelFileError(f"{path}: unexpected members {extra_members[:5]} (tampered file)")
    declared = 0
    for name, entry in table.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and isinstance(entry.get("bytes"), int)):
            raise ModelFileError(f"{path}: bad checksum entry for {name!r}")
        if name not in names:
            raise ModelFileError(f"{path}: member {name!r} is missing (truncated file)")
        if zf.getinfo(name).file_size != entry["bytes"]:
            raise ModelFileError(f"{path}: member {name!r} has the wrong size (tampered file)")
        # Before anything is inflated: the directory's sizes (which the metadata matches)
        # against the cap. Inflating then stops at each declared size (read_member).
        declared += entry["bytes"]
        if declared > MAX_MODEL_BYTES:
            raise ModelFileError(f"{path}: member {name!r} declares {entry['bytes']} bytes, "
                                 f"bringing the arrays to {declared} bytes: larger than a "
                                 f"model file holds ({MAX_MODEL_BYTES} bytes; tampered file?)")
    members = {}
    for name, entry in table.items():
        data = read_member(fh, zf.getinfo(name), path)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise ModelFileError(f"{path}: checksum mismatch for member {name!r}: the file was "
                                 "modified after it was written")
        check_npy(data, name, path)
        members[name] = np.load(io.BytesIO(data), allow_pickle=False)
        del data
    return meta, members
