"""The report's page: one self-contained HTML file (inline CSS, images as data URIs,
no scripts, no network access)."""
import html
from collections.abc import Iterable

import pandas as pd

__all__ = ["render_page"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
.meta { color: #555; margin: 0; font-family: ui-monospace, monospace; font-size: 0.9em;
        white-space: pre-wrap; }
table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 0.85em; }
th, td { padding: 0.2em 0.7em; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #999; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr));
         gap: 1.2em; }
figure { margin: 0; }
figcaption { color: #555; font-size: 0.85em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.note { color: #777; font-size: 0.85em; }
"""


def _table_html(table: pd.DataFrame, digits: int = 6) -> str:
    index = not isinstance(table.index, pd.RangeIndex)  # plain row numbers are noise
    return table.to_html(border=0, na_rep="-", index=index,
                         float_format=lambda v: f"{v:.{digits}g}")


def render_page(title: str, meta_lines: Iterable[str], tables: Iterable[tuple[str, pd.DataFrame]],
                figures: Iterable[tuple[str, str | None, str]], notes: Iterable[str] = ()) -> str:
    """Assemble the page.

    Parameters
    ----------
    title : str
    meta_lines : list of str
        Lines describing the model and the data.
    tables : list of (heading, DataFrame)
    figures : list of (heading, data URI, caption)
    notes : list of str
    """
    esc = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{esc(title)}</h1>"]
    parts += [f'<p class="meta">{esc(line)}</p>' for line in meta_lines]
    for heading, table in tables:
        parts.append(f"<h2>{esc(heading)}</h2>")
        parts.append(_table_html(table) if not table.empty else
                     '<p class="note">(no parameters to show)</p>')
    if figures:
        parts.append('<h2>Plots</h2><div class="plots">')
        for heading, uri, caption in figures:
            parts.append(f'<figure><img src="{uri}" alt="{esc(heading)}">'
                         f"<figcaption><b>{esc(heading)}.</b> {esc(caption)}</figcaption></figure>")
        parts.append("</div>")
    parts += [f'<p class="note">{esc(n)}</p>' for n in notes]
    parts.append("</body></html>")
    return "\n".join(parts)
