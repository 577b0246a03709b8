"""Exceptions of problin's file readers and model files.

Both derive from :class:`ValueError`, so ``except ValueError`` catches every
bad-input error problin raises (docs/design.md, errors and warnings).
"""

__all__ = ["ModelFileError", "DataFileError", "ColumnNotFoundError"]


class ModelFileError(ValueError):
    """A model file is not a problin model file, is damaged, tampered with or too new."""


class DataFileError(ValueError):
    """A data file cannot be read or encoded (bad format, missing values, unseen categories)."""


class ColumnNotFoundError(DataFileError, KeyError):
    """A column named on the command line (e.g. the target) is not in the data."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
