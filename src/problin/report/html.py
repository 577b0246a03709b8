"""The report's page: one self-contained HTML file (inline CSS, images as data URIs,
no scripts, no network access)."""
import html
from collections.abc import Iterable
from typing import Any

import pandas as pd

from .numbers import rounded_table

__all__ = ["render_page"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
.meta { color: #555; margin: 0; font-family: ui-monospace, monospace; font-size: 0.9em;
        white-space: pre-wrap; }
.stats { display: flex; flex-wrap: wrap; gap: 0.4em 0.6em; margin: 0.8em 0 0; padding: 0; }
.stats div { background: #f4f6f8; border: 1px solid #e2e6ea; border-radius: 4px;
             padding: 0.25em 0.6em; font-size: 0.9em; }
.stats dt { display: inline; color: #666; }
.stats dd { display: inline; margin: 0 0 0 0.4em; font-family: ui-monospace, monospace;
            font-weight: 600; }
.caption { color: #555; font-size: 0.85em; margin: 0.4em 0 0; }
table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.85em; }
th, td { padding: 0.2em 0.7em; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #999; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr));
         grid-auto-flow: row dense; gap: 1.2em; }
figure { margin: 0; }
figcaption { color: #555; font-size: 0.85em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.note { color: #777; font-size: 0.85em; }
"""


def _table_html(table: pd.DataFrame) -> str:
    index = not isinstance(table.index, pd.RangeIndex)  # plain row numbers are noise
    if table.index.nlevels == 1:  # its name would take a header row of its own
        table = table.rename_axis(index=None)
    return rounded_table(table).to_html(border=0, na_rep="-", index=index)


def _stats_html(stats: Iterable[tuple[str, str]], heading: str) -> list[str]:
    items = [f"<div><dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd></div>"
             for k, v in stats]
    if not items:
        return []
    return [f'<h2>{html.escape(heading)}</h2><dl class="stats">', *items, "</dl>"]


def render_page(title: str, meta_lines: Iterable[str], tables: Iterable[tuple[Any, ...]],
                figures: Iterable[tuple[Any, ...]], notes: Iterable[str] = (),
                stats: Iterable[tuple[str, str]] = (),
                stats_heading: str = "Fit statistics (on the training data: in sample)"
                ) -> str:
    """Assemble the page.

    Parameters
    ----------
    title : str
    meta_lines : list of str
        Lines describing the model and the data.
    tables : list of (heading, DataFrame) or (heading, DataFrame, caption)
        Numbers are rounded for reading (:func:`problin.report.numbers.rounded_table`).
    figures : list of (heading, data URI, caption) or (heading, data URI, caption, rows)
        ``rows``: how many rows of the grid a tall figure spans (default 1).
    notes : list of str
    stats : list of (label, formatted value)
        The model's fit statistics, shown under the description.
    stats_heading : str
    """
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{esc(title)}</h1>"]
    parts += [f'<p class="meta">{esc(line)}</p>' for line in meta_lines]
    parts += _stats_html(stats, stats_heading)
    for heading, table, *caption in tables:
        parts.append(f"<h2>{esc(heading)}</h2>")
        parts.append(_table_html(table) if not table.empty else
                     '<p class="note">(no parameters to show)</p>')
        parts += [f'<p class="caption">{esc(c)}</p>' for c in caption if c]
    if figures:
        parts.append('<h2>Plots</h2><div class="plots">')
        for heading, uri, caption_text, *rows in figures:
            span = f' style="grid-row: span {int(rows[0])}"' if rows and rows[0] > 1 else ""
            parts.append(f'<figure{span}><img src="{uri}" alt="{esc(heading)}">'
                         f"<figcaption><b>{esc(heading)}.</b> {esc(caption_text)}"
                         "</figcaption></figure>")
        parts.append("</div>")
    parts += [f'<p class="note">{esc(n)}</p>' for n in notes]
    parts.append("</body></html>")
    return "\n".join(parts)
