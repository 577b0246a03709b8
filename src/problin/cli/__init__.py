"""The ``problin`` command: parsing and printing only, the maths lives elsewhere."""
