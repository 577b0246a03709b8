"""Numbers as a reader wants them: estimates to the digits their standard error supports,
p-values below what double precision resolves as ``< 1e-16``, scores to three digits."""
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["format_p", "format_number", "rounded_table", "model_statistics", "glm_statistics"]

P_FLOOR = 1e-16  # below this a p-value is 1 - (something under machine epsilon)
_P_COLUMNS = ("p_value", "p_opposite", "pvalue", "p")
_TEST_COLUMNS = ("z", "t")
_ERROR_COLUMNS = ("std_err", "sd", "posterior_std")
_ROUNDED_WITH_ERROR = ("coef", "mean", "std_err", "sd", "ci_low", "ci_high", "posterior_std")


def format_p(p: float) -> str:
    """``"< 1e-16"``, ``"3.1e-05"`` (below 0.001) or ``"0.042"``; ``"-"`` if missing."""
    if p is None or not np.isfinite(p):
        return "-"
    if p < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def format_number(v: Any, digits: int = 4) -> str:
    """``v`` to ``digits`` significant digits (integers as they are; ``"-"`` if missing)."""
    if v is None or isinstance(v, (bool, np.bool_)):
        return "-" if v is None else str(v)
    if isinstance(v, (int, np.integer)):
        return str(v)
    if isinstance(v, str):
        return v
    x = float(v)
    if not np.isfinite(x):
        return "-" if np.isnan(x) else str(x)
    return f"{x:.{digits}g}"


def _decimals(error: float) -> int | None:
    """Decimal places showing two significant digits of ``error``; None when it has none."""
    if not np.isfinite(error) or error <= 0:
        return None
    return min(max(1 - math.floor(math.log10(error)), 0), 12)


def _rounded_row(row: pd.Series, error_column: str | None) -> dict[str, str]:
    places = _decimals(float(row[error_column])) if error_column else None
    out = {}
    for col, v in row.items():
        name = str(col)
        if name in _P_COLUMNS or name.endswith("pvalue"):
            out[name] = format_p(float(v)) if _is_number(v) else str(v)
        elif name in _TEST_COLUMNS and _is_number(v):
            out[name] = "-" if not np.isfinite(float(v)) else f"{float(v):.2f}"
        elif name in _ROUNDED_WITH_ERROR and places is not None and _is_number(v) \
                and np.isfinite(float(v)) and abs(float(v)) < 1e15:
            out[name] = _fixed(float(v), places)
        else:
            out[name] = format_number(v) if _is_number(v) or v is None else str(v)
    return out


def _fixed(v: float, places: int) -> str:
    """``v`` to ``places`` decimals, without the sign of a value that rounds to zero."""
    text = f"{v:.{places}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def rounded_table(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """``table`` as strings: in a row with a standard error (``std_err``, ``sd``), the
    estimate, the error and the interval to two significant digits of the error; test
    statistics to two decimals; p-values by :func:`format_p`; other numbers to
    ``digits`` significant digits."""
    if table.empty:
        return table
    error = next((c for c in _ERROR_COLUMNS if c in table.columns), None)
    if error is None:
        return table.apply(lambda col: col.map(
            lambda v: format_p(float(v)) if str(col.name) in _P_COLUMNS and _is_number(v)
            else format_number(v, digits) if _is_number(v) else ("-" if v is None else v)))
    rows = [_rounded_row(row, error) for _, row in table.iterrows()]
    return pd.DataFrame(rows, index=table.index, columns=[str(c) for c in table.columns])


# (attribute, label, format) of the fit statistics a model may have, in reading order.
_STATISTICS: list[tuple[str, str, Callable[[float], str]]] = [
    ("n_obs_", "observations", lambda v: f"{v:.0f}"),
    ("log_likelihood_", "log-likelihood", lambda v: f"{v:.2f}"),
    ("null_log_likelihood_", "null log-likelihood", lambda v: f"{v:.2f}"),
    ("aic_", "AIC", lambda v: f"{v:.1f}"),
    ("bic_", "BIC", lambda v: f"{v:.1f}"),
    ("deviance_", "deviance", lambda v: f"{v:.2f}"),
    ("pseudo_r2_", "pseudo R²", lambda v: f"{v:.3f}"),
    ("lr_statistic_", "LR χ²", lambda v: f"{v:.1f}"),
    ("lr_pvalue_", "LR test p", format_p),
    ("r2_", "R²", lambda v: f"{v:.3f}"),
    ("adj_r2_", "adjusted R²", lambda v: f"{v:.3f}"),
    ("f_statistic_", "F", lambda v: f"{v:.4g}"),
    ("f_pvalue_", "F test p", format_p),
    ("log_evidence_", "log evidence", lambda v: f"{v:.2f}"),
    ("alpha_", "prior precision α", lambda v: f"{v:.3g}"),
    ("beta_", "noise precision β", lambda v: f"{v:.3g}"),
]


# A GLM regressor's statistics, in the order of statsmodels' GLM summary header: those
# of every model (by attribute) and its own.
_GLM_OWN: dict[str, tuple[str, Callable[[float], str]]] = {
    "df_model_": ("df model", lambda v: f"{v:.0f}"),
    "df_resid_": ("df residuals", lambda v: f"{v:.0f}"),
    "scale_": ("scale (dispersion)", lambda v: f"{v:.4g}"),
    "null_deviance_": ("null deviance", lambda v: f"{v:.2f}"),
    "pearson_chi2_": ("Pearson χ²", lambda v: f"{v:.2f}"),
    "alpha_": ("NB overdispersion α", lambda v: f"{v:.4g}"),
    "alpha_se_": ("α std. error", lambda v: f"{v:.2g}"),
}
_GLM_ORDER = ("n_obs_", "df_model_", "df_resid_", "scale_", "deviance_", "null_deviance_",
              "pearson_chi2_", "log_likelihood_", "null_log_likelihood_", "aic_", "bic_",
              "alpha_", "alpha_se_")
_GLM_STATISTICS = [(a, *_GLM_OWN[a]) if a in _GLM_OWN else
                   next(entry for entry in _STATISTICS if entry[0] == a) for a in _GLM_ORDER]


def glm_statistics(est: Any, family: str, link: str) -> list[tuple[str, str]]:
    """statsmodels' GLM header of a fitted GLM regressor: family, link, degrees of
    freedom, scale, deviance, Pearson χ² (with χ²/df where the dispersion is fixed at 1,
    above 1 for overdispersed data), log-likelihood, AIC, BIC (and NB's alpha)."""
    out = [("family", family), ("link", link), *_present(est, _GLM_STATISTICS)]
    if not getattr(est, "scale_estimated_", True) and est.df_resid_ > 0:
        out.append(("Pearson χ² / df", f"{est.pearson_chi2_ / est.df_resid_:.3g}"))
    return out + model_statistics(est, [])  # (the iterations and convergence)


def _present(est: Any, statistics: list[tuple[str, str, Callable[[float], str]]]
             ) -> list[tuple[str, str]]:
    """``(label, value)`` of the ``statistics`` that ``est`` has (not NaN)."""
    out = []
    for attr, label, fmt in statistics:
        v: Any = getattr(est, attr, None)
        if _is_number(v) and np.isfinite(float(v)):
            out.append((label, fmt(float(v))))
    return out


def model_statistics(est: Any, statistics: list[tuple[str, str, Callable[[float], str]]]
                     | None = None) -> list[tuple[str, str]]:
    """``(label, value)`` of the fit statistics ``est`` has (``log_likelihood_``,
    ``aic_``, ``pseudo_r2_``, ``r2_``, ..., MCMC diagnostics), skipping missing and NaN
    ones (AIC of a penalised fit); ``statistics``: the attributes to look for
    (default: every model's), the iterations and MCMC diagnostics follow."""
    out = _present(est, _STATISTICS if statistics is None else statistics)
    n_iter = getattr(est, "n_iter_", None)
    if n_iter is not None and np.size(n_iter) == 1:
        out.append(("iterations", f"{int(np.max(n_iter))}"))
    if isinstance(getattr(est, "converged_", None), (bool, np.bool_)):
        out.append(("converged", "yes" if est.converged_ else "no"))
    samples = getattr(est, "samples_", None)
    if samples is not None:
        chains, draws = np.shape(samples)[:2]
        out.append(("MCMC", f"{chains} chains × {draws} draws"))
        for attr, label, fmt in (("rhat_", "max R-hat", lambda a: f"{np.max(a):.3f}"),
                                 ("ess_", "min ESS", lambda a: f"{np.min(a):.0f}"),
                                 ("acceptance_rate_", "acceptance", lambda a: f"{a:.2f}")):
            v = getattr(est, attr, None)
            if v is not None:
                out.append((label, fmt(np.asarray(v, dtype=np.float64))))
    return out
