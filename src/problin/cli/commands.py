"""The ``problin`` subcommands, one module each: ``compare`` (:mod:`._compare`), ``fit``
(:mod:`._fit`), ``predict``, ``summary`` and ``report`` (:mod:`._predict`), with the
options they share (:mod:`._options`). Parsing and printing only: the work is done by
problin's modules."""
from ._compare import compare
from ._fit import fit
from ._options import MODELS, data_command, data_options, engine_options
from ._predict import predict, report, summary

__all__ = ["compare", "fit", "predict", "summary", "report", "data_options", "data_command",
           "MODELS", "engine_options"]
