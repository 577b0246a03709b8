"""After a GLM fit: covariance, identifiability, separation and convergence.

Each ill-posed case gets a usable model and one clear warning of problin's
own class; nothing here changes the fitted coefficients. The covariance and the
parameters it cannot identify are :mod:`problin.glm._covariance`'s; here are what the
fit may afford (the information matrix, L-BFGS's memory) and the classifiers'
separation check.
"""
import os
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import cho_factor, cho_solve

from .._core.model.contract import Objective, RowsAtHand
from .._core.solvers.quasi_newton import MAX_PAIRS, MIN_PAIRS, history_size, lbfgs_memory
from .._core.model.separation import (
    LP_MAX_SIZE,
    certified_separation,
    separated_rows,
)
from ..exceptions import ConvergenceWarning, SeparationWarning, warn_at_caller
from .._core.solvers.steps import SolverResult
from ._covariance import covariance, unidentified_held
from ._gaussian_prior import penalised
from .inference import parameter_names
from .problem import ClassifierProblem

__all__ = [
    "Diagnosis",
    "available_memory",
    "check_fits_in_memory",
    "lbfgs_budget",
    "lbfgs_pairs",
    "diagnose",
    "hessian_affordable",
    "watch_fit",
]

# A fitted row whose loss is below this is fitted with probability ~1: a
# sign that some coefficients are running off to infinity (separation).
_SUSPICIOUS_LOSS = 1e-7
# fit builds the full information matrix (for covariance_) only if it costs at
# most this many multiply-adds (n p^2 / 2: about half a second here) and has
# at most 2000 parameters (32 MB, factored in well under a second). Beyond,
# compute_covariance(X, y) builds it on request.
_HESSIAN_BUDGET = 1e10
_COVARIANCE_MAX_PARAMS = 2000
# L-BFGS fits needing less than this are not checked against the free memory.
_UNCHECKED_BYTES = 256 * 2**20


class Diagnosis(NamedTuple):
    """What :func:`diagnose` found: the covariance (None where too costly), which
    parameters are identified, the separated rows (None if not separated) and the
    covariance in the solver's coordinates."""

    covariance: NDArray[np.float64] | None
    identified: NDArray[np.bool_] | None
    separated: Any
    covariance_standard: NDArray[np.float64] | None = None
    theta: NDArray[np.float64] | None = None  # the optimum with unidentified ones at 0
    firth_separated: bool = False  # Firth's fit proves the classes (quasi-)separated


def hessian_affordable(n_samples: int, n_params: int) -> bool:
    """Whether fit may build the full n-row p x p information matrix."""
    return n_params <= _COVARIANCE_MAX_PARAMS and n_samples * n_params**2 / 2 <= _HESSIAN_BUDGET


_MEMINFO = "/proc/meminfo"


def available_memory() -> float:
    """Bytes that can be allocated without swapping: Linux's ``MemAvailable``, less
    where this process's address-space limit (``ulimit -v``) leaves less room.

    Not ``SC_AVPHYS_PAGES`` (``MemFree``), which leaves out the page cache that the
    kernel drops on demand: on a machine that has read files, it is a fraction of what
    is available (it refused 6 GB with 23.8 GB available). ``sysconf`` is the fallback
    where there is no ``/proc/meminfo`` (or no ``MemAvailable`` in it: Linux < 3.14);
    infinity where neither answers (not POSIX)."""
    return min(_system_available(), _address_space_left())


def _system_available() -> float:
    try:
        with open(_MEMINFO) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the value is in kB (KiB)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return np.inf


def _address_space_left() -> float:
    """``RLIMIT_AS`` less the address space in use (``VmSize``): what an allocation may
    still take under ``ulimit -v`` (a MemoryError beyond it, however much RAM is free);
    infinity without a limit or where it cannot be read."""
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit == resource.RLIM_INFINITY or limit < 0:
            return np.inf
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) * 1024 for line in fh
                        if line.startswith("VmSize:"))
        return float(max(limit - used, 0))
    except (ImportError, OSError, ValueError, IndexError, StopIteration):
        return np.inf


def lbfgs_pairs(objective: Objective, rows: int) -> int:
    """How many curvature pairs L-BFGS may store (:func:`~problin._core.solvers.quasi_newton.history_size`
    within half the available memory), checked before anything is allocated.

    Raises ``MemoryError`` stating the estimate (:func:`~problin._core.solvers.quasi_newton.lbfgs_memory`)
    where even the fewest pairs do not fit: a 10,000 x 1,000,000 sparse softmax with
    K = 50 has 49 million parameters, 0.4 GB a vector, and failed mid-fit (or crashed
    inside scipy) after allocating several GB. ``rows``: the rows in memory, which the
    gradient's working vectors span (0 on Dask, whose rows stay in their chunks)."""
    return lbfgs_budget(objective.n_params, rows, objective.n_blocks)


def lbfgs_budget(p: int, rows: int, blocks: int) -> int:
    """:func:`lbfgs_pairs` for ``p`` parameters in ``blocks`` blocks over ``rows`` rows
    in memory (0 on Dask), before the objective exists: its prior and start vectors
    are themselves parameter-sized (0.4 GB each at 49 million parameters)."""
    if lbfgs_memory(p, rows, blocks) <= _UNCHECKED_BYTES:  # (no meminfo read on small fits)
        return MAX_PAIRS
    free = available_memory()
    pairs = history_size(p, rows, blocks, 0.5 * free)
    if pairs is None:
        need = lbfgs_memory(p, rows, blocks, MIN_PAIRS)
        raise MemoryError(f"fitting {p:,} parameters by L-BFGS needs at least {need / 1e9:.1f} "
                          f"GB ({MIN_PAIRS} curvature pairs and the gradient's working "
                          f"vectors, {8 * p / 1e9:.2f} GB each), but only {free / 1e9:.1f} GB "
                          "of memory is available (at most half is used): fewer features or "
                          "classes, or a machine with more memory")
    return pairs


def check_fits_in_memory(n_params: int) -> None:
    """Raise ``MemoryError`` if three p x p float64 matrices exceed half the available
    memory (:func:`available_memory`)."""
    need = 3 * 8 * n_params * n_params
    free = available_memory()
    if need > 0.5 * free:
        raise MemoryError(f"the {n_params} x {n_params} information matrix needs "
                          f"{need / 1e9:.1f} GB with its factor and inverse, but only "
                          f"{free / 1e9:.1f} GB of memory is available")


def diagnose(est: Any, problem: ClassifierProblem, result: SolverResult) -> Diagnosis:
    """Covariance, identifiability, separation and convergence checks of ``est``'s fit
    (which reads ``est``'s parameters and names, and warns; it sets nothing)."""
    objective = problem.objective
    cov = identified = cov_z = None
    H: NDArray[np.float64] | None = None
    if result.hessian is not None or hessian_affordable(objective.design.n_samples,
                                                        objective.n_params):
        H = result.hessian
        if not objective.penalty.exact_hessian:
            # (Firth: the engine's is the augmented information, logistf's, to 1e-6 in
            # its own metric at the answer; its float32 or missing one is formed anew)
            with objective.penalty.reported_curvature() as stepped_otherwise:
                if H is None or stepped_otherwise:
                    H = objective.value_grad_hess(result.theta, result.eta)[2]
        elif H is None or not objective.exact_hessian:
            H = objective.observed_hessian(result.theta, result.eta)
        cov, identified, cov_z = covariance(objective, H)
    separated = _check_separation(est, problem, result, cov_z)
    # Under separation the information matrix degenerates for that reason
    # alone: the separation warning says it all.
    theta = None
    if identified is not None and separated is None and H is not None:
        theta = unidentified_held(est, lambda: _flat_names(est, problem), result.theta, H,
                                   identified)
    if not result.converged and separated is None:
        warn_at_caller(f"{type(est).__name__} did not converge in {result.n_iter} iterations "
                       f"({result.message}); increase max_iter or tol.", ConvergenceWarning)
    return Diagnosis(cov, identified, separated, cov_z, theta,
                     _firth_separated(est, problem, result))


def _firth_separated(est: Any, problem: ClassifierProblem, result: SolverResult) -> bool:
    """Whether the classes are (quasi-)separated, so that the maximum-likelihood estimates
    do not exist, for the summary's note (no warning: Firth's estimates are finite).

    In memory, per split (the binary one; each class against the rest for softmax):
    Firth's fitted margins where they separate (complete separation, no LP); else,
    where the exact LP is affordable, overlap where one Newton step of the likelihood
    from Firth's fit proves it (a Gram and two passes, Stiemke's certificate: the usual
    verdict on overlapping data), else the LP (quasi-separation, which Firth's margins
    never show: logistf's ``endometrial`` and ``sex2``). On Dask the fitted margins'
    certificate alone (two passes; none for softmax)."""
    objective = problem.objective
    if objective.penalty.exact_hessian:
        return False
    if not problem.rows.rows_in_memory:
        return objective.separation(replace(result, direction=None)) is not None
    memory = problem.in_memory()
    sw, design = memory.sample_weight, memory.design
    targets = problem.family.separation_splits(problem.rows.targets(), est.classes_)
    margins = problem.family.certificate_margins(result.eta, lambda: None)
    if any(certified_separation(m, y01, sw) is not None
           for y01 in targets.values() for m in margins):
        return True
    if design.n_samples * design.n_params > LP_MAX_SIZE:
        return False  # (no LP to spare: the note is left out, not wrongly given)
    if _likelihood_overlap(problem, result):
        return False  # (the LP's verdict for the price of a Gram: saves it on most data)
    return any(bool(separated_rows(design, y01, sw).any()) for y01 in targets.values())


def _likelihood_overlap(problem: ClassifierProblem, result: SolverResult) -> bool:
    """Whether one Newton step of the (unpenalised) likelihood from a fit's point proves
    the classes overlap (the family's ``newton_overlap``, a binary GLM's; Stiemke's
    certificate holds at any point, the step being the exact one of the curvatures
    ``h`` it is checked with); False where the curvature's Gram is singular."""
    memory = problem.in_memory()
    design = memory.design
    eta = result.eta if problem.offset is None else result.eta + problem.offset

    def step(g: NDArray[np.float64], h: NDArray[np.float64]) -> NDArray[np.float64]:
        factor = cho_factor(design.gram(h), lower=True, check_finite=False)
        return memory.linear_predictor(-cho_solve(factor, design.rmatvec(g)))

    try:
        return problem.family.newton_overlap(problem.rows.targets(), eta,
                                             memory.sample_weight, step)
    except np.linalg.LinAlgError:
        return False


def covariance_on_request(est: Any, problem: ClassifierProblem, fit: Any
                          ) -> tuple[Any, Any]:
    """``compute_covariance``'s ``(fit, eta)``: the ``GLMFit`` with its covariance at the
    fitted parameters and, as the fit's :func:`diagnose` does, the parameters that are
    not identified held at 0 (not under separation, whose warning says it all)."""
    objective = problem.objective
    basis = objective.design.basis
    theta = fit.theta_standard if basis is not None else fit.theta
    eta = objective.linear_predictor(theta)
    H = objective.observed_hessian(theta, eta)
    cov, identified, cov_z = covariance(objective, H)
    fit = fit.replace(covariance=cov, identified=identified, covariance_standard=cov_z)
    held = None if fit.separated is not None else unidentified_held(
        est, lambda: _flat_names(est, problem), theta, H, identified)
    if held is not None:
        raw = held if basis is None else basis.to_raw(held)
        fit = fit.replace(theta=np.array(raw, dtype=np.float64), theta_standard=held)
        eta = objective.linear_predictor(held)
    return fit, eta


def _flat_names(est: Any, problem: ClassifierProblem) -> list[str]:
    """The parameters' names, in the order of theta (``class:name`` per class block)."""
    objective = problem.objective
    names = parameter_names(est, objective.design.n_features)
    labels = problem.family.block_labels(est.classes_, objective.n_blocks)
    return [n if c is None else f"{c}:{n}" for c in labels for n in names]


def watch_fit(objective: Objective) -> None:
    """Let the objective count the rows fitted with certainty in its final pass, where
    it reads every row anyway (a Dask objective: saves the diagnostics a pass)."""
    objective.watch_rows(_certain_rows)


def _fitted_with_certainty(objective: Objective, eta: Any) -> bool:
    """Whether some row's observed class is fitted with probability ~1 (in memory, one
    test of the rows; on Dask the same test on every chunk, in one distributed pass)."""
    return objective.count_rows(_certain_rows, eta) > 0


def _certain_rows(objective: RowsAtHand, eta: NDArray[np.float64]) -> bool:
    """Whether some row of an in-memory objective is fitted with certainty.

    Read off the derivatives at the fit (already computed there) by the family
    (``row_certainty``): for a binary GLM ``|g_i| / s_i`` is ``1 - p_i`` (logit) or
    the inverse Mills ratio (probit), both ~0 exactly when ``p_i ~ 1``; for softmax
    the exact complement of the observed class's probability.
    """
    sw = objective.sample_weight
    certain = objective.row_certainty(eta) < _SUSPICIOUS_LOSS
    if sw is not None:
        certain &= sw > 0
    return bool(certain.any())


def _check_separation(est: Any, problem: ClassifierProblem, result: SolverResult,
                      cov_z: NDArray[np.float64] | None = None) -> Any:
    """The separated rows (None if none), with a warning, when the classes are
    (quasi-)separable."""
    objective = problem.objective
    if penalised(est) or not objective.penalty.exact_hessian:  # (Firth's estimates are finite)
        return None
    if result.converged and not _fitted_with_certainty(objective, result.eta):
        return None
    if result.converged and _overlap_certified(problem, result, cov_z):
        return None
    if not problem.rows.rows_in_memory:  # rows never in one place: the fit's certificates
        certified = objective.separation(result)
        if certified is None:
            return None
        rows, n_sep, n_used = certified
        _warn_separation(est, rows, n_sep, n_used, [None])
        return rows
    sw = objective.sample_weight
    targets = problem.family.separation_splits(problem.rows.targets(), est.classes_)
    rows = np.zeros(objective.design.n_samples, dtype=bool)
    which: list[Any] = []
    for label, y01 in targets.items():
        found = _separated(problem, result, y01)
        if found is not None and found.any():
            rows |= found
            which.append(label)
    n_sep = int(rows.sum())
    if n_sep == 0:
        return None
    n_used = rows.size if sw is None else int(np.count_nonzero(sw))
    _warn_separation(est, rows, n_sep, n_used, which)
    return rows


def _overlap_certified(problem: ClassifierProblem, result: SolverResult,
                       cov_z: NDArray[np.float64] | None) -> bool:
    """Whether one Newton step from a converged binary fit proves the classes overlap
    (the family's ``newton_overlap``): one pass over the rows instead of a linear
    program of the size of X."""
    if cov_z is None or not problem.rows.rows_in_memory or not problem.objective.penalty.flat \
            or not np.all(np.isfinite(cov_z)):
        return False
    objective = problem.in_memory()
    if objective.design.n_samples * objective.design.n_params > LP_MAX_SIZE:
        return False  # no LP to spare there: the cheap certificates decide (two passes saved)
    eta = result.eta if problem.offset is None else result.eta + problem.offset
    return problem.family.newton_overlap(  # (the step's linear predictor for g)
        problem.rows.targets(), eta, objective.sample_weight,
        lambda g, h: objective.linear_predictor(-(cov_z @ objective.design.rmatvec(g))))


def _warn_separation(est: Any, rows: Any, n_sep: int, n_used: int, which: list[Any]) -> None:
    """The separation warning (``rows``: those fitted with certainty)."""
    kind = "completely" if n_sep == n_used else "quasi-completely"
    if which == [None]:
        what = (f"the classes are {kind} separated: {n_sep} of {n_used} samples are fitted "
                "with probability 0 or 1")
    else:
        labels = ", ".join(str(np.asarray(c).tolist()) for c in which)
        what = (f"class {labels} is {kind} separated from the other classes (one against "
                f"the rest): its probability is fitted as 0 or 1 on {n_sep} of {n_used} samples")
    warn_at_caller(f"{what}, and the maximum-likelihood coefficients do "
                   "not exist (they diverge). The returned coefficients are finite because the "
                   "iteration stopped; set alpha > 0 for a well-defined fit.", SeparationWarning)


def _separated(problem: ClassifierProblem, result: SolverResult,
               y01: NDArray[np.float64]) -> NDArray[np.bool_] | None:
    """Separated rows for one binary split: a certificate first, the exact LP if affordable."""
    objective = problem.objective
    sw, design = objective.sample_weight, objective.design
    for margins in problem.family.certificate_margins(
            result.eta, lambda: _direction_eta(objective, result)):
        found = certified_separation(margins, y01, sw)
        if found is not None:
            return found
    if design.n_samples * design.n_params > LP_MAX_SIZE:
        return None
    return separated_rows(design, y01, sw)


def _direction_eta(objective: Objective, result: SolverResult) -> NDArray[np.float64] | None:
    """``X d`` of the solver's last direction ``d`` (None without one)."""
    if result.direction is None:
        return None
    Xd = getattr(result, "direction_eta", None)
    return objective.linear_predictor(result.direction) if Xd is None else Xd
