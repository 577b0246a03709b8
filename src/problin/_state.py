"""Fitting is all or nothing: a refused fit or batch leaves the estimator as it was."""
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["unchanged_on_error"]


@contextmanager
def unchanged_on_error(estimator: Any) -> Iterator[None]:
    """Restore ``estimator``'s attributes if the block raises.

    Validation runs in stages (data, then groups, then the robust pass), and a
    stream merges a batch before rebuilding the model: an error half-way left a
    model of the new data with the old inference, or statistics holding a
    batch that was refused (a retry counted it twice). The attributes are
    replaced, not copied deeply: fitting rebinds them rather than mutating.
    """
    before = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise
