"""Formulas: a model written as ``y ~ a + b + C(c)``, its design built by formulaic."""
