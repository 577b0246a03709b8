"""Encoding estimators as a JSON tree plus ``.npy`` arrays, and decoding them again.

Values: None, bool, int, str and finite floats as themselves; non-finite floats as
``{"$float": "nan"}``; arrays (object arrays of strings as unicode, flagged) and numpy scalars
as references to ``.npy`` members; tuples, dicts and ``RandomState`` tagged; estimators as
``{"$estimator": name, "schema": version, "params": ..., "state": ..., "internal": ...}``,
a GLM's distribution or family object as ``{"$family": {"name": ..., parameters, "link": ...}}``,
an ordinal fit's family as ``{"$cumulative_link": {"link": ..., "n_classes": ...}}``
and problin's internal dataclasses as ``{"$record": name, "schema": version, "fields":
...}``, with every name looked up in a fixed whitelist. Private state and record fields
are stored under the stable names of :mod:`._schema`, never as the attributes are called
today, and read back through its upgrades.
"""
import dataclasses
import io
import math
from typing import Any, NoReturn

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from .. import bayesian, decision, discriminant, glm, linear_model, naive_bayes
from .._core.moments.class_stats import ClassStats
from .._dask.chunks import is_dask
from .._core.moments.least_squares import Moments
from .._core.model.basis import ColumnBasis
from .._core.model.distributions import Distribution
from .._core.model.family_ordinal import CumulativeLink
from .._core.solvers.stochastic import StochasticState
from .._core.model.exponential_family import (ExponentialFamily, family_from_params,
                                              family_to_params)
from ..bayesian._ordinal_fit import OrdinalPosteriorFit
from ..bayesian.result import PosteriorFit
from ..discriminant._gaussian import GaussianModel
from ..formula import INTERCEPT, Formula
from ..glm._ordinal_fit import OrdinalFit
from ..glm.result import GLMFit
from ..linear_model._inference import OLSFit
from ._formula_state import check_formula_is_data, spec_from_data, spec_to_data
from ._schema import Stored, estimator_schema, record_schema
from ._types import declared_types, mismatch
from .errors import ModelFileError

__all__ = ["Encoder", "Decoder", "registries", "name_of"]

# The packages whose public estimators a model file may name.
_ESTIMATOR_MODULES = (bayesian, decision, discriminant, glm, linear_model, naive_bayes)


def registries() -> tuple[dict[str, type[Any]], dict[str, type[Any]]]:
    """Whitelists: estimator classes and internal state records, by stored name."""
    estimators = {f"problin.{name}": cls for module in _ESTIMATOR_MODULES
                  for name in module.__all__
                  if isinstance(cls := getattr(module, name), type)
                  and issubclass(cls, BaseEstimator)}
    estimators["problin.Formula"] = Formula
    for cls in (Pipeline, StandardScaler, MinMaxScaler):
        estimators[f"sklearn.{cls.__name__}"] = cls
    # problin's internal state records (dataclasses held by fitted estimators): a new one
    # must be listed here to be saved; ``save`` names the attribute it cannot store. The
    # names are the files' (stable, see ._schema): a class renamed keeps its name here.
    records: dict[str, type[Any]] = {
        "problin.ClassStats": ClassStats, "problin.GaussianModel": GaussianModel,
        "problin.Moments": Moments, "problin.GLMFit": GLMFit,
        "problin.PosteriorFit": PosteriorFit, "problin.OLSFit": OLSFit,
        "problin.OrdinalFit": OrdinalFit, "problin.ColumnBasis": ColumnBasis,
        "problin.StochasticState": StochasticState,
        "problin.OrdinalPosteriorFit": OrdinalPosteriorFit}
    return estimators, records


def name_of(obj: object, registry: dict[str, type]) -> str | None:
    for name, cls in registry.items():
        if type(obj) is cls:
            return name
    return None


class Encoder:
    """Turns an estimator into a JSON tree plus a dict of ``.npy`` members."""

    def __init__(self) -> None:
        self.estimators, self.records = registries()
        self.arrays: dict[str, bytes] = {}
        # id -> (array, reference): a fitted attribute that is also a field of the
        # estimator's fit record (GLMFit, PosteriorFit) is written once
        self.written: dict[int, tuple[Any, dict[str, Any]]] = {}

    def array(self, a: np.ndarray) -> dict[str, Any]:
        if id(a) in self.written:
            return dict(self.written[id(a)][1])
        ref = self._array(a)
        self.written[id(a)] = (a, ref)
        return ref

    def dask_array(self, v: Any, where: str) -> dict[str, Any]:
        """A Dask array computed and written as the array it holds (the file holds what an
        in-memory fit's would); the same collection, a fitted attribute and a field of
        the fit record, is computed once."""
        if id(v) not in self.written:
            computed = np.asarray(v.compute())
            if computed.dtype == object:
                raise TypeError(f"cannot save {where}: a Dask array of Python objects")
            self.written[id(v)] = (v, self._array(computed))
        return dict(self.written[id(v)][1])

    def _array(self, a: np.ndarray) -> dict[str, Any]:
        obj = a.dtype == object
        if obj:
            if not all(isinstance(v, str) for v in a.flat):
                raise TypeError("cannot save an object array whose items are not all strings")
            a = a.astype(str) if a.size else a.astype("<U1")
        if a.dtype.hasobject or a.dtype.kind == "V":
            raise TypeError(f"cannot save an array of dtype {a.dtype}")
        buf = io.BytesIO()
        np.save(buf, a if a.flags.c_contiguous else a.copy(order="C"), allow_pickle=False)
        name = f"arrays/{len(self.arrays)}.npy"
        self.arrays[name] = buf.getvalue()
        return {"$array": name, "object": bool(obj)}

    def value(self, v: Any, where: str) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int) and not isinstance(v, np.integer):
            return v
        if isinstance(v, float) and not isinstance(v, np.floating):
            return v if math.isfinite(v) else {"$float": repr(v)}
        if isinstance(v, np.generic):
            return {"$scalar": self.array(np.asarray(v))}
        if isinstance(v, np.ndarray):
            return self.array(v)
        if is_dask(v):  # (a Dask fit's lazy per-row diagnostic, separated_: computed once)
            return self.dask_array(v, where)
        if isinstance(v, list):
            return [self.value(e, f"{where}[{i}]") for i, e in enumerate(v)]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return {"$tuple": [self.value(e, f"{where}[{i}]") for i, e in enumerate(v)]}
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise TypeError(f"cannot save {where}: a dict with non-string keys")
            return {"$dict": {k: self.value(e, f"{where}[{k!r}]") for k, e in v.items()}}
        if isinstance(v, np.random.RandomState):
            return {"$random_state": self.value(v.get_state(), where)}
        if isinstance(v, (Distribution, ExponentialFamily)):  # GLM(family=...): as data
            try:
                return {"$family": family_to_params(v)}
            except TypeError as exc:
                raise TypeError(f"cannot save {where}: {exc}") from None
        if isinstance(v, CumulativeLink):  # an ordinal fit's family: its link and classes
            return {"$cumulative_link": {"link": v.link, "n_classes": v.n_classes}}
        name = name_of(v, self.estimators)
        if name is not None:
            return self.estimator(v, name, where)
        name = name_of(v, self.records)
        if name is not None:
            schema = record_schema(name)
            return {"$record": name, "schema": schema.version,
                    "fields": self.value(schema.to_file(vars(v)), where)["$dict"]}
        raise TypeError(f"cannot save {where}: values of type {type(v).__module__}."
                        f"{type(v).__qualname__} are not supported by problin model files")

    def estimator(self, est: Any, name: str, where: str) -> dict[str, Any]:
        params = est.get_params(deep=False)
        schema = estimator_schema(name)
        state, internal = schema.split(
            {k: v for k, v in vars(est).items() if k not in params}, where)
        if isinstance(est, Formula) and "model_spec_" in state:
            # formulaic's spec as plain data: the formula, levels and transform state
            state["model_spec_"] = spec_to_data(state["model_spec_"])
        return {"$estimator": name, "schema": schema.version,
                "params": {k: self.value(v, f"{where}.{k}") for k, v in params.items()},
                "state": {k: self.value(v, f"{where}.{k}") for k, v in state.items()},
                "internal": {k: self.value(v, f"{where}.{schema.attribute(k)}")
                             for k, v in internal.items()}}


class Decoder:
    """Rebuilds objects from the JSON tree, with every class taken from the whitelists."""

    def __init__(self, members: dict[str, np.ndarray], path: Any) -> None:
        self.members, self.path = members, path
        self.estimators, self.records = registries()

    def fail(self, where: str, what: str) -> NoReturn:
        raise ModelFileError(f"{self.path}: {where}: {what}")

    def is_estimator(self, obj: object) -> bool:
        return any(type(obj) is cls for cls in self.estimators.values())

    def array(self, node: Any, where: str) -> np.ndarray:
        name = node.get("$array")
        if name not in self.members or not isinstance(node.get("object", False), bool):
            self.fail(where, f"reference to unknown array {name!r}")
        a = self.members[name].copy()
        if node.get("object"):
            if a.dtype.kind != "U":
                self.fail(where, "object array not stored as strings")
            a = a.astype(object)
        return a

    def value(self, node: Any, where: str) -> Any:
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return [self.value(e, f"{where}[{i}]") for i, e in enumerate(node)]
        if not isinstance(node, dict) or len(node) == 0:
            self.fail(where, "malformed value")
        if "$array" in node:
            return self.array(node, where)
        if "$scalar" in node:
            a = self.array(node["$scalar"] if isinstance(node["$scalar"], dict) else {}, where)
            if a.ndim != 0:
                self.fail(where, "scalar stored with a shape")
            return a[()]
        if "$float" in node:
            if node["$float"] not in ("nan", "inf", "-inf"):
                self.fail(where, f"bad float {node['$float']!r}")
            return float(node["$float"])
        if "$tuple" in node:
            return tuple(self.value(self.check(node["$tuple"], list, where), where))
        if "$dict" in node:
            d = self.check(node["$dict"], dict, where)
            return {k: self.value(e, f"{where}[{k!r}]") for k, e in d.items()}
        if "$random_state" in node:
            rs = np.random.RandomState()
            try:
                rs.set_state(self.value(node["$random_state"], where))
            except (TypeError, ValueError, IndexError) as exc:
                self.fail(where, f"bad random state ({exc})")
            return rs
        if "$cumulative_link" in node:
            spec = self.check(node["$cumulative_link"], dict, where)
            link, n_classes = spec.get("link"), spec.get("n_classes")
            if not isinstance(link, str) or not isinstance(n_classes, int) or n_classes < 2:
                self.fail(where, f"bad cumulative-link family {spec!r}")
            try:
                return CumulativeLink(link, n_classes)
            except ValueError as exc:
                self.fail(where, f"bad cumulative-link family ({exc})")
        if "$family" in node:
            try:
                return family_from_params(self.check(node["$family"], dict, where))
            except ValueError as exc:
                self.fail(where, f"bad family ({exc})")
        if "$record" in node:
            return self.record(node, where)
        if "$estimator" in node:
            return self.estimator(node, where)
        self.fail(where, f"unknown value tag {sorted(node)[:3]}")

    def version(self, node: dict[str, Any], current: int, what: str, where: str) -> int:
        """The schema version a node was written with (1 to ``current``)."""
        v = node.get("schema")
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            self.fail(where, f"{what}: bad or missing schema version {v!r}")
        if v > current:
            self.fail(where, f"{what}: its state was written with schema version {v} by a "
                      f"newer problin; this problin reads versions up to {current}: upgrade "
                      "problin to load it")
        return v

    def record(self, node: dict[str, Any], where: str) -> Any:
        cls: Any = self.records.get(node["$record"]) or self.fail(
            where, f"unknown record type {node['$record']!r}")
        schema = record_schema(node["$record"])
        version = self.version(node, schema.version, cls.__name__, where)
        stored = self.check(node.get("fields"), dict, where)
        renamed = {k: schema.renamed.get(k, k) for k in stored}
        values = {k: self.value(e, f"{where}.{renamed[k]}") for k, e in stored.items()}
        try:  # (stable names of the file's version -> today's fields)
            fields = schema.from_file(version, values)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            self.fail(where, f"{cls.__name__} state of schema version {version} does not "
                      f"upgrade ({type(exc).__name__}: {exc})")
        obj = cls.__new__(cls)
        declared = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
        allowed = {f.name for f in declared}
        if any(k not in allowed and (not k.isidentifier() or hasattr(cls, k))
               for k in fields):
            self.fail(where, f"bad field names for {cls.__name__}")
        # A record's methods read every field: a missing one would be an AttributeError
        # at predict time, a field of the wrong type one deeper inside. (A field with a
        # default may be absent: the class supplies it, as for files written before
        # the field was added.)
        missing = sorted(f.name for f in declared if f.name not in fields
                         and f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING)
        if missing:
            self.fail(where, f"{cls.__name__} lacks the fields {missing[:5]}")
        self.check_types(cls, fields, where)
        # Records hold numbers (labels and names live on the estimator): an array of
        # text or complex numbers would fail, or silently go complex, inside a kernel.
        for k, v in fields.items():
            if isinstance(v, np.ndarray) and v.dtype.kind not in "biuf":
                self.fail(f"{where}.{k}", f"expected an array of numbers, found {_kind(v)}")
        obj.__dict__.update(fields)
        return obj

    def check(self, v: Any, kind: type, where: str) -> Any:
        if not isinstance(v, kind):
            self.fail(where, f"expected a {kind.__name__}")
        return v

    def check_types(self, cls: type, values: dict[str, Any], where: str) -> None:
        """Each value of the types ``cls`` declares for it (:mod:`._types`)."""
        hints = declared_types(cls)
        for k, v in values.items():
            expected = mismatch(v, hints[k]) if k in hints else None
            if expected is not None:
                self.fail(f"{where}.{k}", f"expected {expected} ({cls.__name__} declares it), "
                          f"found {_kind(v)}")

    def estimator(self, node: Any, where: str) -> Any:
        name = node["$estimator"]
        cls = self.estimators.get(name) if isinstance(name, str) else None
        if cls is None:
            self.fail(where, f"class {name!r} is not a known problin estimator")
        schema = estimator_schema(name)
        version = self.version(node, schema.version, cls.__name__, where)
        params = {k: self.value(v, f"{where}.{k}")
                  for k, v in self.check(node.get("params"), dict, where).items()}
        attributes = {k: self.value(v, f"{where}.{k}")
                      for k, v in self.check(node.get("state"), dict, where).items()}
        internal = {k: self.value(v, f"{where}.{schema.attribute(k) or k}")
                    for k, v in self.check(node.get("internal"), dict, where).items()}
        try:  # the file's version of this kind's state -> today's
            stored = schema.upgrade(version, Stored(params, attributes, internal))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            self.fail(where, f"{cls.__name__} state of schema version {version} does not "
                      f"upgrade ({type(exc).__name__}: {exc})")
        try:
            est = cls(**stored.params)
        except TypeError as exc:
            self.fail(where, f"parameters do not match {cls.__name__} ({exc})")
        state = stored.attributes
        if set(state) & set(stored.params):
            self.fail(where, "fitted state overlaps the parameters")
        # Data only: a name must not shadow a method or property of the class
        # (a re-signed, edited file could otherwise replace `predict` by an array), and
        # private state comes only by the schema's declared names.
        bad = [k for k in state if not k.isidentifier() or k.startswith("_") or hasattr(cls, k)]
        if bad:
            self.fail(where, f"fitted state names {bad[:3]} are not attributes of {cls.__name__}")
        for k, v in stored.internal.items():
            attr = schema.attribute(k)
            if attr is None or attr in stored.params:
                self.fail(where, f"internal state {k!r} is not part of {cls.__name__}'s schema "
                          f"(version {schema.version})")
            state[attr] = v
        self.check_types(cls, state, where)
        if isinstance(est, Formula):  # formulas are evaluated: data only (_formula_state)
            try:
                spec = state.get("model_spec_")  # (its language version, for messages)
                check_formula_is_data(self.check(est.formula, str, f"{where}.formula"),
                                      spec.get("language", 1) if isinstance(spec, dict)
                                      else None)
                if "model_spec_" in state:
                    columns = state.get("design_columns_")
                    intercept = INTERCEPT in columns if isinstance(columns, list) else None
                    state["model_spec_"] = spec_from_data(self.check(state["model_spec_"],
                                                                     dict, where), intercept)
            except ValueError as exc:
                self.fail(f"{where}.formula", str(exc))
        est.__dict__.update(state)
        for attr, rebuild in schema.derived.items():  # state not stored: rebuilt from the rest
            try:
                setattr(est, attr, rebuild(est))
            except Exception as exc:  # (reads the decoded, untrusted state)
                self.fail(f"{where}.{attr}", f"cannot be rebuilt ({type(exc).__name__}: {exc})")
        return est


def _kind(v: Any) -> str:
    """What a decoded value is, for messages: ``an array of <U3 of shape (3,)``, ``int 5``."""
    if isinstance(v, np.ndarray):
        return f"an array of {v.dtype} of shape {v.shape}"
    if v is None or isinstance(v, (bool, int, float, np.generic)):
        return f"{type(v).__name__} {v!r}"[:80]
    if isinstance(v, str):
        return f"the text {v[:40]!r}"
    return f"a {type(v).__name__}"
