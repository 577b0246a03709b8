"""The model names and the options that several ``problin`` subcommands share."""
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..io._write import destination
from ..io.dask_readers import DEFAULT_BLOCKSIZE
from ..io.readers import FORMATS
from ..model_selection import CLASSIFIERS, GLM_REGRESSORS, REGRESSORS
from ..report.tables import final_estimator
from ._common import command_errors, debug_option
from ._suggest import Choice

__all__ = ["MODELS", "model_listing", "data_options", "data_command", "engine_options",
           "out_path", "model_path"]

MODELS = {**CLASSIFIERS, **REGRESSORS, **GLM_REGRESSORS}  # the single source of model names

_F = TypeVar("_F", bound=Callable[..., Any])


def model_listing() -> str:
    """One line per model name for ``problin fit --help``."""
    lines = ["\b", "Models (classifiers, then regressors):"]
    for name, make in MODELS.items():
        est = final_estimator(make())
        kind = "classifier" if name in CLASSIFIERS else "regressor"
        lines.append(f"  {name:<15} {kind:<11} {est!r}")
    return "\n".join(lines)


def out_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check (a click callback) that an output file's folder exists: a usage error, before
    any work, rather than a failed write at the end."""
    if value is not None:
        folder = os.path.dirname(os.path.abspath(value))
        if not os.path.isdir(folder):
            raise click.BadParameter(f"the folder {folder!r} of {value!r} does not exist",
                                     ctx, param)
    return value


def model_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check (a click callback) that a model file can be written at ``value`` before the
    fit: a usage error for a directory, device, FIFO or socket (a symlink's target counts),
    a missing folder or one this process cannot write in (see :mod:`problin.io._write`)."""
    if value is None:
        return value
    try:
        target, _ = destination(value)
    except (ValueError, FileNotFoundError) as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    folder = os.path.dirname(target)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise click.BadParameter(f"cannot write in the folder {folder!r} of {value!r}",
                                 ctx, param)
    return value


def data_options(func: _F) -> _F:
    """Options shared by every subcommand that reads a data file."""
    func = click.option("--n-features", type=click.IntRange(min=1), default=None,
                        metavar="N",
                        help="LibSVM: the number of features (needed at fit time when an "
                             "index exceeds max(2**20, number of values in the file)) "
                             "[default: the largest index; predict: the model's].")(func)
    func = click.option("--categorical", "categorical", multiple=True, metavar="COL",
                        help="Encode column COL as categories even if its values are "
                             "numbers (repeatable). Without it, a CSV column of numbers "
                             "with a few text cells is an error naming them.")(func)
    func = click.option("--header/--no-header", default=None,
                        help="CSV: the first row is (not) a header [default: detect].")(func)
    func = click.option("--drop-missing", is_flag=True,
                        help="Drop rows with missing values instead of stopping (predict: "
                             "a first column 'row' then gives each prediction's data row "
                             "in DATA, from 1).")(func)
    return click.option("--format", "data_format", type=Choice(FORMATS), default=None,
                        help="Data format [default: from the file extension: .csv/.tsv/.txt, "
                             ".parquet/.pq, .svm/.libsvm/.svmlight, .npz].")(func)


def data_command(func: _F) -> _F:
    """The data options, ``--debug`` and the error handling of a command reading data."""
    return data_options(debug_option(command_errors(func)))


def engine_options(func: _F) -> _F:
    """``--engine`` and the options of the Dask engine (``--blocksize``, ``--scheduler``)."""
    func = click.option("--scheduler", default=None, metavar="ADDRESS",
                        help="--engine dask: run on the dask.distributed scheduler at ADDRESS "
                             "(e.g. tcp://10.0.0.5:8786; its workers must see DATA) "
                             "[default: threads in this process].")(func)
    func = click.option("--blocksize", default=None, metavar="SIZE",
                        help="--engine dask: bytes per partition, e.g. 16MiB (Parquet: whole "
                             f"row groups) [default: {DEFAULT_BLOCKSIZE // 2 ** 20}MiB].")(func)
    return click.option("--engine", type=Choice(["memory", "dask"]), default="memory",
                        show_default=True,
                        help="memory: read DATA whole. dask: read it lazily and fit "
                             "partition by partition, in bounded memory (CSV or Parquet; "
                             "DATA may be a directory of such files).")(func)
