"""Entry point of the ``problin`` command."""
import sys

import click

from .. import __version__
from ..datasets import DATASETS, load_dataset
from ..model_selection import CLASSIFIERS, compare_classifiers


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="problin")
def cli():
    """problin: probabilistic linear models with full inference."""


@cli.command()
@click.option("--datasets", "dataset_names", default=",".join(DATASETS), show_default=True,
              help="Comma-separated bundled datasets.")
@click.option("--models", default=",".join(CLASSIFIERS), show_default=True,
              help="Comma-separated model names.")
@click.option("--cv", default=5, show_default=True, type=click.IntRange(2, 100),
              help="Number of cross-validation folds.")
def compare(dataset_names, models, cv):
    """Cross-validate every model on bundled data and print a leaderboard.

    \b
    Example:
      problin compare --cv 10 --models logistic,probit
    """
    models = [m.strip() for m in models.split(",") if m.strip()]
    names = [d.strip() for d in dataset_names.split(",") if d.strip()]
    try:
        data = {name: load_dataset(name) for name in names}
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for name, (X, y) in data.items():
        try:
            table = _with_progress(name, cv * len(models),
                                   lambda step: compare_classifiers(X, y, models, cv=cv,
                                                                    progress=step))
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        click.echo(f"\n{name}: {X.shape[0]} samples, {X.shape[1]} features, "
                   f"{cv}-fold cross-validation (features standardised)")
        click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        click.echo()


def _with_progress(label, length, work):
    """Run ``work(step)`` under a progress bar on an interactive terminal."""
    if not sys.stderr.isatty():
        return work(lambda: None)
    with click.progressbar(length=length, label=f"{label:>14}", file=sys.stderr) as bar:
        return work(lambda: bar.update(1))


def main():
    cli(prog_name="problin")
