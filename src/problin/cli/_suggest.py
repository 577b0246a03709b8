"""``did you mean 'X'?``: the closest valid name for a mistyped model, column or parameter.

Every name the command line checks (``-m/--model``, ``--models``, ``--datasets``,
``--target``, ``--categorical``, ``--features``, ``-p NAME=VALUE`` names and the values of
string parameters, ``--task``) names the closest valid one in its error, found by
:func:`difflib.get_close_matches` (similarity ratio at least 0.6).
"""
import ast
import difflib
from collections.abc import Iterable
from typing import Any

import click

__all__ = ["Choice", "did_you_mean", "one_line", "with_column_hint"]


def did_you_mean(name: Any, choices: Iterable[Any]) -> str:
    """``" (did you mean 'X'?)"`` for the valid choice closest to ``name``, else ``""``.

    Examples
    --------
    >>> did_you_mean("logistc", ["logistic", "probit"])
    " (did you mean 'logistic'?)"
    >>> did_you_mean("zzz", ["logistic", "probit"])
    ''
    """
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def one_line(message: str) -> str:
    """A message's lines joined into one (what an error prints)."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


class Choice(click.Choice):
    """click's :class:`click.Choice` whose error also names the closest choice."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            choices = ", ".join(map(repr, self.choices))
            self.fail(f"{value!r}{did_you_mean(value, self.choices)} is not one of {choices}.",
                      param, ctx)


def _listed_columns(message: str) -> list[str]:
    """The column (or array) names that the readers' messages end with: ``...; columns
    are ['a', 'b']`` (problin.io); empty if the message has no such list."""
    start = max(message.rfind("columns are ["), message.rfind("arrays are ["))
    if start < 0:
        return []
    try:
        names = ast.literal_eval(message[message.index("[", start):])
    except (ValueError, SyntaxError):
        return []
    return [str(n) for n in names] if isinstance(names, list) else []


def with_column_hint(message: str, asked: Iterable[Any]) -> str:
    """A reader's "no such column" message with ``(did you mean 'X'?)`` after each name
    of ``asked`` (the columns named on the command line) that it quotes."""
    columns = _listed_columns(message)
    for name in dict.fromkeys(str(a) for a in asked if a is not None):
        quoted = repr(name)
        if name in columns or quoted not in message:
            continue
        hint = did_you_mean(name, columns)
        if hint:
            message = message.replace(quoted, quoted + hint, 1)
    return message
