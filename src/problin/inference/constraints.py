"""Linear restrictions ``R theta = q`` written as text over the parameter names.

``"x1 = x2, x3 = 0"`` becomes ``R = [[0, 1, -1, 0], [0, 0, 0, 1]]``, ``q = [0, 0]`` over the
parameters ``["intercept", "x1", "x2", "x3"]``: the notation of statsmodels' ``wald_test``
(patsy's ``linear_constraint``), parsed here by a small recursive-descent parser of our own.
"""
import difflib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["parse_constraints"]

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")
_OPERATORS = "+-*/=,()"


@dataclass(frozen=True)
class _Token:
    kind: str  # "name", "number", or the operator itself
    text: str
    position: int
    index: int = -1  # the parameter's position, for names
    value: float = 0.0  # for numbers


def _is_word(c: str) -> bool:
    return c.isalnum() or c in "_."


def _unknown_name(word: str, text: str, names: Sequence[str]) -> ValueError:
    # Compared without case ('gpa' for 'GPA'), the names spelled as they are.
    by_lower: dict[str, str] = {}
    for name in names:
        by_lower.setdefault(name.lower(), name)
    close = [by_lower[c] for c in
             difflib.get_close_matches(word.lower(), list(by_lower), n=3, cutoff=0.6)]
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ValueError(f"unknown parameter {word!r} in the restriction {text!r}{hint} "
                      f"The parameters are: {', '.join(names)}.")


def _tokenize(text: str, names: Sequence[str]) -> list[_Token]:
    """Tokens of ``text``: known parameter names first (longest match, so that names
    holding spaces or operators are read whole), then numbers, operators and
    anything word-like, which is an unknown name."""
    by_length = sorted(range(len(names)), key=lambda i: -len(names[i]))
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        for i in by_length:
            name = names[i]
            end = pos + len(name)
            if name and text.startswith(name, pos) and not (
                    end < len(text) and _is_word(name[-1]) and _is_word(text[end])):
                tokens.append(_Token("name", name, pos, index=i))
                pos = end
                break
        else:
            number = _NUMBER.match(text, pos)
            word = _IDENTIFIER.match(text, pos)
            if number and not (number.end() < len(text) and (text[number.end()].isalpha()
                                                             or text[number.end()] == "_")):
                tokens.append(_Token("number", number.group(), pos, value=float(number.group())))
                pos = number.end()
            elif text[pos] in _OPERATORS:
                tokens.append(_Token(text[pos], text[pos], pos))
                pos += 1
            else:
                m = word or re.compile(r"\S+").match(text, pos)
                assert m is not None
                raise _unknown_name(m.group(), text, names)
    return tokens


class _Parser:
    """Recursive descent over ``restrictions := equation ("," equation)*``,
    ``equation := expr ("=" expr)*`` (no ``=`` means ``= 0``),
    ``expr := ["+"|"-"] term (("+"|"-") term)*``, ``term := factor (("*"|"/") factor)*``,
    ``factor := number | name | "(" expr ")" | ("+"|"-") factor``. An expression is kept as
    its coefficient vector and constant; a product of two parameters is refused."""

    def __init__(self, text: str, names: Sequence[str]) -> None:
        self.text, self.names = text, names
        self.tokens = _tokenize(text, names)
        self.i = 0

    def error(self, what: str) -> ValueError:
        where = self.tokens[self.i].position if self.i < len(self.tokens) else len(self.text)
        return ValueError(f"cannot parse the restriction {self.text!r}: {what} at character "
                          f"{where} ({self.text[:where]!r} <here> {self.text[where:]!r}); write "
                          "linear restrictions such as 'x1 = x2, 2*x3 - x4 = 1'")

    def peek(self) -> str | None:
        return self.tokens[self.i].kind if self.i < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def restrictions(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        rows: list[NDArray[np.float64]] = []
        constants: list[float] = []
        while True:
            sides = [self.expr()]
            while self.peek() == "=":
                self.take()
                sides.append(self.expr())
            if len(sides) == 1:
                sides.append((np.zeros(len(self.names)), 0.0))
            for (a, ca), (b, cb) in itertools.pairwise(sides):
                if not np.any(a - b):
                    raise self.error("a restriction without parameters (or where they cancel)")
                rows.append(a - b)
                constants.append(cb - ca)
            if self.peek() is None:
                break
            if self.peek() != ",":
                raise self.error(f"unexpected {self.tokens[self.i].text!r}")
            self.take()
        return np.array(rows), np.array(constants)

    def expr(self) -> tuple[NDArray[np.float64], float]:
        coef, const = self.term()
        while self.peek() in ("+", "-"):
            sign = 1.0 if self.take().kind == "+" else -1.0
            c, k = self.term()
            coef, const = coef + sign * c, const + sign * k
        return coef, const

    def term(self) -> tuple[NDArray[np.float64], float]:
        coef, const = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take().kind
            c, k = self.factor()
            if op == "/":
                if np.any(c) or k == 0.0:
                    raise self.error("division by a parameter or by zero")
                coef, const = coef / k, const / k
            elif np.any(coef) and np.any(c):
                raise self.error("a product of parameters (the restrictions must be linear)")
            else:
                coef, const = (coef * k + c * const), const * k
        return coef, const

    def factor(self) -> tuple[NDArray[np.float64], float]:
        kind = self.peek()
        if kind is None:
            raise self.error("the text ends early")
        token = self.take()
        if kind == "number":
            return np.zeros(len(self.names)), token.value
        if kind == "name":
            named = sum(1 for name in self.names if name == self.names[token.index])
            if named > 1:  # (a feature named "intercept", or two columns alike as text)
                self.i -= 1
                raise self.error(f"{named} parameters are named {self.names[token.index]!r}; "
                                 "rename the columns, or pass R as a matrix")
            coef = np.zeros(len(self.names))
            coef[token.index] = 1.0
            return coef, 0.0
        if kind in ("+", "-"):
            c, k = self.factor()
            return (c, k) if kind == "+" else (-c, -k)
        if kind == "(":
            inner = self.expr()
            if self.peek() != ")":
                raise self.error("a missing ')'")
            self.take()
            return inner
        self.i -= 1
        raise self.error(f"unexpected {token.text!r}")


def parse_constraints(text: str | Sequence[str], names: Sequence[str]
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(R, q)`` of the linear restrictions ``R theta = q`` written in ``text``.

    Parameters
    ----------
    text : str or sequence of str
        Restrictions separated by commas (or given as a list), each an equation between
        linear expressions over the parameter names, e.g. ``"x1 = x2, x3 = 0"``,
        ``"2*x1 - x2/3 = 1"``, ``"x1 = x2 = x3"`` (two rows); an expression without
        ``=`` is set to zero (``"x1 - x2"`` is ``x1 = x2``). Names are matched whole
        and longest first, so names holding spaces or operators may be written as they are.
    names : sequence of str
        The parameter names in the order of ``theta`` (``summary()``'s index).

    Returns
    -------
    R : ndarray of shape (J, p)
    q : ndarray of shape (J,)

    Raises
    ------
    ValueError
        For a name that is not a parameter (listing the parameters and the closest
        names, by :func:`difflib.get_close_matches`), a product of parameters, or text
        that is not a linear restriction.
    """
    if isinstance(text, str):
        parts = [text]
    else:
        parts = [str(t) for t in text]
        if not parts:
            raise ValueError("no restrictions given")
    rows, constants = zip(*(_Parser(t, names).restrictions() for t in parts), strict=True)
    return np.vstack(rows), np.concatenate(constants)
