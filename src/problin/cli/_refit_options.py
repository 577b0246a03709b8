"""``problin fit --ci profile --pvalues lr``: the summary's intervals and p-values by
refits of the model on the rows just read (profile likelihood; likelihood-ratio tests,
penalised for ``-p penalty=firth``, R logistf's summary)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ._suggest import Choice

__all__ = ["RefitRequest", "refit_options"]

_F = TypeVar("_F", bound=Callable[..., Any])


def refit_options(func: _F) -> _F:
    """``--ci`` and ``--pvalues`` of the printed summary."""
    func = click.option("--pvalues", type=Choice(["wald", "lr"]), default="wald",
                        show_default=True,
                        help="P-values of the printed summary (GLMs): wald, or lr: "
                             "likelihood-ratio tests, each parameter fixed at 0 and the "
                             "model refitted (penalised with -p penalty=firth, as logistf)."
                        )(func)
    return click.option("--ci", type=Choice(["wald", "profile"]), default="wald",
                        show_default=True,
                        help="Intervals of the printed summary (GLMs): wald, or profile: "
                             "profile-likelihood intervals (penalised with -p penalty=firth, "
                             "as logistf), one refit per bound.")(func)


@dataclass(frozen=True)
class RefitRequest:
    """The summary the command line asked for: ``ci`` and ``pvalues`` (the Wald ones
    need no refit; the others read the training rows, in memory)."""

    ci: str = "wald"
    pvalues: str = "wald"

    @property
    def refits(self) -> bool:
        return self.ci != "wald" or self.pvalues != "wald"

    def check(self, engine: str, model: Any) -> None:
        """A usage error where the request cannot be met: on Dask, or by a model whose
        summary takes no refits (those without ``ci``)."""
        if not self.refits:
            return
        if engine != "memory":
            raise click.UsageError("--ci profile and --pvalues lr refit the model in "
                                   "memory: drop them with --engine dask")
        if not hasattr(model, "restricted_lr_test"):
            raise click.UsageError(f"--ci profile and --pvalues lr apply to the GLMs "
                                   f"(logistic, probit and the GLM regressors), not to "
                                   f"{type(model).__name__}")
        # (what the refits refuse, before the fit is saved: the estimator's parameters,
        # also inside a Pipeline or a Formula, "<step>__penalty")
        params = {key.rpartition("__")[2]: value for key, value in model.get_params().items()}
        if params.get("penalty") in ("flic", "flac"):
            raise click.UsageError("--ci profile and --pvalues lr refit Firth's penalised "
                                   "likelihood: use -p penalty=firth (FLIC/FLAC keep its "
                                   "slopes)")
        if self.pvalues == "lr" and float(params.get("alpha") or 0.0) > 0:
            raise click.UsageError("--pvalues lr needs a maximum-likelihood or Firth fit: "
                                   "an L2 penalty (--alpha) gives no chi-squared statistic")

    def keywords(self, **rows: Any) -> dict[str, Any]:
        """The keywords of ``summary()``/``summary_text()``: ``rows`` (the training
        ``X, y`` or ``data``, and the fit's per-row arguments) only where they refit."""
        if not self.refits:
            return {}
        return {"ci": self.ci, "pvalues": self.pvalues, **rows}

    def notes(self, table: Any) -> list[str]:
        """The lines saying which intervals and p-values a summary table shows."""
        attrs = getattr(table, "attrs", {})
        return [str(attrs[key]) for key in ("ci_note", "pvalue_note") if key in attrs]
