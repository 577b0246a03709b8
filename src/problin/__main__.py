"""``python -m problin`` and the ``problin`` console script run the command-line interface.

The command line needs click (the ``cli`` extra). Without it, :func:`main` prints one line
naming the extra and exits with status 1, instead of a traceback from deep inside
``problin.cli``; so this module imports nothing of the command line until click is found.
"""
import sys

from ._optional import import_optional
from .exceptions import MissingDependencyError


def main() -> None:
    """The ``problin`` command (``[project.scripts]``)."""
    try:
        import_optional("click", "cli", "problin's command line")
    except MissingDependencyError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(1) from None
    from .cli.main import main as cli_main
    cli_main()


if __name__ == "__main__":
    main()
