"""Entry point of the ``problin`` command."""
from collections.abc import Callable
from typing import Any

import click
import numpy as np

from .._version import __version__
from ..datasets import DATASETS, DEFAULT_DATASETS, load_dataset
from ..io.readers import read_data
from ..model_selection import (
    CLASSIFIERS,
    REGRESSORS,
    applicable_classifiers,
    compare_classifiers,
    compare_regressors,
    is_continuous_target,
)
from ..report.html import render_page
from ._common import progress
from .commands import data_command, fit, predict, report, summary


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="problin")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """problin: probabilistic linear models with full inference.

    Exit codes: 0 success, 1 data error (unreadable file, missing values, damaged
    model file), 2 usage error. Progress bars show on a terminal (PROBLIN_PROGRESS=1
    forces them, e.g. under a pipe; PROBLIN_PROGRESS=0 turns them off); --debug or
    PROBLIN_DEBUG=1 shows tracebacks.

    \b
    Examples:
      problin compare
      problin fit data.csv --target y --model logistic --out model.problin
      problin predict model.problin new.csv --proba
      problin summary model.problin
      problin report model.problin data.csv --out report.html
    """
    ctx.ensure_object(dict)["debug"] = debug


@cli.command()
@click.argument("data", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--target", "-t", default=None, help="Target column of DATA (required with DATA).")
@click.option("--datasets", "dataset_names", default=",".join(DEFAULT_DATASETS),
              show_default=", ".join(DEFAULT_DATASETS),
              help=f"Comma-separated bundled datasets, used when no DATA is given; all: "
                   f"{', '.join(DATASETS)}.")
@click.option("--models", default="",
              help="Comma-separated model names [default: every model that applies: "
                   f"classifiers {', '.join(CLASSIFIERS)}; for a continuous target, "
                   f"regressors {', '.join(REGRESSORS)}].")
@click.option("--cv", default=5, show_default=True, type=click.IntRange(2, 100),
              help="Number of cross-validation folds.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the leaderboards as a self-contained HTML page.")
@data_command
def compare(data: str | None, target: str | None, dataset_names: str, models: str, cv: int,
            report_path: str | None, data_format: str | None, drop_missing: bool,
            header: bool | None, categorical: tuple[str, ...], n_features: int | None,
            debug: bool) -> None:
    """Cross-validate every model and print a leaderboard per dataset.

    With DATA (CSV, Parquet, LibSVM or .npz; --target names the target column)
    the models are compared on it; without, on the bundled datasets. A dataset
    whose target is continuous (floats with many distinct values, e.g. diabetes)
    is compared by regressors (RMSE, negative log predictive density, R^2), any
    other by classifiers (accuracy, log-loss, Brier score, expected calibration
    error); binary-only models are left out for more than two classes.

    \b
    Examples:
      problin compare
      problin compare --cv 10 --models logistic,probit
      problin compare train.csv --target sex --report leaderboard.html
    """
    model_names = [m.strip() for m in models.split(",") if m.strip()]
    unknown = [m for m in model_names if m not in CLASSIFIERS and m not in REGRESSORS]
    if unknown:
        raise click.UsageError(f"unknown models {unknown}; choose from "
                               f"{sorted(CLASSIFIERS) + sorted(REGRESSORS)}")
    if data is not None:
        if target is None:
            raise click.UsageError("--target is required with DATA")
        datasets = {data: _read_for_compare(data, target, data_format, drop_missing, header,
                                            categorical, n_features)}
    else:
        names = [d.strip() for d in dataset_names.split(",") if d.strip()]
        try:
            datasets = {name: load_dataset(name) for name in names}
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    boards = []
    for name, (X, y) in datasets.items():
        regression = is_continuous_target(y)
        registry, run = (REGRESSORS, compare_regressors) if regression else \
            (CLASSIFIERS, compare_classifiers)
        chosen = [m for m in model_names if m in registry] if model_names else list(registry)
        left_out: list[str] = []
        if not regression:
            chosen, left_out = applicable_classifiers(y, chosen)
        if not chosen:
            click.echo(f"\n{name}: skipped (no {'regressor' if regression else 'classifier'}"
                       " among --models)")
            continue
        try:
            table = _with_progress(name, cv * len(chosen),
                                   lambda step: run(X, y, chosen, cv=cv, progress=step))
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        kind = ", regression" if regression else ""
        heading = (f"{name}: {X.shape[0]} samples, {X.shape[1]} features, "
                   f"{cv}-fold cross-validation{kind} (features standardised)")
        click.echo(f"\n{heading}")
        click.echo(table.to_string(index=False, na_rep="-",
                                   float_format=lambda v: f"{v:.4f}"))
        if left_out:
            click.echo(f"(left out, binary only: {', '.join(left_out)}; "
                       f"{np.unique(np.asarray(y)).size} classes)")
        click.echo()
        boards.append((heading, table.set_index("model")))
    if report_path is not None:
        with open(report_path, "w", encoding="utf-8") as fh:
            fh.write(render_page("problin compare", [f"problin {__version__}"], boards, []))
        click.echo(f"leaderboards written to {report_path}")


def _read_for_compare(path: str, target: str | None, data_format: str | None, drop_missing: bool,
                      header: bool | None, categorical: tuple[str, ...],
                      n_features: int | None) -> tuple[Any, Any]:
    """``(X, y)`` of a data file for compare (dense: the models standardise features)."""
    ds = read_data(path, target, format=data_format, drop_missing=drop_missing, header=header,
                   require_target=True, categorical=list(categorical), n_features=n_features)
    X = ds.X
    if hasattr(X, "toarray"):
        if X.shape[0] * X.shape[1] > 50_000_000:
            raise ValueError(f"{path}: {X.shape[0]} x {X.shape[1]} sparse features are too "
                             "many to standardise densely for compare; use problin fit")
        X = X.toarray()
    return X, ds.y


def _with_progress(label: str, length: int, work: Callable[[Callable[[], None]], Any]) -> Any:
    """Run ``work(step)`` under a progress bar (on a terminal or with PROBLIN_PROGRESS=1)."""
    with progress(f"{label:>14}", length) as step:
        return work(step)


for _command in (fit, predict, summary, report):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="problin")
