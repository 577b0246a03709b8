"""``python -m problin`` runs the command-line interface."""
from .cli.main import main

if __name__ == "__main__":
    main()
