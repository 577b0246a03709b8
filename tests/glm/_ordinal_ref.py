"""Reference data and published results for the ordinal tests.

``survey()``: R's ``MASS::survey`` (Venables & Ripley 2002), the columns ``Sex``,
``Height`` and ``Smoke`` of its 237 students, the 29 with a missing value dropped (as R's
``polr`` does), 208 rows. Each token is the sex (F/M), the height in cm and the smoking
category (N: Never, O: Occas, R: Regul, H: Heavy), copied from the CSV of the Rdatasets
collection (vincentarelbundock/Rdatasets, ``csv/MASS/survey.csv``).

``SURVEY_POLR`` and ``SURVEY_BRANT`` are the published outputs of the R package ``brant``'s
documented example (Schlegel, ``?brant``, printed on its CRAN/rdrr.io page)::

    model1 = MASS::polr(Smoke ~ Sex + Height, data=data, Hess=TRUE)
    brant(model1)

to their printed precision: the coefficients and cut-points of ``polr`` (4 decimals, 5
significant digits) and the Brant chi-squares (2 decimals) with their degrees of freedom.
"""
import numpy as np

_SURVEY = """
F173N M177.8R M160N M165N F172.72N M182.88N F157N M175N M167N F156.2N F155N F155N F156N
F157N M182.88N M190.5N M177N M190.5N M180.34N M180.34N M184N M172.72N M175.26N M167N
M180N F166.4H M180N M190O F168N M182.5N M185N M171O F169N F154.94N M172N F176.5N
F180.34N M180.34N M180R M170N F168O F165N M200N M190N M170.18N M179N M182R M171N
F157.48N M177.8N M175.26O M187N F167.64N F178N F170N F164N M183N F172N M180N F170N M176H
F171N F167.64N F165N F170H F165N F165.1H F165.1N M185.42N M176.5N M167.64N F167N
F162.56N F170N M179N M183N F165N F168N M179H M190R F166.5N M165N F175.26N M187N M170N
F159N F175N F163H F170N F172O M180N M180.34R F175N M190.5N F170.18N M185N F162.56N F158N
F159N M193.04H F171N M184H M177O F172N M180N M175.26N M180.34N F172.72N M178.5R F157N
F152N M187.96N M178N F160.02O M175.26N M189R M182.88N M170N F167N F175N F165N F172.72N
M180N F172N M185N M187.96R M185.42N F165N F164N M195N F165N F152.4R M172.72N M180.34N
M173N F167.64N M187.96N M187R F167N M168N M191.8N F169.2O M177N F168N F170N F160.02R
M189N M180.34N F168N M182.88O F165N F157.48N F170N M172.72R F164N F162.56N M172O F165.1O
F162.5N M170N M175N M168N F163N M165N M173N M196N M179.1N M180N M176O F160.02N F157.48N
F165N F170.18N M154.94N F170O F164N F167O M174N F160N M179.1R F168O F153.5N M160N M165N
F171.5N F160N F163N M165N F168.9N M170N M185N F173N M188N M171H F167.64N F162.56N F150N
F170.18H M185N F167R M185O F169N M180.34N F165.1N F160N F170N M183N F168.5N
"""

SMOKE_LEVELS = ("Never", "Occas", "Regul", "Heavy")

# MASS::polr(Smoke ~ Sex + Height): Value and Std. Error as printed
SURVEY_POLR = {
    "coef": {"SexMale": (0.09478, 0.4808), "Height": (0.02785, 0.0243)},
    "cutpoints": {"Never|Occas": (6.3113, 4.0564), "Occas|Regul": (6.9224, 4.0619),
                  "Regul|Heavy": (7.8802, 4.0732)},
    "deviance": 287.0276,
}

# brant(model1): X2, df, probability as printed
SURVEY_BRANT = {"Omnibus": (3.28, 4, 0.51), "SexMale": (1.58, 2, 0.45),
                "Height": (0.02, 2, 0.99)}


def survey():
    """``(X, y)``: X the columns ``[SexMale, Height]``, y the smoking level index 0..3."""
    codes = {"N": 0, "O": 1, "R": 2, "H": 3}
    tokens = _SURVEY.split()
    X = np.array([[t[0] == "M", float(t[1:-1])] for t in tokens], dtype=float)
    y = np.array([codes[t[-1]] for t in tokens])
    return X, y
