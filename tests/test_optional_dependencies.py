"""Install what you use: problin works with its core dependencies only (issue 16, item 5).

``pip install problin`` installs numpy, SciPy, scikit-learn, pandas and threadpoolctl; the
rest comes with an extra (``cli``, ``formula``, ``report``, ``parquet``, ``dask``). Each
test here runs in a child interpreter in which a ``sys.meta_path`` finder makes the
optional packages unimportable, as in an environment where they are not installed:
``import problin``, every kind of estimator, model files and CSV work there and import
none of them, and each feature that needs an extra fails with one line naming it
(:class:`problin.MissingDependencyError`; on the command line ``Error: ...`` and exit
status 1).
"""
import json
import pathlib
import re
import subprocess
import sys
import textwrap
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
OPTIONAL = ("click", "tqdm", "formulaic", "matplotlib", "pyarrow", "dask", "distributed")
CORE = {"numpy", "scipy", "scikit-learn", "pandas", "threadpoolctl"}
# the extra that installs each optional package (what the messages name)
EXTRA_OF = {"click": "cli", "tqdm": "cli", "formulaic": "formula", "matplotlib": "report",
            "pyarrow": "parquet", "dask": "dask", "distributed": "dask"}

_PRELUDE = '''
import json, sys

class _NotInstalled:
    """Import hook: the optional packages cannot be imported, as if not installed."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

BLOCKED = __BLOCKED__
assert not [m for m in sys.modules if m.partition(".")[0] in BLOCKED], "imported at start-up"
sys.meta_path.insert(0, _NotInstalled(BLOCKED))

def loaded_optional():
    return sorted({m.partition(".")[0] for m in sys.modules} & set(BLOCKED))

def error_of(call):
    """``(type name, message)`` of what ``call()`` raises; None if it raises nothing."""
    try:
        call()
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None
'''


def run_child(code: str, *args: str, cwd: pathlib.Path,
              blocked: tuple[str, ...] = OPTIONAL) -> subprocess.CompletedProcess[str]:
    """``code`` in a child interpreter where the packages ``blocked`` are not importable."""
    script = _PRELUDE.replace("__BLOCKED__", repr(blocked)) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)


def child_json(code: str, cwd: pathlib.Path, blocked: tuple[str, ...] = OPTIONAL) -> dict:
    """Run ``code``, which prints one JSON object as its last line of stdout; return it."""
    done = run_child(code, cwd=cwd, blocked=blocked)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_one_line(message: str, package: str, what: str | tuple[str, ...] = "") -> None:
    """One line: ``<what> needs <package>: pip install 'problin[<extra>]'``."""
    extra = EXTRA_OF[package]
    assert "\n" not in message.strip(), message
    assert f"needs {package}: pip install 'problin[{extra}]'" in message, message
    assert message.startswith(what), message


# ----------------------------------------------------------------------------- the core
def test_core_works_without_any_extra(tmp_path):
    """Estimators of every family fit and predict, models save and load, a CSV file is
    read, and none of the optional packages is imported."""
    result = child_json('''
        import warnings
        import numpy as np
        import pandas as pd

        import problin
        from problin.bayesian import _fit
        from problin.io.readers import read_data

        after_import = loaded_optional()
        warnings.simplefilter("ignore")  # short MCMC runs may warn about R-hat
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 3))
        y = (X @ [1.0, -1.0, 0.5] + rng.normal(size=300) > 0).astype(int)
        y3 = np.digitize(X[:, 0] + 0.5 * rng.normal(size=300), [-0.5, 0.5])
        r = X @ [1.0, 2.0, -1.0] + 0.1 * rng.normal(size=300)
        fitted = {}
        classifiers = [problin.LogisticRegression(), problin.ProbitRegression(),
                       problin.LinearDiscriminantAnalysis(),
                       problin.QuadraticDiscriminantAnalysis(),
                       problin.GaussianDiscriminantAnalysis(), problin.FisherDiscriminant(),
                       problin.LeastSquaresClassifier(), problin.Perceptron(),
                       problin.GaussianNB(), problin.BernoulliNB(),
                       problin.BayesianLogisticRegression(inference="laplace")]
        for est in classifiers:
            for target in (y, y3) if not isinstance(est, (problin.ProbitRegression,
                                                          problin.FisherDiscriminant,
                                                          problin.BayesianLogisticRegression)) \\
                    else (y,):
                pred = est.fit(X, target).predict(X)
                fitted[type(est).__name__] = float(np.mean(pred == target))
        fitted["MultinomialNB"] = float(np.mean(
            problin.MultinomialNB().fit(np.abs(X), y3).predict(np.abs(X)) == y3))
        for est in (problin.LinearRegression(), problin.BayesianLinearRegression(),
                    problin.LMSRegressor()):
            fitted[type(est).__name__] = float(np.corrcoef(est.fit(X, r).predict(X), r)[0, 1])
        summary = str(problin.LogisticRegression().fit(X, y).summary())

        # MCMC through its progress-bar path: the bar is wanted at once, tqdm is missing
        asked = []
        real = _fit.optional_module
        _fit.optional_module = lambda name: asked.append(name) or real(name)
        _fit._PROGRESS_AFTER_S = 0.0
        mcmc = problin.BayesianLogisticRegression(inference="mcmc", n_samples=200,
                                                  n_chains=2, random_state=0).fit(X, y)
        fitted["mcmc"] = float(np.mean(mcmc.predict(X) == y))

        model = problin.LogisticRegression().fit(X, y)
        problin.save(model, "model.problin")
        loaded = problin.load("model.problin")
        same = bool(np.array_equal(loaded.predict_proba(X), model.predict_proba(X)))

        frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(
            kind=rng.choice(["x", "y"], 300), target=y)
        frame.to_csv("data.csv", index=False)
        ds = read_data("data.csv", "target")
        csv_fit = problin.LogisticRegression().fit(ds.X, ds.y)
        problin.save(csv_fit, "csv.problin", feature_names=ds.feature_names,
                     encoding=ds.encoding, target=ds.target)
        again = read_data("data.csv", encoding=problin.io.read_model_file("csv.problin").encoding)

        print(json.dumps({
            "after_import": after_import, "fitted": fitted, "summary": "coef" in summary,
            "progress_asked": asked, "same": same, "csv_features": ds.feature_names,
            "csv_again": bool(np.array_equal(np.asarray(again.X), np.asarray(ds.X))),
            "report": type(problin.report).__name__, "in_dir": "report" in dir(problin),
            "at_end": loaded_optional()}))
    ''', cwd=tmp_path)
    assert result["after_import"] == [] and result["at_end"] == []
    for name, score in result["fitted"].items():
        assert score > 0.45, (name, score)  # better than chance: the fit did something
    assert {"LogisticRegression", "ProbitRegression", "LinearDiscriminantAnalysis",
            "QuadraticDiscriminantAnalysis", "GaussianNB", "BernoulliNB", "MultinomialNB",
            "Perceptron", "LinearRegression", "BayesianLinearRegression", "LMSRegressor",
            "BayesianLogisticRegression", "mcmc"} <= set(result["fitted"])
    assert result["summary"] and result["same"] and result["csv_again"]
    assert result["progress_asked"] == ["tqdm.auto"]  # asked once, and no bar without it
    assert result["csv_features"] == ["a", "b", "c", "kind=y"]
    assert result["report"] == "module" and result["in_dir"]  # problin.report, lazily


def test_star_import_needs_no_extra(tmp_path):
    result = child_json('''
        from problin import *  # noqa: F403
        import problin
        print(json.dumps({"names": sorted(problin.__all__), "loaded": loaded_optional()}))
    ''', cwd=tmp_path)
    assert result["loaded"] == [] and "Formula" in result["names"]
    assert "MissingDependencyError" in result["names"]


# ---------------------------------------------------------------- a missing extra
@pytest.fixture
def formula_model(tmp_path):
    """A model file holding a formula, written where formulaic is installed."""
    pytest.importorskip("formulaic")
    import numpy as np
    import pandas as pd

    import problin
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=60), "g": rng.choice(["a", "b"], 60)})
    frame["y"] = (frame["x"] + rng.normal(size=60) > 0).astype(int)
    path = tmp_path / "formula.problin"
    problin.save(problin.Formula("y ~ x + C(g)", problin.LogisticRegression()).fit(frame),
                 path)
    return path


def test_each_extra_is_named_when_missing(tmp_path, formula_model):
    result = child_json('''
        import numpy as np
        import pandas as pd
        import problin
        from problin.io import read_dask
        from problin.io.readers import read_data

        pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0, 1, 0]}).to_csv("d.csv", index=False)
        open("d.parquet", "wb").close()  # never opened: pyarrow is asked for first
        errors = {
            "formula": error_of(lambda: problin.Formula("y ~ x", problin.LinearRegression())),
            "formula_load": error_of(lambda: problin.load("formula.problin")),
            "report": error_of(lambda: problin.report.build_report),
            "report_import": error_of(lambda: __import__("problin.report.plots")),
            "parquet": error_of(lambda: read_data("d.parquet", "y")),
            "dask_csv": error_of(lambda: read_dask("d.csv", "y")),
            "dask_parquet": error_of(lambda: read_dask("d.parquet", "y")),
        }
        caught = error_of(lambda: problin.Formula("y ~ x", None))
        is_import_error = False
        try:
            problin.Formula("y ~ x", None)
        except ImportError as exc:  # MissingDependencyError is an ImportError
            is_import_error = isinstance(exc, problin.MissingDependencyError) and \\
                (exc.package, exc.extra) == ("formulaic", "formula")
        print(json.dumps({"errors": errors, "is_import_error": is_import_error,
                          "loaded": loaded_optional()}))
    ''', cwd=formula_model.parent)
    errors = result["errors"]
    for key, (package, what) in {
            "formula": ("formulaic", "problin.Formula"),
            "formula_load": ("formulaic", "problin.Formula"),
            "report": ("matplotlib", ("problin.report", "problin.plot")),
            "report_import": ("matplotlib", ("problin.report", "problin.plot")),
            "parquet": ("pyarrow", "reading Parquet"),
            "dask_csv": ("dask", "problin.io.read_dask"),
            "dask_parquet": ("dask", "problin.io.read_dask")}.items():
        assert errors[key] is not None, key
        kind, message = errors[key]
        assert kind == "MissingDependencyError", (key, kind, message)
        assert_one_line(message, package, what)
    assert errors["formula"][1] == ("problin.Formula needs formulaic: "
                                    "pip install 'problin[formula]'")
    assert result["is_import_error"] and result["loaded"] == []


def test_parquet_without_pyarrow_when_dask_is_there(tmp_path):
    """The Dask reader with Dask installed but not pyarrow names the parquet extra."""
    pytest.importorskip("dask.array")
    result = child_json('''
        import dask.array
        from problin.io import read_dask
        open("d.parquet", "wb").close()
        print(json.dumps({"error": error_of(lambda: read_dask("d.parquet", "y"))}))
    ''', cwd=tmp_path, blocked=("pyarrow",))
    kind, message = result["error"]
    assert kind == "MissingDependencyError"
    assert_one_line(message, "pyarrow", "reading Parquet")


def test_plot_without_matplotlib(tmp_path):
    package = ROOT / "src" / "problin" / "plot"
    if not (package / "__init__.py").exists() and not package.with_suffix(".py").exists():
        pytest.skip("problin.plot is not written yet")
    result = child_json('''
        import problin
        print(json.dumps({"error": error_of(lambda: problin.plot)}))
    ''', cwd=tmp_path)
    assert result["error"] is not None
    kind, message = result["error"]
    assert kind == "MissingDependencyError", message
    assert_one_line(message, "matplotlib")


# ------------------------------------------------------------------ the command line
@pytest.mark.slow
def test_command_line_without_click(tmp_path):
    """``python -m problin`` and the console script's function: one line, exit 1."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["problin"].partition(":")
    expected = "problin's command line needs click: pip install 'problin[cli]'"
    python_m = ('import runpy; sys.argv = ["problin", *sys.argv[1:]]; '
                'runpy.run_module("problin", run_name="__main__", alter_sys=True)')
    console_script = (f'import importlib; sys.argv = ["problin", *sys.argv[1:]]; '
                      f'importlib.import_module({module!r}).{function}()')
    for code in (python_m, console_script):
        for args in ((), ("fit", "data.csv", "--target", "y"), ("--help",)):
            done = run_child(code, *args, cwd=tmp_path)
            assert done.returncode == 1, done.stderr
            assert done.stderr == expected + "\n"
            assert done.stdout == ""


def test_command_line_names_each_missing_extra(tmp_path, formula_model):
    """With click, each command that needs another extra stops with ``Error: ...`` in one
    line and exit status 1."""
    pytest.importorskip("click")
    result = child_json('''
        import numpy as np
        import pandas as pd
        from click.testing import CliRunner
        from problin.cli.main import cli

        rng = np.random.default_rng(0)
        x = rng.normal(size=80)
        pd.DataFrame({"x": x, "g": rng.choice(["a", "b"], 80),
                      "y": (x + rng.normal(size=80) > 0).astype(int)}).to_csv("d.csv",
                                                                            index=False)
        open("d.parquet", "wb").close()
        runs = {
            "fit": ["fit", "d.csv", "-t", "y", "-m", "logistic", "-o", "m.problin"],
            "report": ["report", "m.problin", "d.csv", "-o", "r.html"],
            "parquet": ["fit", "d.parquet", "-t", "y", "-m", "logistic", "-o", "p.problin"],
            "formula": ["fit", "d.csv", "-m", "logistic", "-f", "y ~ x + C(g)", "-o",
                        "f.problin"],
            "formula_predict": ["predict", "formula.problin", "d.csv"],
            "dask": ["fit", "d.csv", "-t", "y", "-m", "logistic", "--engine", "dask",
                     "-o", "k.problin"],
            "write_parquet": ["predict", "m.problin", "d.csv", "--out", "out.parquet"],
        }
        out = {}
        for key, args in runs.items():
            run = CliRunner().invoke(cli, args)
            out[key] = [run.exit_code, run.stderr, repr(run.exception)
                        if not isinstance(run.exception, SystemExit) else None]
        print(json.dumps({"runs": out, "loaded": loaded_optional()}))
    ''', cwd=formula_model.parent, blocked=tuple(p for p in OPTIONAL if p != "click"))
    runs = result["runs"]
    assert runs["fit"][0] == 0, runs["fit"]
    for key, package in {"report": "matplotlib", "parquet": "pyarrow", "formula": "formulaic",
                         "formula_predict": "formulaic", "dask": "dask",
                         "write_parquet": "pyarrow"}.items():
        code, stderr, exception = runs[key]
        assert (code, exception) == (1, None), (key, runs[key])
        assert stderr.startswith("Error: ") and stderr.count("\n") == 1, (key, stderr)
        assert re.search(rf"\b{package}\b", stderr, re.IGNORECASE), (key, stderr)
        assert f"problin[{EXTRA_OF[package]}]" in stderr, (key, stderr)
    assert result["loaded"] == []  # of the blocked packages


# ------------------------------------------------------------------------ packaging
def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def test_core_dependencies_are_what_fitting_needs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {_name(r) for r in project["dependencies"]} == CORE
    extras = project["optional-dependencies"]
    for package, extra in EXTRA_OF.items():  # the extra each message names installs it
        assert package in {_name(r) for r in extras[extra]}, (package, extra)
    assert project["scripts"]["problin"] == "problin.__main__:main"
