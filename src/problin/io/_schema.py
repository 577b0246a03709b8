"""The schema of the fitted state a model file holds, its versions, and the upgrades.

Format 2 stored an estimator as its ``__dict__`` and its state records (``GLMFit``, ...) as
their fields, verbatim: renaming a private attribute (``_result``) or a record field would
have made every file users saved fail to load, or worse, load into an estimator that no
longer reads that state. From format 3 a file holds, per estimator,

- ``params``: ``get_params()`` (public: the constructor's arguments);
- ``state``: the public fitted attributes, under their public names (``coef_``,
  ``classes_``: scikit-learn's trailing-underscore attributes, part of the API);
- ``internal``: the private state the estimator needs to predict, under *stable* names
  declared here (``fit`` for the fit record, ``class_stats``, ...), never the attribute's
  name; :data:`INTERNAL` maps each stable name to the attribute that holds it today;
- ``schema``: the version of this estimator kind's state (:class:`EstimatorSchema`);

and each record its fields under stable names with the record kind's version
(:class:`RecordSchema`). Loading runs a chain of upgrades: first the file format's
(:data:`FORMAT_UPGRADES`: format 2 to 3 maps the verbatim private names that format-2
problin wrote to the stable names, by the frozen table :data:`_FORMAT2_NAMES`), then each
estimator kind's and record kind's, from the file's version to today's; then the stable
names are mapped onto today's attributes. A file of a newer format or of a newer schema
version of some kind is refused, naming it; one holding private state no declaration
covers is refused naming the attribute.

How a change to an estimator's private state is absorbed (the one place to edit):

- an attribute renamed: change its entry in :data:`INTERNAL` (or the class's
  ``internal`` override): files keep the stable name;
- a record field renamed: ``RecordSchema(renamed={"stable": "field_today"})``;
- state whose meaning changes (a field split, an attribute now derived from others): bump
  the kind's ``version`` and add ``upgrades[old_version]``, a function from the state of
  that version to the next one's;
- state that can be rebuilt from the rest (a family object, a parameter layout): list it
  in ``derived``; it is not stored, and is rebuilt after loading.

``save`` refuses an estimator holding a private attribute declared nowhere, so a new one
is declared before any file holds it (the model-file tests save every estimator).
"""
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .._core.solvers.stochastic import state_from_averaged_sgd

__all__ = ["EstimatorSchema", "RecordSchema", "Stored", "INTERNAL", "FORMAT_UPGRADES",
           "estimator_schema", "record_schema", "upgrade_format"]


@dataclass
class Stored:
    """One estimator's state as a format-3 file holds it (stable names; decoded values)."""

    params: dict[str, Any]
    attributes: dict[str, Any]
    internal: dict[str, Any]


Upgrade = Callable[[Stored], Stored]
FieldsUpgrade = Callable[[dict[str, Any]], dict[str, Any]]
Fail = Callable[[str, str], NoReturn]

# Private state by stable name -> the attribute that holds it today. Shared by every
# class (problin uses one name for one kind of state: ``_result`` is the fit record
# everywhere); a class may override it (EstimatorSchema.internal).
INTERNAL: Mapping[str, str] = {
    "fit": "_result",  # GLMFit (GLMs) / PosteriorFit (Bayesian logistic regression)
    "ols_fit": "_ols", "pending": "_pending", "row_counts": "_row_counts",
    "single_output": "_single_output",
    "cov_factor": "_cov_factor", "intercept_var": "_intercept_var", "x_mean": "_x_mean",
    "class_stats": "_stats", "gaussian_model": "_model", "log_absent": "_log_absent",
    "cost": "_cost", "log_ratio": "_log_ratio",
    "predictive_draws": "_predictive_draws",  # BayesianOrdinalRegression's thinned posterior
    # LMS's streaming state (partial_fit resumes from it)
    "lms_weights": "_W", "rng": "_rng", "step": "_step", "seen_count": "_seen_count",
    "seen_origin": "_seen_origin", "seen_offset": "_seen_offset", "seen_sq": "_seen_sq",
    "x_origin": "_x_origin", "x_offset": "_x_offset", "x_scale": "_x_scale",
    "sgd_stream": "_stream",  # the GLM classifiers' partial_fit (a StochasticState)
    # scikit-learn's own (``set_output``) on any estimator
    "sklearn_output_config": "_sklearn_output_config",
}


@dataclass(frozen=True)
class EstimatorSchema:
    """How one estimator class's fitted state is stored.

    ``version``: of the state this class saves (files record it); ``internal``: stable
    names -> attributes, over :data:`INTERNAL`; ``derived``: attributes rebuilt from the
    loaded estimator instead of stored; ``upgrades[v]``: the state of version ``v`` to
    that of ``v + 1``.
    """

    version: int = 1
    internal: Mapping[str, str] = field(default_factory=dict)
    derived: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    upgrades: Mapping[int, Upgrade] = field(default_factory=dict)

    def attribute(self, stable: str) -> str | None:
        """Today's attribute for a stable name of private state, None if unknown."""
        return self.internal.get(stable, INTERNAL.get(stable))

    def split(self, state: Mapping[str, Any], owner: str) -> tuple[dict[str, Any],
                                                                   dict[str, Any]]:
        """An estimator's ``__dict__`` (less its parameters) as (public attributes,
        internal state by stable name); TypeError for undeclared private state."""
        names = {attr: stable for stable, attr in {**INTERNAL, **self.internal}.items()}
        attributes, internal = {}, {}
        for k, v in state.items():
            if k in self.derived:
                continue
            if not k.startswith("_"):
                attributes[k] = v
            elif k in names:
                internal[names[k]] = v
            else:
                raise TypeError(
                    f"cannot save {owner}.{k}: private state that the model-file schema "
                    "does not declare (problin/io/_schema.py: give it a stable name in "
                    "INTERNAL, or list it as derived)")
        return attributes, internal

    def upgrade(self, version: int, stored: Stored) -> Stored:
        for v in range(version, self.version):
            stored = self.upgrades[v](stored)
        return stored


@dataclass(frozen=True)
class RecordSchema:
    """How one state record's fields are stored: ``renamed`` (stable name -> field today),
    ``version`` and ``upgrades[v]`` (fields of version ``v`` to ``v + 1``, stable names)."""

    version: int = 1
    renamed: Mapping[str, str] = field(default_factory=dict)
    upgrades: Mapping[int, FieldsUpgrade] = field(default_factory=dict)

    def to_file(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        stable = {today: name for name, today in self.renamed.items()}
        return {stable.get(k, k): v for k, v in fields.items()}

    def from_file(self, version: int, fields: dict[str, Any]) -> dict[str, Any]:
        for v in range(version, self.version):
            fields = self.upgrades[v](fields)
        return {self.renamed.get(k, k): v for k, v in fields.items()}


# Estimator classes by their name in files; a class not listed has EstimatorSchema().
_ESTIMATORS: dict[str, EstimatorSchema] = {}
_RECORDS: dict[str, RecordSchema] = {
    # partial_fit's stream: version 1 was averaged SGD's state, 2 the stochastic Newton's
    "problin.StochasticState": RecordSchema(version=2, upgrades={1: state_from_averaged_sgd}),
}


def estimator_schema(name: str) -> EstimatorSchema:
    return _ESTIMATORS.get(name, EstimatorSchema())


def record_schema(name: str) -> RecordSchema:
    return _RECORDS.get(name, RecordSchema())


# ------------------------------------------------------------------ format upgrades
# The private attributes that format-2 problin wrote, verbatim, -> their stable names.
# Frozen: format-2 files never change, whatever the attributes are called today.
_FORMAT2_NAMES: Mapping[str, str] = {
    "_result": "fit", "_ols": "ols_fit", "_pending": "pending", "_row_counts": "row_counts",
    "_single_output": "single_output", "_cov_factor": "cov_factor",
    "_intercept_var": "intercept_var", "_x_mean": "x_mean", "_stats": "class_stats",
    "_model": "gaussian_model", "_log_absent": "log_absent", "_cost": "cost",
    "_log_ratio": "log_ratio", "_W": "lms_weights", "_rng": "rng", "_step": "step",
    "_seen_count": "seen_count", "_seen_origin": "seen_origin", "_seen_offset": "seen_offset",
    "_seen_sq": "seen_sq", "_x_origin": "x_origin", "_x_offset": "x_offset",
    "_x_scale": "x_scale", "_sklearn_output_config": "sklearn_output_config",
}


def _format2_to_3(node: Any, fail: Fail, where: str = "model") -> Any:
    """A format-2 value tree as format 3: estimators' private state under stable names,
    schema version 1 for every estimator and record kind (format 2's state is version 1).
    Malformed nodes are left as they are, for the decoder to name."""
    if isinstance(node, list):
        return [_format2_to_3(e, fail, f"{where}[{i}]") for i, e in enumerate(node)]
    if not isinstance(node, dict):
        return node
    if "$estimator" in node and isinstance(node.get("state"), dict):
        state, internal = {}, {}
        for k, v in node["state"].items():
            value = _format2_to_3(v, fail, f"{where}.{k}")
            if not (isinstance(k, str) and k.startswith("_")):
                state[k] = value
            elif k in _FORMAT2_NAMES:
                internal[_FORMAT2_NAMES[k]] = value
            else:
                fail(f"{where}.{k}", "private state that no format-2 problin wrote "
                     "(damaged or edited file)")
        return {"$estimator": node["$estimator"], "schema": 1,
                "params": _format2_to_3(node.get("params"), fail, where),
                "state": state, "internal": internal}
    if "$record" in node and isinstance(node.get("fields"), dict):
        return {"$record": node["$record"], "schema": 1,
                "fields": {k: _format2_to_3(v, fail, f"{where}.{k}")
                           for k, v in node["fields"].items()}}
    if "$dict" in node and isinstance(node["$dict"], dict):
        return {"$dict": {k: _format2_to_3(v, fail, f"{where}[{k!r}]")
                          for k, v in node["$dict"].items()}}
    return {k: _format2_to_3(v, fail, where) for k, v in node.items()}


# Format version v -> the function taking a tree of version v to v + 1 (3 -> 4 goes here).
FORMAT_UPGRADES: Mapping[int, Callable[[Any, Fail], Any]] = {2: _format2_to_3}


def upgrade_format(tree: Any, version: int, current: int, fail: Fail) -> Any:
    """The estimator tree of a file of format ``version`` as format ``current``."""
    for v in range(version, current):
        tree = FORMAT_UPGRADES[v](tree, fail)
    return tree

