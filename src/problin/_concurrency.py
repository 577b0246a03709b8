"""One fit at a time per estimator: concurrent ``partial_fit`` calls queue, not race.

A ``partial_fit`` reads the statistics seen so far, merges its batch into them and
stores the result. Two threads calling it on one estimator both read the same
statistics and the last to store wins: fed from 8 threads, ``GaussianNB`` and QDA
counted 70,000 of 80,000 rows. Every ``fit`` and ``partial_fit`` therefore runs
under a lock of its estimator (:func:`fit_lock`, taken by the wrapper that
:class:`~problin._state.AllOrNothingFit` puts around them, outside the snapshot of
:func:`~problin._state.unchanged_on_error`, so that a failed call restores what the
previous call left, not what a concurrent one was half-way through).

The lock is not an attribute of the estimator: it lives in a registry keyed by the
estimator's identity and made on first use, so pickling, ``clone``, deep copies,
``get_params``, model files and comparisons of ``__dict__`` never see it, and a copy
gets a lock of its own. It is re-entrant (a subclass's ``fit`` calls its parent's).
Predictions take no lock: ``predict`` during a concurrent ``partial_fit`` sees the
model of the call before or after (attributes are rebound, not written in place).
"""
import os
import threading
import weakref
from typing import Any

__all__ = ["fit_lock"]

# id(estimator) -> (weak reference to it, its lock). Entries whose estimator was
# collected are swept when the registry has doubled since the last sweep (amortised
# O(1)), not by a weakref callback: a callback runs at any point of any thread's work
# (where the garbage collector happens to run), and an interrupt raised inside it is
# swallowed ("Exception ignored in ..."), so it would make an interrupt vanish.
_LOCKS: dict[int, tuple[weakref.ref[Any], threading.RLock]] = {}
_REGISTRY = threading.Lock()
_SWEEP_AT = 64


def fit_lock(estimator: Any) -> threading.RLock:
    """The re-entrant lock that serialises ``estimator``'s fitting calls (made on first use)."""
    global _SWEEP_AT
    key = id(estimator)
    with _REGISTRY:
        entry = _LOCKS.get(key)
        if entry is not None and entry[0]() is estimator:
            return entry[1]
        if len(_LOCKS) >= _SWEEP_AT:  # (a dead entry's id may be reused: checked above)
            for stale in [k for k, (ref, _) in _LOCKS.items() if ref() is None]:
                del _LOCKS[stale]
            _SWEEP_AT = max(64, 2 * len(_LOCKS))
        lock = threading.RLock()
        _LOCKS[key] = (weakref.ref(estimator), lock)
        return lock


def _forget_locks() -> None:
    """In a forked child: a lock held by another thread of the parent at the fork
    would stay held forever (that thread does not exist here)."""
    global _LOCKS, _REGISTRY
    _LOCKS = {}
    _REGISTRY = threading.Lock()


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_forget_locks)
