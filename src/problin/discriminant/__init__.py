"""Discriminant analysis: Gaussian (LDA, QDA, ...), Fisher's discriminant, least squares
and the perceptron."""
from .fisher import FisherDiscriminant
from .gaussian import (
                       GaussianDiscriminantAnalysis,
                       LinearDiscriminantAnalysis,
                       QuadraticDiscriminantAnalysis,
)
from .least_squares import LeastSquaresClassifier
from .perceptron import Perceptron

__all__ = ["GaussianDiscriminantAnalysis", "LinearDiscriminantAnalysis",
           "QuadraticDiscriminantAnalysis", "FisherDiscriminant", "LeastSquaresClassifier",
           "Perceptron"]
