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
from typing import Any

from ._optional import import_optional

__all__ = ["formula_columns"]

_MODULES = frozenset({"np", "numpy", "contr"})


def formula_columns(part: Any) -> set[str]:
    """The columns read by the factors of ``part`` (a parsed formula side, or a
    structured formula with ``lhs`` and ``rhs``)."""
    if hasattr(part, "rhs"):
        return formula_columns(part.lhs) | formula_columns(part.rhs)
    code = import_optional("formulaic.utils.code", "formula", "problin.Formula")
    method = import_optional("formulaic.parser.types", "formula",
                             "problin.Formula").Factor.EvalMethod
    columns: set[str] = set()
    for term in part:
        for factor in term.factors:
            if factor.eval_method is method.LOOKUP:
                columns.add(str(factor.expr))
            elif factor.eval_method is method.PYTHON:
                aliases: dict[str, str] = {}
                text = code.sanitize_variable_names(str(factor.expr), {}, aliases,
                                                    template="quoted_{}")
                columns |= _python_columns(ast.parse(text.strip(), mode="eval"), aliases)
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
