"""The data columns a model formula reads, before any design is built.

formulaic (1.2.2) reports them as ``required_variables``, but from Python factors it
reads a quoted name with a dot (`x.1`, ``Q("x.1")``) as the attribute access ``x.1``
(the column ``x``), and it names no column inside stateful transforms (``center(b)``,
``bs(a, df=3)``). :func:`formula_columns` reads them from the factors themselves: a
column looked up is its own name; a Python factor's columns are the names it reads (not
those it calls, nor modules such as ``np``), after formulaic's own sanitiser has replaced
quoted names by identifiers (whose aliases give the names back), and the text of each
``Q("...")``.
"""
import ast
from collections.abc import Iterator
from typing import Any

from ._formula_language import QUOTED_PREFIX
from ._optional import import_optional

__all__ = ["categorical_columns", "formula_columns"]

_MODULES = frozenset({"np", "numpy", "contr"})


def _python_factors(part: Any) -> Iterator[tuple[Any, ast.AST | None, dict[str, str]]]:
    """Each factor of ``part`` with its Python tree (None for a column looked up) and
    the aliases of its quoted names (formulaic's own sanitiser)."""
    code = import_optional("formulaic.utils.code", "formula", "problin.Formula")
    method = import_optional("formulaic.parser.types", "formula",
                             "problin.Formula").Factor.EvalMethod
    for term in part:
        for factor in term.factors:
            if factor.eval_method is method.LOOKUP:
                yield factor, None, {}
            elif factor.eval_method is method.PYTHON:
                aliases: dict[str, str] = {}
                text = code.sanitize_variable_names(str(factor.expr), {}, aliases,
                                                    template=QUOTED_PREFIX + "{}")
                yield factor, ast.parse(text.strip(), mode="eval"), aliases


def formula_columns(part: Any) -> set[str]:
    """The columns read by the factors of ``part`` (a parsed formula side, or a
    structured formula with ``lhs`` and ``rhs``)."""
    if hasattr(part, "rhs"):
        return formula_columns(part.lhs) | formula_columns(part.rhs)
    columns: set[str] = set()
    for factor, tree, aliases in _python_factors(part):
        columns |= {str(factor.expr)} if tree is None else _python_columns(tree, aliases)
    return columns


def categorical_columns(part: Any) -> set[str]:
    """The columns read inside a ``C(...)`` of ``part``'s factors: read as categories
    whatever they hold (an ``object`` column of numbers elsewhere becomes float64,
    :func:`problin._frames.numeric_columns`)."""
    if hasattr(part, "rhs"):
        return categorical_columns(part.lhs) | categorical_columns(part.rhs)
    columns: set[str] = set()
    for _, tree, aliases in _python_factors(part):
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "C":
                columns |= _python_columns(node, aliases)
    return columns


def _python_columns(tree: ast.AST, aliases: dict[str, str]) -> set[str]:
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    columns = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in called and node.id not in _MODULES:
            columns.add(aliases.get(node.id, node.id))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "Q" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            columns.add(node.args[0].value)
    return columns
