"""Linear models for regression: basis functions, least squares, LMS, Bayesian."""
from .basis import GaussianBasis, PolynomialBasis, SigmoidalBasis
from .bayesian import BayesianLinearRegression
from .least_squares import LinearRegression
from .lms import LMSRegressor

__all__ = ["PolynomialBasis", "GaussianBasis", "SigmoidalBasis", "LinearRegression",
           "LMSRegressor", "BayesianLinearRegression"]
