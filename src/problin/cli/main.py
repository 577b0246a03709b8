"""Entry point of the ``problin`` command."""
import click

from .._version import __version__
from .commands import compare, fit, predict, report, summary


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="problin")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """problin: probabilistic linear models with full inference.

    Exit codes: 0 success, 1 data error (unreadable file, missing values, damaged
    model file), 2 usage error (unknown option, model, column or parameter, a value
    a parameter does not take, missing file); a mistyped name gets "did you mean".
    Progress bars show on a terminal (PROBLIN_PROGRESS=1 forces them, e.g. under a
    pipe; PROBLIN_PROGRESS=0 turns them off); --debug or PROBLIN_DEBUG=1 shows
    tracebacks.

    \b
    Examples:
      problin compare
      problin fit data.csv --target y --model logistic --out model.problin
      problin predict model.problin new.csv --proba
      problin summary model.problin
      problin report model.problin data.csv --out report.html
    """
    ctx.ensure_object(dict)["debug"] = debug


for _command in (compare, fit, predict, summary, report):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="problin")
