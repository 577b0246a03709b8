"""Shared plumbing of the ``problin`` subcommands: errors, exit codes, progress, warnings.

Exit codes: 0 success; 2 usage error (unknown option, model, dataset or column, a
parameter that the model does not have or a value it does not accept, missing file:
click's ``UsageError``); 1 data error (a file that cannot be read or encoded, missing
values, a damaged model file, a fit that fails) or a missing optional dependency.
Messages are one line without a traceback unless ``--debug`` (or ``PROBLIN_DEBUG=1``) is
given; a mistyped name gets ``(did you mean 'X'?)`` (:mod:`problin.cli._suggest`).

Progress (bars and spinners on stderr) shows on a terminal; ``PROBLIN_PROGRESS=1`` forces
it anywhere (a pipe, a CI log), ``PROBLIN_PROGRESS=0`` turns it off.

Everything printed goes through :func:`printable` (:func:`echo`, the error and warning
lines, progress labels): column names, category levels, class labels and a model file's
metadata are data from anywhere, and a terminal obeys the control characters in them
(ESC/CSI/OSC sequences set the title, clear the screen, write the clipboard, hide text;
a carriage return or a bidi override disguises a line). Control characters are shown
escaped (``\x1b``, ``\r``, ``\u202e``) instead, newlines and tabs of the output's own
layout kept.
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
           "require_dask", "printable", "echo"]

_DATA_ERRORS = (ValueError, TypeError, OSError, MemoryError, ArithmeticError,
                NotImplementedError, KeyError, IndexError)

_F = TypeVar("_F", bound=Callable[..., Any])

# C0 and C1 controls, DEL, and the Unicode controls of text direction and line breaks
_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F,
             *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_ONE_LINE = {c: _NAMED.get(c, f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}")
             for c in _CONTROLS}
_LINES = {c: e for c, e in _ONE_LINE.items() if c not in (0x09, 0x0A)}


def printable(text: Any, newlines: bool = True) -> str:
    r"""``text`` with its control characters shown escaped, not emitted (module docstring);
    ``newlines``: keep line feeds and tabs (the layout of a table), else escape them too.

    Examples
    --------
    >>> printable("colour\x1b]0;owned\x07=red\r")
    'colour\\x1b]0;owned\\x07=red\\r'
    """
    return str(text).translate(_LINES if newlines else _ONE_LINE)


def echo(message: Any = "", err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of :func:`printable` text: what every command prints goes here."""
    click.echo(printable(message), err=err, nl=nl)


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
            raise click.UsageError(printable(with_column_hint(one_line(str(exc)), asked)),
                                   ctx) from None
        except InvalidParameterError as exc:  # a model parameter's value (-p, --alpha)
            if _debug_enabled(ctx):
                raise
            raise click.UsageError(printable(one_line(str(exc))), ctx) from None
        except MissingDependencyError as exc:  # an extra not installed: one line, exit 1
            if _debug_enabled(ctx):
                raise
            echo(f"Error: {exc}", err=True)
            ctx.exit(1)
        except _DATA_ERRORS as exc:
            if _debug_enabled(ctx):
                raise
            message = one_line(str(exc)) or type(exc).__name__
            if isinstance(exc, (FileNotFoundError, PermissionError)) and exc.filename:
                message = f"{exc.strerror}: {exc.filename}"
            echo(f"Error: {message}", err=True)
            ctx.exit(1)
        except Exception as exc:  # a bug of problin's own: one line still, and how to see it
            if _debug_enabled(ctx):
                raise
            echo(f"Error: internal error ({type(exc).__name__}: {one_line(str(exc))}); "
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
        self.label, self.length, self.done = printable(label, False), max(int(length), 1), 0
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
            sys.stderr.write(f"\r{printable(label, False)} {char}")
            sys.stderr.flush()
            if done.wait(0.1):
                break
        sys.stderr.write(f"\r{printable(label, False)} done\n")
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
            echo(f"Warning ({w.category.__name__}): {w.message}", err=True)
