"""Average marginal effects, discrete changes, elasticities and effects at representative
values equal Stata's ``margins``/``margeff`` results shipped in statsmodels' test-result
modules (statsmodels/discrete/tests/results/results_discrete.py: Spector's logit, RandHIE's
Poisson, ANES's multinomial logit), to the printed precision: within one unit of the last
digit Stata printed, or within Stata's own convergence where it printed more digits than
its fit holds: 1e-6 relative (Stata's Spector logit parameters are up to 1.3e-7 from the
maximum likelihood, relative, where problin and statsmodels' Newton agree to 1e-15; the
effects carry that to a few 1e-7); for ANES 3e-7 absolute (Stata's mlogit parameters are
6e-7 from it; statsmodels' converged effects differ from Stata's by up to 2.5e-7)."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.discrete.tests.results.results_discrete import Anes, RandHIE, Spector

from problin import LogisticRegression, PoissonRegression


def _assert_printed(ours, printed, rtol: float = 1e-6, atol: float = 0.0) -> None:
    """Each value within one unit of the last decimal Stata printed (the shipped float's
    shortest decimal form: the digits as printed, trailing zeros aside), or ``rtol``
    of it, or ``atol`` (Stata's convergence)."""
    ours = np.asarray(ours, dtype=float).ravel()
    printed = np.asarray(printed, dtype=float).ravel()
    for a, b in zip(ours, printed, strict=True):
        text = np.format_float_positional(b, trim="-")
        decimals = len(text.partition(".")[2])
        assert abs(a - b) <= max(10.0 ** -decimals, rtol * abs(b), atol), (a, b, decimals)


@pytest.fixture(scope="module")
def spector() -> tuple[pd.DataFrame, LogisticRegression]:
    data = sm.datasets.spector.load_pandas()
    X = data.exog[["GPA", "TUCE", "PSI"]].astype(float)
    return X, LogisticRegression(tol=1e-10).fit(X, data.endog)


def _both(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return table["estimate"].to_numpy(), table["std_err"].to_numpy()


@pytest.mark.parametrize("at", [None, "mean", "median"])
@pytest.mark.parametrize("slope", ["dydx", "eyex", "dyex", "eydx"])
def test_spector_logit_slopes_and_elasticities(spector, slope, at):
    """``margins, dydx(*)`` / ``eyex(*)`` / ``dyex(*)`` / ``eydx(*)``, averaged or
    ``atmeans`` / ``at((median) _all)``."""
    X, model = spector
    suffix = {None: "", "mean": "mean", "median": "median"}[at]
    name = f"margeff_nodummy_{slope}{suffix}"
    estimate, se = _both(model.slopes(X, slope=slope, at=at))
    if at == "median" and slope in ("eyex", "dyex"):
        # (PSI's median is 0: Stata reports 0 for an elasticity times x = 0)
        estimate, se = estimate[:2], se[:2]
        assert model.slopes(X, "PSI", slope=slope, at=at)["estimate"].iloc[0] == 0.0
    _assert_printed(estimate, getattr(Spector.logit, name)[:len(estimate)])
    _assert_printed(se, getattr(Spector.logit, name + "_se")[:len(se)])


def test_spector_logit_dummy_count_and_at_values(spector):
    """``i.psi``: PSI's discrete change 0 -> 1 (``change="minmax"``), averaged, at
    the means and at chosen values; ``margeff, count``: TUCE's change from x - 1 to
    x + 1, halved; Stata's ``at(gpa=2 psi=1)`` with the others as observed
    (the data with those columns set), ``at(tuce=21 psi=0 (mean) _all)`` (an ``at`` grid:
    the others at their means)."""
    X, model = spector
    ref = Spector.logit

    def dummy(data: pd.DataFrame, at=None, psi: float | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """GPA's and TUCE's slopes (PSI at ``psi`` where given), PSI's 0 -> 1."""
        slopes = model.slopes(data if psi is None else data.assign(PSI=psi),
                              ["GPA", "TUCE"], at=at)
        change = model.comparisons(data, "PSI", change="minmax", at=at)
        return _both(pd.concat([slopes, change]))

    for found, name in ((dummy(X), "dummy_dydx"), (dummy(X, "mean"), "dummy_dydxmean"),
                        (dummy(X.assign(GPA=2.0), psi=1.0), "dummy_atexog1"),
                        (dummy(X, {"TUCE": 21.0, "PSI": 0.0}), "dummy_atexog2")):
        _assert_printed(found[0], getattr(ref, f"margeff_{name}"))
        _assert_printed(found[1], getattr(ref, f"margeff_{name}_se"))
    _assert_printed(model.slopes(X.assign(GPA=2.0, PSI=1.0))["estimate"],
                    ref.margeff_nodummy_atexog1)
    _assert_printed(model.slopes(X, at={"TUCE": 21.0, "PSI": 0.0})["std_err"],
                    ref.margeff_nodummy_atexog2_se)
    # margeff, count: TUCE's centred change of 2, halved (mu(x + 1) - mu(x - 1)) / 2
    count = model.comparisons(X, "TUCE", change=2, hypothesis="0.5 * b1")
    _assert_printed(count["estimate"], ref.margeff_count_dummy_dydxoverall[1])
    _assert_printed(count["std_err"], ref.margeff_count_dummy_dydxoverall_se[1])
    count = model.comparisons(X, "TUCE", change=2, at="mean", hypothesis="0.5 * b1")
    _assert_printed(count["estimate"], ref.margeff_count_dummy_dydxmean[1])
    _assert_printed(count["std_err"], ref.margeff_count_dummy_dydxmean_se[1])


def test_randhie_poisson_average_effects_with_dummies():
    """``poisson ... i.idp ... i.hlthg i.hlthf i.hlthp; margins, dydx(*)``: the four
    indicators' discrete changes, the other columns' slopes (and all slopes without
    ``i.``)."""
    data = sm.datasets.randhie.load_pandas()
    X = data.exog.astype(float)
    model = PoissonRegression(tol=1e-10).fit(X, data.endog)
    dummies = ["idp", "hlthg", "hlthf", "hlthp"]
    slopes = model.slopes(X)
    changes = model.comparisons(X, dummies, change="minmax")
    table = pd.concat([changes.loc[[c]] if c in dummies else slopes.loc[[c]]
                       for c in X.columns])
    _assert_printed(table["estimate"], RandHIE.poisson.margeff_dummy_overall)
    _assert_printed(table["std_err"], RandHIE.poisson.margeff_dummy_overall_se)
    _assert_printed(slopes["estimate"], RandHIE.poisson.margeff_nodummy_overall)
    _assert_printed(slopes["std_err"], RandHIE.poisson.margeff_nodummy_overall_se)


def test_anes_multinomial_logit_effects_per_class():
    """``mlogit``; ``margins, dydx(*) predict(outcome(#))`` for each of the 7 outcomes,
    averaged and ``atmeans``; with ``i.vote``, vote's discrete change."""
    data = sm.datasets.anes96.load_pandas()
    X = data.exog.astype(float).assign(vote=data.data["vote"].astype(float))
    model = LogisticRegression(tol=1e-10).fit(X, data.endog)
    ref = Anes.mnlogit_basezero
    small = LogisticRegression(tol=1e-10).fit(X.drop(columns="vote"), data.endog)
    for at, name in ((None, "margeff_dydx_overall"), ("mean", "margeff_dydx_mean")):
        table = small.slopes(X.drop(columns="vote"), at=at)
        estimate = table["estimate"].to_numpy().reshape(7, 5).T  # (variable, class)
        _assert_printed(estimate, getattr(ref, name), atol=3e-7)
        _assert_printed(table["std_err"].to_numpy().reshape(7, 5).T,
                        getattr(ref, name + "_se"), atol=3e-7)
    slopes = model.slopes(X, list(X.columns[:5]))
    vote = model.comparisons(X, "vote", change="minmax")
    table = pd.concat([slopes, vote]).sort_index(level="class", sort_remaining=False)
    _assert_printed(table["estimate"].to_numpy().reshape(7, 6).T,
                    ref.margeff_dydx_dummy_overall, atol=3e-7)
    _assert_printed(table["std_err"].to_numpy().reshape(7, 6).T,
                    ref.margeff_dydx_dummy_overall_se, atol=3e-7)


@pytest.mark.parametrize("at", ["overall", "mean"])
def test_spector_equals_get_margeff_with_dummy_and_count(spector, at):
    """statsmodels' ``get_margeff(at=, method=, dummy=True, count=True)`` where it defines
    the effect as problin does: GPA's slope and ``eydx``, TUCE's count change
    (``change=2`` halved), PSI's 0 -> 1 (``dydx``; statsmodels' ``eydx`` of a dummy or a
    count is a difference of log predictions, which problin does not report; it refuses
    ``eyex``, ``dyex``, ``median`` and ``zero`` with discrete variables)."""
    X, model = spector
    data = sm.datasets.spector.load_pandas()
    fit = sm.Logit(data.endog, sm.add_constant(X, prepend=False)).fit(
        method="newton", disp=0, tol=1e-14)
    where = None if at == "overall" else at
    eydx = fit.get_margeff(at=at, method="eydx", dummy=True, count=True)
    gpa = model.slopes(X, "GPA", slope="eydx", at=where)
    np.testing.assert_allclose(_both(gpa), [eydx.margeff[:1], eydx.margeff_se[:1]],
                               rtol=1e-6)
    margeff = fit.get_margeff(at=at, dummy=True, count=True)
    gpa = model.slopes(X, "GPA", at=where)
    tuce = model.comparisons(X, "TUCE", change=2, at=where, hypothesis="0.5 * b1")
    psi = model.comparisons(X, "PSI", change="minmax", at=where)
    found = _both(pd.concat([gpa, tuce, psi]))
    np.testing.assert_allclose(found[0], margeff.margeff, rtol=1e-6)
    np.testing.assert_allclose(found[1], margeff.margeff_se, rtol=1e-6)
