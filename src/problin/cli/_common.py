"""Shared plumbing of the ``problin`` subcommands: errors, exit codes, progress, warnings.

Exit codes: 0 success; 2 usage error (unknown option or model, missing file, a column
that is not in the data: click's ``UsageError``); 1 data error (a file that cannot be
read or encoded, missing values, a damaged model file, a fit that fails). Messages are
one line without a traceback unless ``--debug`` (or ``PROBLIN_DEBUG=1``) is given.
"""
import contextlib
import functools
import itertools
import os
import sys
import threading
import warnings

import click

from ..exceptions import ProblinWarning
from ..io.errors import ColumnNotFoundError

__all__ = ["command_errors", "debug_option", "progress", "spinner", "echo_warnings"]

_DATA_ERRORS = (ValueError, TypeError, OSError, MemoryError, ArithmeticError,
                NotImplementedError, KeyError, IndexError)


def _debug_enabled(ctx):
    flag = any(c.params.get("debug") for c in _chain(ctx)) or bool(
        (ctx.find_root().obj or {}).get("debug"))
    return flag or os.environ.get("PROBLIN_DEBUG", "") not in ("", "0")


def _chain(ctx):
    while ctx is not None:
        yield ctx
        ctx = ctx.parent


def debug_option(func):
    """Add ``--debug`` (show tracebacks) to a subcommand."""
    return click.option("--debug", is_flag=True, help="Show the full traceback on errors.")(func)


def command_errors(func):
    """Run a subcommand, turning data errors into ``Error: ...`` and exit code 1."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
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
            raise click.UsageError(str(exc), ctx) from None
        except _DATA_ERRORS as exc:
            if _debug_enabled(ctx):
                raise
            message = str(exc) if str(exc) else type(exc).__name__
            if isinstance(exc, (FileNotFoundError, PermissionError)) and exc.filename:
                message = f"{exc.strerror}: {exc.filename}"
            click.echo(f"Error: {message}", err=True)
            ctx.exit(1)
    return wrapper


def _show_progress():
    forced = os.environ.get("PROBLIN_PROGRESS", "")
    return forced not in ("", "0") or sys.stderr.isatty()


@contextlib.contextmanager
def progress(label, length):
    """A click progress bar on stderr (on a terminal, or with ``PROBLIN_PROGRESS=1``);
    yields a function that advances it by one step."""
    if not _show_progress():
        yield lambda: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield lambda: bar.update(1)


@contextlib.contextmanager
def spinner(label):
    """A spinner on stderr while a single long step (one fit) runs."""
    if not _show_progress():
        yield
        return
    done = threading.Event()

    def spin():
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
def echo_warnings():
    """Print problin's warnings (separation, collinearity, ...) as one line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProblinWarning)
        yield
    seen = set()
    for w in caught:
        if issubclass(w.category, UserWarning) and str(w.message) not in seen:
            seen.add(str(w.message))
            click.echo(f"Warning ({w.category.__name__}): {w.message}", err=True)
