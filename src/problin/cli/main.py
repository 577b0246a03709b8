"""Entry point of the ``problin`` command."""
import sys

import click

from .. import __version__
from ..datasets import DATASETS, load_dataset
from ..model_selection import (CLASSIFIERS, REGRESSORS, compare_classifiers,
                               compare_regressors, is_continuous_target)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="problin")
def cli():
    """problin: probabilistic linear models with full inference."""


@cli.command()
@click.option("--datasets", "dataset_names", default=",".join(DATASETS), show_default=True,
              help="Comma-separated bundled datasets.")
@click.option("--models", default="",
              help="Comma-separated model names [default: every model that applies: "
                   f"classifiers {','.join(CLASSIFIERS)}; for a continuous target, "
                   f"regressors {','.join(REGRESSORS)}].")
@click.option("--cv", default=5, show_default=True, type=click.IntRange(2, 100),
              help="Number of cross-validation folds.")
def compare(dataset_names, models, cv):
    """Cross-validate every model on bundled data and print a leaderboard.

    A dataset whose target is continuous (floats with many distinct values,
    e.g. diabetes) is compared by regressors (RMSE, negative log predictive
    density, R^2), any other by classifiers.

    \b
    Example:
      problin compare --cv 10 --models logistic,probit
    """
    models = [m.strip() for m in models.split(",") if m.strip()]
    unknown = [m for m in models if m not in CLASSIFIERS and m not in REGRESSORS]
    if unknown:
        raise click.UsageError(f"unknown models {unknown}; choose from "
                               f"{sorted(CLASSIFIERS) + sorted(REGRESSORS)}")
    names = [d.strip() for d in dataset_names.split(",") if d.strip()]
    try:
        data = {name: load_dataset(name) for name in names}
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for name, (X, y) in data.items():
        regression = is_continuous_target(y)
        registry, run = (REGRESSORS, compare_regressors) if regression else \
            (CLASSIFIERS, compare_classifiers)
        chosen = [m for m in models if m in registry] if models else list(registry)
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
        click.echo(f"\n{name}: {X.shape[0]} samples, {X.shape[1]} features, "
                   f"{cv}-fold cross-validation{kind} (features standardised)")
        click.echo(table.to_string(index=False, na_rep="-",
                                   float_format=lambda v: f"{v:.4f}"))
        click.echo()


def _with_progress(label, length, work):
    """Run ``work(step)`` under a progress bar on an interactive terminal."""
    if not sys.stderr.isatty():
        return work(lambda: None)
    with click.progressbar(length=length, label=f"{label:>14}", file=sys.stderr) as bar:
        return work(lambda: bar.update(1))


def main():
    cli(prog_name="problin")
