"""``problin compare``: cross-validated leaderboards, one per dataset."""
from collections.abc import Sequence
from typing import Any

import click
import numpy as np
import pandas as pd

from .._version import __version__
from ..datasets import DATASETS, DEFAULT_DATASETS, load_dataset
from ..io.readers import read_data
from ..model_selection import (
    CLASSIFIERS,
    GLM_REGRESSORS,
    ORDERED,
    REGRESSORS,
    applicable_classifiers,
    compare_classifiers,
    compare_regressors,
    is_continuous_target,
)
from ..report.html import render_page
from ._common import echo, echo_warnings, progress
from ._options import data_command, out_path
from ._suggest import Choice, did_you_mean

__all__ = ["compare", "resolve_task", "leaderboard"]

TASKS = ("auto", "classification", "regression")


def _unknown(kind: str, names: Sequence[str], valid: Sequence[str]) -> None:
    """A usage error for the names not in ``valid``, each with its closest valid one."""
    unknown = [n for n in names if n not in valid]
    if unknown:
        named = ", ".join(f"{n!r}{did_you_mean(n, valid)}" for n in unknown)
        raise click.UsageError(f"unknown {kind}: {named}; choose from {', '.join(valid)}")


def resolve_task(y: Any, task: str, name: str) -> tuple[bool, Any]:
    """``(regression, y)`` for ``--task``: ``auto`` decides by
    :func:`problin.model_selection.is_continuous_target` (floats that are not all whole
    numbers, or with more than 20 distinct values: regression); ``regression`` needs
    numbers; ``classification`` takes the distinct values as classes (floats that are
    not whole numbers become text labels, which scikit-learn's classifiers accept)."""
    values = np.asarray(y)
    if task == "auto":
        return is_continuous_target(values), y
    if task == "regression":
        if values.dtype.kind not in "biuf":
            raise click.UsageError(f"--task regression: the target of {name} is not numeric "
                                   f"({values.dtype}); use --task classification")
        return True, values.astype(np.float64)
    if is_continuous_target(values):
        return False, np.array([repr(float(v)) for v in values], dtype=object)
    return False, y


def _mean_sd(mean: float, sd: float) -> str:
    if not np.isfinite(mean):
        return "-"
    return f"{mean:.4f}" if not np.isfinite(sd) else f"{mean:.4f} ± {sd:.4f}"


def leaderboard(table: pd.DataFrame) -> pd.DataFrame:
    """The table of :func:`~problin.model_selection.compare_classifiers` (or regressors)
    with ``spread=True``, as printed: each score ``mean ± sd`` over the folds in one
    column, the mean fit time in milliseconds to 0.1."""
    shown = {}
    for column in table.columns:
        if column.endswith("_sd"):
            continue
        if f"{column}_sd" in table.columns:
            shown[column] = [_mean_sd(m, s) for m, s in zip(table[column],
                                                           table[f"{column}_sd"])]
        elif column == "fit_ms":
            shown[column] = [f"{v:.1f}" for v in table[column]]
        else:
            shown[column] = list(table[column])
    return pd.DataFrame(shown)


@click.command()
@click.argument("data", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--target", "-t", default=None, help="Target column of DATA (required with DATA).")
@click.option("--datasets", "dataset_names", default=",".join(DEFAULT_DATASETS),
              show_default=", ".join(DEFAULT_DATASETS),
              help=f"Comma-separated bundled datasets, used when no DATA is given; all: "
                   f"{', '.join(DATASETS)}.")
@click.option("--models", default="",
              help="Comma-separated model names [default: every model that applies: "
                   f"classifiers {', '.join(CLASSIFIERS)}; for a continuous target, "
                   f"regressors {', '.join(REGRESSORS)}; GLM regressors when "
                   f"named: {', '.join(GLM_REGRESSORS)}].")
@click.option("--task", type=Choice(TASKS), default="auto", show_default=True,
              help="classification or regression; auto: regression for a float target "
                   "with a value that is not a whole number or with more than 20 distinct "
                   "values, classification otherwise.")
@click.option("--cv", default=5, show_default=True, type=click.IntRange(2, 100),
              help="Number of cross-validation folds.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2 ** 32 - 1),
              help="Seed of the shuffled cross-validation folds.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False),
              callback=out_path,
              help="Also write the leaderboards as a self-contained HTML page.")
@data_command
def compare(data: str | None, target: str | None, dataset_names: str, models: str, task: str,
            cv: int, seed: int, report_path: str | None, data_format: str | None,
            drop_missing: bool, header: bool | None, categorical: tuple[str, ...],
            n_features: int | None, debug: bool) -> None:
    """Cross-validate every model and print a leaderboard per dataset.

    With DATA (CSV, Parquet, LibSVM or .npz; --target names the target column)
    the models are compared on it; without, on the bundled datasets. A dataset
    whose target is continuous (floats that are not all whole numbers, or with
    more than 20 distinct values, e.g. diabetes; --task decides otherwise) is
    compared by regressors (RMSE, negative log predictive density, R^2), any
    other by classifiers (accuracy, log-loss, Brier score, expected calibration
    error); binary-only models are left out for more than two classes. Each
    score is its mean ± standard deviation over the folds.

    \b
    Examples:
      problin compare
      problin compare --cv 10 --seed 1 --models logistic,probit
      problin compare train.csv --target sex --report leaderboard.html
      problin compare grades.csv --target grade --task regression
      problin compare grades.csv --target grade --models ordinal,logistic,lda
    """
    model_names = [m.strip() for m in models.split(",") if m.strip()]
    _unknown("models", model_names, [*CLASSIFIERS, *REGRESSORS, *GLM_REGRESSORS])
    if data is not None:
        if target is None:
            raise click.UsageError("--target is required with DATA")
        datasets = {data: _read_for_compare(data, target, data_format, drop_missing, header,
                                            categorical, n_features)}
    else:
        names = [d.strip() for d in dataset_names.split(",") if d.strip()]
        _unknown("datasets", names, list(DATASETS))
        datasets = {name: load_dataset(name) for name in names}
    boards = []
    for name, (X, y) in datasets.items():
        regression, y = resolve_task(y, task, name)
        registry, run = ({**REGRESSORS, **GLM_REGRESSORS}, compare_regressors) if regression \
            else (CLASSIFIERS, compare_classifiers)
        chosen = [m for m in model_names if m in registry] if model_names else \
            list(REGRESSORS if regression else registry)
        left_out: list[str] = []
        if not regression:
            chosen, left_out = applicable_classifiers(y, chosen)
        if not chosen:
            echo(f"\n{name}: skipped (no {'regressor' if regression else 'classifier'}"
                 " among --models)")
            continue
        with echo_warnings(), progress(f"{name:>14}", cv * len(chosen)) as step:
            table = leaderboard(run(X, y, chosen, cv=cv, random_state=seed, progress=step,
                                    spread=True))
        kind = ", regression" if regression else ""
        heading = (f"{name}: {X.shape[0]} samples, {X.shape[1]} features, "
                   f"{cv}-fold cross-validation{kind}, seed {seed} (features standardised; "
                   "mean ± sd over the folds)")
        echo(f"\n{heading}")
        echo(table.to_string(index=False))
        if left_out:
            why = "ordered classes, three or more" if set(left_out) <= ORDERED else \
                "binary only"
            echo(f"(left out, {why}: {', '.join(left_out)}; "
                 f"{np.unique(np.asarray(y)).size} classes)")
        echo()
        boards.append((heading, table.set_index("model")))
    if report_path is not None:
        with open(report_path, "w", encoding="utf-8") as fh:
            fh.write(render_page("problin compare", [f"problin {__version__}"], boards, []))
        echo(f"leaderboards written to {report_path}")


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
