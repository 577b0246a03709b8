"""Linear models for regression: basis functions, least squares, LMS, Bayesian."""
from ._basis import GaussianBasis, PolynomialBasis, SigmoidalBasis
from ._bayesian import BayesianLinearRegression
from ._least_squares import LinearRegression
from ._lms import LMSRegressor

__all__ = ["PolynomialBasis", "GaussianBasis", "SigmoidalBasis", "LinearRegression",
           "LMSRegressor", "BayesianLinearRegression"]
