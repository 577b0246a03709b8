"""Parameter validation of problin's estimators, once per distinct set of values.

scikit-learn's ``_validate_params`` checks every constructor parameter against
its constraints on each ``fit``: ~25 us warm, ~180 us in a fit that follows
other work (measured), a sixth of a 1,000-row logistic fit, repeated for every
fold of a cross-validation with the same values. The check depends on the
values alone, so a set of values that passed is remembered (keyed by the
estimator's class and each value's type and value) and not checked again.
Unhashable values (lists, arrays) are checked every time.
"""
from typing import Any

__all__ = ["validate_params"]

_PASSED: set[tuple[Any, ...]] = set()
_MAX_REMEMBERED = 4096
_NAMES: dict[type, list[str]] = {}  # (scikit-learn's lookup inspects the signature each call)


def validate_params(estimator: Any) -> None:
    """``estimator._validate_params()``, unless these values already passed it."""
    cls = type(estimator)
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = cls._get_param_names()
    try:
        key = (cls, *((type(v), v) for v in (getattr(estimator, name) for name in names)))
        known = key in _PASSED
    except TypeError:  # an unhashable value
        estimator._validate_params()
        return
    if not known:
        estimator._validate_params()  # raises for an invalid value: nothing remembered
        if len(_PASSED) < _MAX_REMEMBERED:
            _PASSED.add(key)
