"""The report's out-of-sample scores say how many folds they used."""
import numpy as np

from problin import LinearDiscriminantAnalysis
from problin.report.evaluation import out_of_sample


def test_fewer_folds_than_asked_are_labelled_as_used():
    """With 3 rows of the rarest class, 5-fold stratified cross-validation runs 3 folds:
    the label (and so the report's heading) says 3-fold, not the 5 asked for."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(43, 2))
    y = np.array([0] * 20 + [1] * 20 + [2] * 3)
    model = LinearDiscriminantAnalysis().fit(X, y)
    preds, _ = out_of_sample(model, X, y, np.arange(43), 5, True)
    assert preds.label == "out of sample: 3-fold cross-validation"
    preds, _ = out_of_sample(model, X[:40], y[:40], np.arange(40), 5, True)
    assert preds.label == "out of sample: 5-fold cross-validation"
