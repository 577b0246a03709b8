"""Declared types of fitted state: a decoded value must be of the type its class declares.

A model file's checksum is an integrity check, not a signature: anyone can edit the
metadata and re-sign it. The decoder builds only whitelisted classes from data, but the
data itself could still be of the wrong kind (``classes_ = "zzz"``, a record field that
is a number instead of an array), and the damage would surface at predict time as an
``AttributeError`` deep inside problin. Where a class declares the type of an attribute
(every field of problin's state records; class-level annotations of estimators such as
``LinearRegression._ols: OLSFit | None``), :func:`mismatch` checks the decoded value
against that declaration, so the file is refused at load time naming the attribute.

The check is deliberately lenient where the declaration is loose in practice: ``int`` and
``float`` accept any real number (problin computes counts as floats and vice versa, and
numpy scalars are as good as Python ones), and annotations this module does not model
(type variables, forward references it cannot resolve) check nothing. It must never refuse
a file that :func:`problin.save` wrote; the round-trip tests hold it to that.
"""
import collections.abc
import functools
import numbers
import types
import typing
from typing import Any

import numpy as np

__all__ = ["declared_types", "mismatch"]


@functools.cache
def declared_types(cls: type) -> dict[str, Any]:
    """The resolved annotations of ``cls`` and its bases (empty if they cannot be resolved:
    an annotation we cannot read declares nothing we could check)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # any failure to resolve an annotation: nothing declared to check
        return {}
    return {k: h for k, h in hints.items() if typing.get_origin(h) is not typing.ClassVar}


def mismatch(value: Any, hint: Any) -> str | None:
    """``None`` if ``value`` conforms to the annotation ``hint``, else what was expected."""
    return None if _conforms(value, hint) else _describe(hint)


def _conforms(value: Any, hint: Any) -> bool:
    if hint is Any or isinstance(hint, (typing.TypeVar, str, typing.ForwardRef)):
        return True  # declares nothing checkable
    if hint is None or hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, h) for h in args)
    if origin is typing.Literal:
        return any(value == a for a in args)
    if hint is float or hint is int:
        return _is_real(value)
    if hint is bool:
        return isinstance(value, (bool, np.bool_)) or (
            isinstance(value, numbers.Integral) and value in (0, 1))
    if hint is np.ndarray or origin is np.ndarray:
        return isinstance(value, np.ndarray) and _dtype_conforms(value, args)
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return callable(value)  # decoded data never is: a method must not be replaced
    if origin is tuple:
        return isinstance(value, tuple) and _items_conform(list(value), args)
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_conforms(v, args[1]) for v in value.values())
    if isinstance(origin, type):  # another generic (Mapping[...], ...): its class only
        return isinstance(value, origin)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # an annotation form this module does not model: nothing to check


def _is_real(value: Any) -> bool:
    """A real number (Python or numpy, bool included), or a 0-d real array."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "biuf"
    return isinstance(value, numbers.Real)


def _dtype_conforms(value: np.ndarray, args: tuple[Any, ...]) -> bool:
    """``NDArray[np.float64]`` and the like: the array's dtype is of the same kind
    (float/bool/int/text), its precision free; a bare ``np.ndarray`` takes any dtype."""
    if len(args) < 2 or not typing.get_args(args[1]):
        return True
    scalar = typing.get_args(args[1])[0]
    if not (isinstance(scalar, type) and issubclass(scalar, np.generic)):
        return True
    expected = np.dtype(scalar).kind
    return value.dtype.kind == expected or (expected in "iu" and value.dtype.kind in "iu")


def _items_conform(items: list[Any], args: tuple[Any, ...]) -> bool:
    if not args:
        return True
    if len(args) == 2 and args[1] is Ellipsis:
        return all(_conforms(v, args[0]) for v in items)
    return len(items) == len(args) and all(_conforms(v, h) for v, h in zip(items, args))


def _describe(hint: Any) -> str:
    """A short name of an annotation for messages: ``an array of float64 or None``,
    ``OLSFit or None``, ``a number``."""
    if hint is None or hint is type(None):
        return "None"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(h) for h in args)
    if hint is float or hint is int:
        return "a number"
    if hint is np.ndarray or origin is np.ndarray:
        dtype = typing.get_args(args[1]) if len(args) >= 2 else ()
        return f"an array of {np.dtype(dtype[0]).name}" if dtype and isinstance(
            dtype[0], type) and issubclass(dtype[0], np.generic) else "an array"
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return "a method (never data)"
    if hint is str:
        return "text"
    if isinstance(origin, type):
        return f"a {origin.__name__}"
    return hint.__name__ if isinstance(hint, type) else str(hint)
