"""The header of each estimator family's text summary: which statistics, in what order.

One explicit list per family (no probing of what a model has): the GLM classifiers
(McFadden's pseudo R², the likelihood-ratio test against the intercept-only model),
least squares (R², the F test, the condition number) and the Bayesian posteriors
(the inference method and the log evidence). Statistics that are NaN (AIC, BIC and the
LR test of a penalised fit) are left out of the header.
"""
import math
from typing import Any

import pandas as pd

from .text import SummaryText, format_p, format_summary, format_value

__all__ = ["SummaryText", "glm_regression_summary_text", "glm_summary_text",
           "linear_summary_text", "posterior_summary_text"]

_COV_NOTES = {
    "nonrobust": "Standard errors assume that the model is correctly specified.",
    "HC0": "Standard errors are heteroscedasticity robust (HC0, White 1980).",
    "HC1": "Standard errors are heteroscedasticity robust (HC1, n/(n-k) scaled).",
    "HC2": "Standard errors are heteroscedasticity robust (HC2, leverage scaled).",
    "HC3": "Standard errors are heteroscedasticity robust (HC3, MacKinnon & White 1985).",
    "cluster": "Standard errors are cluster robust (Cameron & Miller 2015).",
}
_LINKS = {"LogisticRegression": "logit", "ProbitRegression": "probit"}


def _rows(items: list[tuple[str, Any, str]]) -> list[tuple[str, str]]:
    """``(label, value)`` pairs, formatted (``"p"``: a p-value), NaN or None left out."""
    out = []
    for label, value, kind in items:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        out.append((label, format_p(value, 4) if kind == "p" else format_value(value)))
    return out


def _cov_type(model: Any) -> str:
    return str(model.get_params().get("cov_type", "nonrobust"))


#: The "Method" of the penalised-likelihood fits that take no alpha.
_PENALTY_METHODS = {"firth": "Firth", "flic": "FLIC", "flac": "FLAC",
                    "gaussian": "MAP, Gaussian prior"}
#: How a model's own Gaussian prior (``prior_mean``/``prior_precision``) is named.
_RAW_PRIOR = "N(prior_mean, prior_precision^-1) on the raw [intercept, coef...]"


def _raw_prior(model: Any) -> bool:
    """Whether ``model`` was given a Gaussian prior of its own (``prior_mean`` or
    ``prior_precision``: the texts' prior on the raw parameters)."""
    params = model.get_params(deep=False)
    return params.get("prior_mean") is not None or params.get("prior_precision") is not None


def glm_summary_text(model: Any, table: pd.DataFrame) -> SummaryText:
    """The summary of a fitted GLM classifier (``LogisticRegression``,
    ``ProbitRegression``) above its ``summary()`` table ``table``: the fit (method,
    covariance, convergence) and its likelihood statistics, as statsmodels'
    ``Logit(...).fit().summary()`` shows them (McFadden 1974 pseudo R²; the LR test of
    all slopes, Greene, *Econometric Analysis*, 8th ed., §14.9.1)."""
    name = type(model).__name__
    alpha = float(model.alpha)
    multi = isinstance(table.index, pd.MultiIndex)
    link = "softmax" if multi else _LINKS.get(name, "")
    method = _PENALTY_METHODS.get(model._result.penalty_name,
                                  "MLE" if alpha == 0 else f"MAP, alpha={alpha:g}")
    cov_type = _cov_type(model)
    left = _rows([("Model", f"{name} ({link})" if link else name, ""),
                  ("Method", method, ""), ("Covariance", cov_type, ""),
                  ("Converged", bool(table.attrs.get("converged", True)), ""),
                  ("Iterations", table.attrs.get("n_iter"), ""),
                  ("AIC", model.aic_, ""), ("BIC", model.bic_, ""),
                  ("Deviance", model.deviance_, "")])
    right = _rows([("No. Observations", model.n_obs_, ""), ("Df Residuals", model.df_resid_, ""),
                   ("Df Model", model.df_model_, ""), ("Log-Likelihood", model.log_likelihood_, ""),
                   ("LL-Null", model.null_log_likelihood_, ""),
                   ("Pseudo R-squ.", model.pseudo_r2_, ""),
                   ("LR statistic", model.lr_statistic_, ""),
                   ("LLR p-value", model.lr_pvalue_, "p")])
    notes = [_COV_NOTES.get(cov_type, f"Covariance type {cov_type}.")]
    if alpha > 0 or _raw_prior(model):
        what = f"alpha={alpha:g}" if alpha > 0 else f"Gaussian prior {_RAW_PRIOR}"
        notes.append(f"Penalised fit ({what}): standard errors are those of the "
                     "Laplace posterior around the MAP estimate; log-likelihood, deviance and "
                     "pseudo R-squared at the MAP estimate; AIC, BIC and LR test omitted.")
    if model._result.firth_separated:
        notes.append("The data are (quasi-)separated: maximum-likelihood estimates do not "
                     "exist; Firth's are finite.")
    notes += [table.attrs[key] for key in ("ci_note", "pvalue_note") if key in table.attrs]
    if multi:
        notes.append("Softmax: one block of parameters per class shown (the contrasts "
                     "against the first class when alpha=0); wald_test names them "
                     "'class:parameter'.")
    return format_summary(f"{name} results", left, right, table, notes)


#: Pearson's chi² per residual degree of freedom above which a fit whose dispersion is
#: fixed at 1 is said to be overdispersed (a rule of thumb: Hilbe 2011, §7.2).
OVERDISPERSION_RATIO = 1.5


def glm_regression_summary_text(model: Any, table: pd.DataFrame, family: str, link: str,
                                estimated: bool) -> SummaryText:
    """The summary of a fitted GLM regressor above its ``summary()`` table ``table``:
    statsmodels' ``GLM(...).fit().summary()`` header (family, link, deviance,
    Pearson chi², scale, log-likelihood, AIC, BIC, degrees of freedom). ``estimated``:
    whether the family's dispersion is estimated (else fixed at 1), for the notes:
    t statistics where it is estimated; a fit with a fixed dispersion whose Pearson
    chi² per residual degree of freedom exceeds 1.5 is flagged as overdispersed."""
    name = type(model).__name__
    alpha = float(model.alpha)
    cov_type = _cov_type(model)
    left = _rows([("Model", name, ""), ("Family", family, ""), ("Link", link, ""),
                  ("Method", _PENALTY_METHODS["gaussian"] if _raw_prior(model) else
                   "IRLS/Newton" if alpha == 0 else f"MAP, alpha={alpha:g}", ""),
                  ("Covariance", cov_type, ""),
                  ("Converged", bool(table.attrs.get("converged", True)), ""),
                  ("Iterations", table.attrs.get("n_iter"), ""),
                  ("No. Observations", model.n_obs_, "")])
    right = _rows([("Df Residuals", model.df_resid_, ""), ("Df Model", model.df_model_, ""),
                   ("Scale", model.scale_, ""), ("Log-Likelihood", model.log_likelihood_, ""),
                   ("Deviance", model.deviance_, ""), ("Pearson chi2", model.pearson_chi2_, ""),
                   ("AIC", model.aic_, ""), ("BIC", model.bic_, "")])
    notes = [_COV_NOTES.get(cov_type, f"Covariance type {cov_type}.")]
    for pname, value, se in model.extra_parameters():  # (the negative binomial's alpha)
        notes.append(f"{family} {pname} = {format_value(value)}"
                     + ("" if not math.isfinite(se) else f" (std err {format_value(se)})")
                     + ".")
    notes += [table.attrs[key] for key in ("ci_note", "pvalue_note") if key in table.attrs]
    source = table.attrs.get("dispersion")  # (how scale_ was found, where the model says)
    if table.attrs.get("statistic") == "t":
        notes.append(f"t statistics on {format_value(model.df_resid_)} degrees of freedom: "
                     f"the dispersion is estimated{f' by {source}' if source else ''} "
                     f"(scale {format_value(model.scale_)}).")
    elif source == "the value given":
        notes.append(f"The dispersion is given (scale {format_value(model.scale_)}): z "
                     "statistics.")
    ratio = model.pearson_chi2_ / model.df_resid_ if model.df_resid_ > 0 else math.nan
    if not estimated and ratio > OVERDISPERSION_RATIO:
        notes.append(f"Overdispersion: Pearson chi2 / df = {ratio:.3g} (> "
                     f"{OVERDISPERSION_RATIO:g}); the {family} variance understates the "
                     "data's and the standard errors are too small. Consider scale='X2', "
                     "cov_type='HC0' or a negative binomial model.")
    boundary = int(table.attrs.get("boundary_rows", 0))
    if boundary:
        notes.append(f"{boundary} rows are fitted at the boundary of the mean's range (zero "
                     "counts, proportions of 0 or 1) by coefficients that diverge: the "
                     "maximum-likelihood estimates do not exist, and the standard errors of "
                     "the coefficients that isolate those rows are meaningless.")
    if alpha > 0 or _raw_prior(model):
        what = f"alpha={alpha:g}" if alpha > 0 else f"Gaussian prior {_RAW_PRIOR}"
        notes.append(f"Penalised fit ({what}): AIC and BIC omitted.")
    return format_summary(f"{name} results", left, right, table, notes)


def linear_summary_text(model: Any, table: pd.DataFrame) -> SummaryText:
    """The summary of a fitted ``LinearRegression`` (``alpha = 0``, one output) above
    its ``summary()`` table: statsmodels' ``OLS(...).fit().summary()`` statistics
    (Greene, *Econometric Analysis*, 8th ed., §3.5 and §5.3)."""
    name = type(model).__name__
    cov_type = str(table.attrs.get("cov_type", _cov_type(model)))
    left = _rows([("Model", name, ""), ("Method", "Least Squares", ""),
                  ("Covariance", cov_type, ""), ("No. Observations", model.n_obs_, ""),
                  ("Df Residuals", model.df_resid_, ""), ("Df Model", model.df_model_, ""),
                  ("Cond. No.", model.condition_number_, "")])
    right = _rows([("R-squared", model.r2_, ""), ("Adj. R-squared", model.adj_r2_, ""),
                   ("F-statistic", model.f_statistic_, ""),
                   ("Prob (F-statistic)", model.f_pvalue_, "p"),
                   ("Log-Likelihood", model.log_likelihood_, ""), ("AIC", model.aic_, ""),
                   ("BIC", model.bic_, "")])
    notes = [_COV_NOTES.get(cov_type, f"Covariance type {cov_type}.")]
    if cov_type == "cluster":
        notes.append(f"t tests on {format_value(table.attrs.get('df'))} degrees of freedom "
                     "(clusters - 1).")
    if model.condition_number_ > 1e3:
        notes.append(f"The condition number is large ({model.condition_number_:.3g}): "
                     "strong collinearity, or columns on very different scales.")
    return format_summary(f"{name} results", left, right, table, notes)


def posterior_summary_text(model: Any, table: pd.DataFrame) -> SummaryText:
    """The summary of a fitted Bayesian model above its posterior table ``table``
    (``summary()``): the inference method, prior precision and log evidence (Bishop
    2006, §4.4.1 and §4.5) read from the table's attributes."""
    name = type(model).__name__
    attrs = table.attrs
    evidence = attrs.get("log_evidence")
    left = _rows([("Model", name, ""), ("Inference", attrs.get("inference"), ""),
                  ("No. Observations", attrs.get("n_obs"), "")])
    right = _rows([("Prior precision", attrs.get("alpha"), ""),
                   ("Log evidence", None if evidence is None else float(evidence), "")])
    level = float(attrs.get("level", 0.95))
    notes = [(f"Posterior mean, sd and central {100 * level:g}% credible intervals; "
              "P(opp.) is the posterior probability of the sign opposite to the mean.")]
    if _raw_prior(model):
        notes.append(f"Prior {_RAW_PRIOR}, its precision scaled by alpha (Bishop 2006, "
                     "eq. 4.140).")
    return format_summary(f"{name} posterior", left, right, table, notes)
