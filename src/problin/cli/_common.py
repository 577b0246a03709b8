"""Shared plumbing of the ``problin`` subcommands: errors, exit codes, progress, warnings.

Exit codes: 0 success; 2 usage error (unknown option, model, dataset or column, a
parameter that the model does not have or a value it does not accept, missing file:
click's ``UsageError``); 1 data error (a file that cannot be read or encoded, missing
values, a damaged model file, a fit that fails) or a missing optional dependency.
Messages are one line without a traceback unless ``--debug`` (or ``PROBLIN_DEBUG=1``) is
given; a mistyped name gets ``(did you mean 'X'?)`` (:mod:`problin.cli._suggest`).

Progress (bars and spinners on stderr) shows on a terminal; ``PROBLIN_PROGRESS=1`` forces
it anywhere (a pipe, a CI log), ``PROBLIN_PROGRESS=0`` turns it off.
"""
import contextlib
import functools
import itertools
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import click
from sklearn.utils._param_validation import InvalidParameterError

from .._optional import import_optional
from ..exceptions import MissingDependencyError, ProblinWarning
from ..io.errors import ColumnNotFoundError
from ._suggest import one_line, with_column_hint

__all__ = ["command_errors", "debug_option", "progress", "spinner", "echo_warnings",
           "require_dask"]

_DATA_ERRORS = (ValueError, TypeError, OSError, MemoryError, ArithmeticError,
                NotImplementedError, KeyError, IndexError)

_F = TypeVar("_F", bound=Callable[..., Any])


def _debug_enabled(ctx: click.Context) -> bool:
    flag = any(c.params.get("debug") for c in _chain(ctx)) or bool(
        (ctx.find_root().obj or {}).get("debug"))
    return flag or os.environ.get("PROBLIN_DEBUG", "") not in ("", "0")


def _chain(ctx: click.Context | None) -> Iterator[click.Context]:
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


def debug_option(func: _F) -> _F:
    """Add ``--debug`` (show tracebacks) to a subcommand."""
    return click.option("--debug", is_flag=True, help="Show the full traceback on errors.")(func)


def command_errors(func: _F) -> _F:
    """Run a subcommand, turning data errors into ``Error: ...`` and exit code 1."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        try:
            return func(*args, **kwargs)
        except click.ClickException:
            raise
        except BrokenPipeError:  # e.g. `problin predict ... | head`: stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except ColumnNotFoundError as exc:
            if _debug_enabled(ctx):
                raise
            asked = [kwargs.get("target"), *(kwargs.get("categorical") or ())]
            raise click.UsageError(with_column_hint(one_line(str(exc)), asked), ctx) from None
        except InvalidParameterError as exc:  # a model parameter's value (-p, --alpha)
            if _debug_enabled(ctx):
                raise
            raise click.UsageError(one_line(str(exc)), ctx) from None
        except MissingDependencyError as exc:  # an extra not installed: one line, exit 1
            if _debug_enabled(ctx):
                raise
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except _DATA_ERRORS as exc:
            if _debug_enabled(ctx):
                raise
            message = one_line(str(exc)) or type(exc).__name__
            if isinstance(exc, (FileNotFoundError, PermissionError)) and exc.filename:
                message = f"{exc.strerror}: {exc.filename}"
            click.echo(f"Error: {message}", err=True)
            ctx.exit(1)
        except Exception as exc:  # a bug of problin's own: one line still, and how to see it
            if _debug_enabled(ctx):
                raise
            click.echo(f"Error: internal error ({type(exc).__name__}: {one_line(str(exc))}); "
                       "run with --debug for the traceback, and please report it", err=True)
            ctx.exit(1)
    return cast(_F, wrapper)


def require_dask() -> None:
    """Stop with one line naming the extra to install if Dask (with its DataFrame part,
    which the Dask engine reads files with) is not importable."""
    for module in ("dask.array", "dask.dataframe"):  # one wording for every missing extra
        import_optional(module, "dask", "--engine dask")


def _show_progress() -> bool:
    forced = os.environ.get("PROBLIN_PROGRESS", "").strip()
    if forced:
        return forced != "0"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


class _Bar:
    """``label [#####     ] 3/10  30%  0:04`` redrawn in place with a carriage return.

    Not click's bar: click draws only on a terminal (it prints the bare label when
    stderr is a pipe), and a forced bar must draw there too."""

    width = 30

    def __init__(self, label: str, length: int) -> None:
        self.label, self.length, self.done = label, max(int(length), 1), 0
        self.start = time.monotonic()
        self.draw()

    def step(self) -> None:
        self.done = min(self.done + 1, self.length)
        self.draw()

    def draw(self) -> None:
        filled = self.width * self.done // self.length
        seconds = int(time.monotonic() - self.start)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{' ' * (self.width - filled)}] "
                         f"{self.done}/{self.length} {100 * self.done // self.length:3d}%  "
                         f"{seconds // 60}:{seconds % 60:02d}")
        sys.stderr.flush()


@contextlib.contextmanager
def progress(label: str, length: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr (see the module docstring for when it shows);
    yields a function that advances it by one step."""
    if not _show_progress():
        yield lambda: None
        return
    bar = _Bar(label, length)
    try:
        yield bar.step
    finally:
        sys.stderr.write("\n")
        sys.stderr.flush()


@contextlib.contextmanager
def spinner(label: str) -> Iterator[None]:
    """A spinner on stderr while a single long step (one fit) runs."""
    if not _show_progress():
        yield
        return
    done = threading.Event()

    def spin() -> None:
        for char in itertools.cycle("|/-\\"):
            sys.stderr.write(f"\r{label} {char}")
            sys.stderr.flush()
            if done.wait(0.1):
                break
        sys.stderr.write(f"\r{label} done\n")
        sys.stderr.flush()

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextlib.contextmanager
def echo_warnings() -> Iterator[None]:
    """Print problin's warnings (separation, collinearity, ...) as one line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProblinWarning)
        yield
    seen = set()
    for w in caught:
        if issubclass(w.category, UserWarning) and str(w.message) not in seen:
            seen.add(str(w.message))
            click.echo(f"Warning ({w.category.__name__}): {w.message}", err=True)
