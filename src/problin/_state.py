"""Fitting is all or nothing: a fit or batch that does not complete leaves the estimator
as it was.

Every public estimator derives from :class:`AllOrNothingFit`, which wraps each ``fit``
and ``partial_fit`` a class defines in :func:`unchanged_on_error`: an exception of any
kind, KeyboardInterrupt included, restores the attributes the estimator had before the
call. Without it a refit interrupted half-way kept ``classes_`` of the new data with the
coefficients of the old (``predict_proba`` gave 2 columns for 3 classes), and a stream
kept a batch that was refused (a retry counted it twice).
"""
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ._concurrency import fit_lock

__all__ = ["AllOrNothingFit", "unchanged_on_error"]

# The methods that change a fitted estimator's state.
_FITTING_METHODS = ("fit", "partial_fit")


_GENERATORS = (np.random.RandomState, np.random.Generator)


@contextmanager
def unchanged_on_error(estimator: Any) -> Iterator[None]:
    """Restore ``estimator``'s attributes if the block raises (BaseException: an
    interrupt too).

    The attributes are replaced, not copied deeply (a shallow copy of ``__dict__``,
    about a microsecond): fitting rebinds them rather than mutating them in place, a
    rule that tests/test_interrupted_fit.py holds every estimator to. Random
    generators are the exception -- every draw changes them in place (the shuffling
    generator of a stream's batches) -- so their states are saved too.
    """
    saved = _snapshot(estimator)
    try:
        yield
    except BaseException:
        _restore(estimator, saved)
        raise


_Snapshot = tuple[dict[str, Any], list[tuple[Any, Any]]]


def _snapshot(estimator: Any) -> _Snapshot:
    before = dict(estimator.__dict__)
    generators = [(value, _generator_state(value)) for value in before.values()
                  if isinstance(value, _GENERATORS)]
    return before, generators


def _restore(estimator: Any, saved: _Snapshot) -> None:
    before, generators = saved
    estimator.__dict__.clear()
    estimator.__dict__.update(before)
    for generator, state in generators:
        _set_generator_state(generator, state)


def _generator_state(generator: np.random.RandomState | np.random.Generator) -> Any:
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    return generator.bit_generator.state


def _set_generator_state(generator: np.random.RandomState | np.random.Generator,
                         state: Any) -> None:
    if isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    else:
        generator.bit_generator.state = state


def _all_or_nothing(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)  # (the signature scikit-learn's metadata routing reads)
    def fitting(self: Any, *args: Any, **kwargs: Any) -> Any:
        # One call at a time per estimator (concurrent partial_fit lost rows); the
        # lock outside the snapshot, so that a failed call restores a complete state.
        # (The snapshot as unchanged_on_error's, without a context manager's generator
        # frames: about half the wrapper's cost, ~10 -> ~5 us a fit, measured.)
        with fit_lock(self):
            saved = _snapshot(self)
            try:
                return method(self, *args, **kwargs)
            except BaseException:
                _restore(self, saved)
                raise

    fitting.__all_or_nothing__ = True  # type: ignore[attr-defined]
    return fitting


class AllOrNothingFit:
    """Base of every estimator: the ``fit`` and ``partial_fit`` of each subclass are
    wrapped in :func:`unchanged_on_error` when the class is created, so that the rule
    holds for every estimator and every override without each one remembering it (a
    subclass's ``fit`` that calls its parent's takes two snapshots: two dict copies)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        for name in _FITTING_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "__all_or_nothing__", False):
                setattr(cls, name, _all_or_nothing(method))
        super().__init_subclass__(**kwargs)
