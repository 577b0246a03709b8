"""statsmodels-like summaries: a header of fit statistics above the coefficient table.

:func:`format_summary` lays out a title, two columns of ``label: value`` pairs and a
summary table (any of the estimators' ``summary()`` DataFrames) in at most 78 columns of
plain text, and the same content as HTML. It returns a :class:`SummaryText`: a ``str``
(``print(model.summary_text())``) whose ``_repr_html_`` renders the HTML table when it is
the value of a notebook cell. The estimator itself keeps scikit-learn's HTML diagram as
its own ``_repr_html_`` (see :class:`SummaryText`).
"""
import html
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
import pandas as pd

from .hypothesis import table_names

__all__ = ["SummaryText", "format_number", "format_p", "format_summary", "format_value"]

WIDTH = 78  # statsmodels' width; everything fits in 80 columns
Pairs = Sequence[tuple[str, str]]

_LABELS = {"coef": "coef", "std_err": "std err", "z": "z", "t": "t", "mean": "mean",
           "sd": "sd", "p_opposite": "P(opp.)"}
_P_COLUMNS = ("p_value", "p_opposite")


@dataclass(frozen=True)
class SummaryParts:
    """What :func:`format_summary` laid out, kept so that a summary can be laid out again
    with more header rows (:meth:`SummaryText.with_header`)."""

    title: str
    left: Pairs
    right: Pairs
    table: pd.DataFrame
    notes: Sequence[str]


class SummaryText(str):
    """A model summary: plain text (a ``str``) that renders as HTML in notebooks.

    ``print(model.summary_text())`` prints the text; a notebook cell whose value is
    ``model.summary_text()`` shows the HTML of ``_repr_html_``. The summary is a value of
    its own rather than the estimator's ``_repr_html_`` because scikit-learn already
    defines that for estimators (the parameter diagram, shown whenever a cell ends with
    ``model.fit(X, y)``); replacing it would print a full table after every fit and hide
    the diagram, and scikit-learn's estimator checks expect it.
    """

    html: str
    parts: "SummaryParts | None"

    def __new__(cls, text: str, html_text: str, parts: "SummaryParts | None" = None) -> Self:
        obj = super().__new__(cls, text)
        obj.html = html_text
        obj.parts = parts
        return obj

    def with_header(self, label: str, value: str) -> "SummaryText":
        """The same summary with ``label: value`` first in its header's left column (a
        wrapper that knows more than its estimator: a formula's dependent variable);
        a summary built without its parts is returned as it is."""
        if self.parts is None:
            return self
        parts = self.parts
        return format_summary(parts.title, [(label, value), *parts.left], parts.right,
                              parts.table, parts.notes)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:  # a summary shows as text, not as a quoted string
        return str(self)


def format_number(value: float, width: int = 10) -> str:
    """``value`` in at most ``width`` (>= 9) characters: 4 decimals where they fit, fewer
    for large values, scientific notation below 0.001 and from 1e5 on."""
    v = float(value)
    if not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if v == 0.0:
        return "0"
    if 1e-3 <= abs(v) < 1e5:
        for decimals in (4, 3, 2, 1, 0):
            text = f"{v:.{decimals}f}"
            if len(text) <= width:
                return text
    for decimals in range(max(width - 7, 1), -1, -1):  # (three-digit exponents: fewer)
        text = f"{v:.{decimals}e}"
        if len(text) <= width:
            break
    return text


def format_p(p: float, digits: int = 0) -> str:
    """A p-value: ``<1e-16`` below double precision's resolution, else 3 decimals
    (scientific below 0.001), or ``digits`` significant digits if given."""
    p = float(p)
    if math.isnan(p):
        return "nan"
    if p < 1e-16:
        return "<1e-16"
    if digits:
        return f"{p:.{digits}g}"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.3f}"


def format_value(value: Any) -> str:
    """A header value: integers and strings as they are, floats to 5 significant digits."""
    if isinstance(value, bool | np.bool_ | str):
        return str(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    v = float(value)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:#.5g}"


def _cut(text: str, width: int) -> str:
    """``text`` in ``width`` characters: its start and end around a ``~`` (names that
    share a long prefix keep their distinct ends)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "~" + text[len(text) - (width - 1 - head):]


def _header_lines(left: Pairs, right: Pairs) -> list[str]:
    half = WIDTH // 2
    lines = []
    for i in range(max(len(left), len(right))):
        cells = []
        for pairs in (left, right):
            if i < len(pairs):
                label, value = pairs[i]
                label = _cut(label + ":", 20)
                cells.append(label + _cut(value, half - 2 - len(label)).rjust(half - 2 - len(label)))
            else:
                cells.append(" " * (half - 2))
        lines.append(cells[0] + "    " + cells[1])
    return [line.rstrip() for line in lines]


def _columns(table: pd.DataFrame, level: float) -> list[tuple[str, str]]:
    """(column, label) of the numeric columns to show."""
    t_dist = "t" in table.columns
    labels = dict(_LABELS, p_value="P>chi2" if "chi2" in table.columns
                  else "P>|t|" if t_dist else "P>|z|",
                  ci_low=f"[{(1 - level) / 2:.3g}", ci_high=f"{(1 + level) / 2:.3g}]")
    return [(c, labels.get(c, c)) for c in table.columns
            if c != "note" and pd.api.types.is_numeric_dtype(table[c])]


def _cell(column: str, value: Any, width: int) -> str:
    return format_p(value) if column in _P_COLUMNS else format_number(value, width)


def _row_groups(table: pd.DataFrame) -> list[tuple[str | None, list[tuple[str, int]]]]:
    """Rows grouped by class for a ``(class, parameter)`` index: (group, [(name, row)])."""
    if isinstance(table.index, pd.MultiIndex):
        groups: dict[str, list[tuple[str, int]]] = {}
        for i, (cls, name) in enumerate(table.index):
            groups.setdefault(f"{table.index.names[0]} = {cls}", []).append((str(name), i))
        return list(groups.items())
    return [(None, [(str(name), i) for i, name in enumerate(table.index)])]


def _table_lines(table: pd.DataFrame, columns: list[tuple[str, str]]) -> list[str]:
    groups = _row_groups(table)
    names = [name for _, rows in groups for name, _ in rows]
    width = 10
    longest = max((len(n) for n in names), default=9)
    if longest > WIDTH - len(columns) * (width + 1):
        width = 9
    name_width = max(min(longest, WIDTH - len(columns) * (width + 1)), 4)
    lines = [" " * name_width + "".join(" " + label.rjust(width) for _, label in columns),
             "-" * WIDTH]
    for group, rows in groups:
        if group is not None:
            lines.append(group)
        for name, i in rows:
            cells = "".join(" " + _cell(c, table.iloc[i][c], width).rjust(width)
                            for c, _ in columns)
            if len(name) > name_width:  # the full name on a line of its own, never cut
                lines += textwrap.wrap(name, WIDTH, break_on_hyphens=False)
                name = ""
            lines.append(name.ljust(name_width) + cells)
    return lines


def _notes(table: pd.DataFrame) -> list[str]:
    notes = []
    if "note" in table.columns:
        # Named as restrictions name them ("class:parameter" for softmax).
        for name, note in zip(table_names(table.index), table["note"], strict=True):
            if note:
                notes.append(f"{name}: {note}")
    return notes


def _html(title: str, left: Pairs, right: Pairs, table: pd.DataFrame,
          columns: list[tuple[str, str]], notes: Sequence[str]) -> str:
    e = html.escape
    rows = []
    for i in range(max(len(left), len(right))):
        cells = ""
        for pairs in (left, right):
            label, value = pairs[i] if i < len(pairs) else ("", "")
            cells += f"<th style='text-align:left'>{e(label)}{':' if label else ''}</th>"
            cells += f"<td style='text-align:right'>{e(value)}</td>"
        rows.append(f"<tr>{cells}</tr>")
    head = "".join(f"<th style='text-align:right'>{e(label)}</th>" for _, label in columns)
    body = []
    for group, items in _row_groups(table):
        if group is not None:
            body.append(f"<tr><th colspan='{len(columns) + 1}' style='text-align:left'>"
                        f"{e(group)}</th></tr>")
        for name, i in items:
            cells = "".join(f"<td style='text-align:right'>{e(_cell(c, table.iloc[i][c], 12))}"
                            "</td>" for c, _ in columns)
            body.append(f"<tr><th style='text-align:left'>{e(name)}</th>{cells}</tr>")
    foot = "".join(f"<p>{e(note)}</p>" for note in notes)
    return (f"<div class='problin-summary'><table><caption>{e(title)}</caption>{''.join(rows)}"
            f"</table><table><tr><th></th>{head}</tr>{''.join(body)}</table>{foot}</div>")


def format_summary(title: str, left: Pairs, right: Pairs, table: pd.DataFrame,
                   notes: Sequence[str] = ()) -> SummaryText:
    """The summary of a fit: ``title``, the ``label: value`` pairs of ``left`` and
    ``right`` side by side, then ``table`` (a ``summary()`` DataFrame; its ``level``
    attribute labels the interval columns, its ``note`` column becomes notes below).

    Parameters
    ----------
    title : str
    left, right : sequence of (str, str)
        Header rows, already formatted (see :func:`format_value`, :func:`format_p`).
    table : DataFrame
    notes : sequence of str
        Lines printed below the table.

    Returns
    -------
    SummaryText
        The text (at most 78 columns wide), with its HTML as ``_repr_html_``.
    """
    level = float(table.attrs.get("level", 0.95))
    columns = _columns(table, level)
    all_notes = _notes(table) + list(notes)
    lines = [title.center(WIDTH).rstrip(), "=" * WIDTH, *_header_lines(left, right),
             "=" * WIDTH, *_table_lines(table, columns), "=" * WIDTH]
    lines += [line for note in all_notes for line in textwrap.wrap(note, WIDTH)]
    return SummaryText("\n".join(lines), _html(title, left, right, table, columns, all_notes),
                       SummaryParts(title, list(left), list(right), table, list(notes)))
