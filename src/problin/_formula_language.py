"""The expressions a model formula may hold, checked and evaluated without Python's ``eval``.

formulaic (the formula engine) parses ``y ~ a + C(g) + np.log(x)`` into terms whose factors
are either column look-ups or Python expressions (``C(g)``, ``np.log(x)``), and evaluates
the latter with ``eval``: ``y ~ {__import__('os').system(...)}`` ran the command. A factor's
expression is read here with ``ast.parse`` (parsing only) and walked by a small interpreter
that knows:

- names: data columns (`` `quoted names` `` too, and ``Q('name')``), nothing else: not the
  caller's variables, not builtins, not modules;
- numbers, and ``+ - * / **`` and unary minus on columns and numbers (arithmetic on
  numbers alone is computed in at most ``LITERAL_BITS`` bits: ``9**9**9`` is an error);
- the calls of :data:`FUNCTIONS` and, as ``np.<name>`` (or ``numpy.<name>``), of
  :data:`NUMPY_FUNCTIONS`, with the arguments each declares: columns where data go,
  literals elsewhere (``poly(x, 3)``, ``bs(x, df=4)``, ``C(g, Treatment('b'))``,
  ``C(g, levels=['a', 'b'])``). Sizes are bounded: degrees of freedom, degrees and knots
  at most ``MAX_BASIS``, literal level lists at most ``MAX_LEVELS``.

Anything else (attributes, subscripts, comparisons, lambdas, comprehensions, other names
called, keyword arguments a function does not take) is a ValueError naming the problem and
what a formula may hold. The same walk checks a formula without data (:func:`check_factor`:
at fit, on the command line and when a model file is read) and evaluates it on data
(:func:`evaluate_factor`, called by problin's materializer, :mod:`problin._formula_design`),
so what ``fit`` accepts is what ``load`` reads. Stateful transforms (``center``, ``poly``,
``bs`` ...) are called with formulaic's ``_state``/``_metadata``/``_spec``/``_context``
keywords and keyed by the same text as formulaic keys them, so that their fitted state is
formulaic's.
"""
import ast
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._optional import import_optional

__all__ = ["ALLOWED", "FUNCTIONS", "LITERAL_BITS", "MAX_BASIS", "MAX_LEVELS",
           "NUMPY_FUNCTIONS", "check_factor", "evaluate_factor"]

MAX_BASIS = 100  # df, degree and knots of poly and the splines
MAX_LEVELS = 10_000  # a literal levels=[...] list
LITERAL_BITS = 1 << 16  # integers computed from literals alone
_SMALL = 1  # ddof

# Element-wise numpy functions of one argument (as np.<name>); bare names below.
NUMPY_FUNCTIONS = frozenset({"log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "abs",
                             "square", "sin", "cos", "tanh", "sign"})
_BARE_NUMPY = frozenset({"log", "log2", "log10", "exp", "sqrt", "abs"})
_EXTRAPOLATION = frozenset({"raise", "clip", "na", "zero", "extend"})


@dataclass(frozen=True)
class _Param:
    name: str
    kind: str  # data, count, degree, number, numbers, flag, ddof, choice, label, labels, contrast
    choices: frozenset[str] = frozenset()


_D = _Param("x", "data")
_SPLINE_COMMON = (_Param("lower_bound", "number"), _Param("upper_bound", "number"))
# name -> the parameters it takes, in positional order.
FUNCTIONS: dict[str, tuple[_Param, ...]] = {
    "C": (_D, _Param("contrasts", "contrast"), _Param("levels", "labels"),
          _Param("spans_intercept", "flag")),
    "I": (_D,),
    "Q": (_Param("name", "column"),),
    **{name: (_D,) for name in sorted(_BARE_NUMPY)},
    "center": (_D,),
    "scale": (_D, _Param("center", "flag"), _Param("scale", "flag"), _Param("ddof", "ddof")),
    "standardize": (_D, _Param("center", "flag"), _Param("rescale", "flag"),
                    _Param("ddof", "ddof")),
    "poly": (_D, _Param("degree", "count"), _Param("raw", "flag")),
    "bs": (_D, _Param("df", "count"), _Param("knots", "numbers"), _Param("degree", "degree"),
           _Param("include_intercept", "flag"), *_SPLINE_COMMON,
           _Param("extrapolation", "choice", _EXTRAPOLATION)),
    **{name: (_D, _Param("df", "count"), _Param("knots", "numbers"), *_SPLINE_COMMON,
              _Param("constraints", "choice", frozenset({"center"})),
              _Param("extrapolation", "choice", _EXTRAPOLATION))
       for name in ("cr", "cs", "cc")},
}
# Contrasts, as C's second argument: patsy's names and formulaic's contr.<name>.
_CONTRASTS: dict[str, tuple[str, tuple[_Param, ...]]] = {
    "Treatment": ("TreatmentContrasts", (_Param("reference", "label"),)),
    "Sum": ("SumContrasts", ()), "Helmert": ("HelmertContrasts", ()),
    "Diff": ("DiffContrasts", ()), "Poly": ("PolyContrasts", ()),
    "contr.treatment": ("TreatmentContrasts", (_Param("base", "label"),)),
    "contr.sum": ("SumContrasts", ()), "contr.helmert": ("HelmertContrasts", ()),
    "contr.diff": ("DiffContrasts", ()), "contr.poly": ("PolyContrasts", ()),
}
_SPLINES = {"bs": "basis_spline", "cr": "natural_cubic_spline", "cs": "natural_cubic_spline",
            "cc": "cyclic_cubic_spline"}

ALLOWED = (
    "a formula may hold columns (names, `quoted names` or Q('name')), numbers, "
    "+ - * / ** and unary minus on them (inside I(...) or a function), and the functions "
    f"{', '.join(sorted(FUNCTIONS))} and np.{{{', '.join(sorted(NUMPY_FUNCTIONS))}}}, with "
    "C's contrasts Treatment(reference), Sum(), Helmert(), Diff(), Poly() (or "
    "contr.treatment(base), contr.sum(), ...); poly, bs, cr, cs and cc take at most "
    f"{MAX_BASIS} degrees of freedom, degrees or knots. A formula is not Python: no other "
    "name, attribute, call, subscript, comparison or {...} block")


class _Column:
    """A column in a formula checked without data."""


_COLUMN = _Column()
QUOTED_PREFIX = "quoted_"  # how formulaic's sanitiser renames `quoted names` for ast.parse


def _refuse(expr: str, what: str) -> ValueError:
    return ValueError(f"factor {expr!r} {what}: {ALLOWED}")


class _Walk:
    """One factor's expression walked: checked only (``data`` None) or evaluated."""

    def __init__(self, expr: str, data: Mapping[str, Any] | None = None,
                 state: MutableMapping[str, Any] | None = None, metadata: Any = None,
                 spec: Any = None) -> None:
        self.expr, self.data = expr, data
        self.state = {} if state is None else state
        self.metadata, self.spec = metadata, spec
        code = import_optional("formulaic.utils.code", "formula", "problin.Formula")
        self.format_expr = code.format_expr
        self.aliases: dict[str, str] = {}
        self.literals: dict[int, Any] = {}
        # (formulaic's own sanitiser: it knows where a quoted name ends, string literals too)
        text = code.sanitize_variable_names(expr, {}, self.aliases,
                                            template=QUOTED_PREFIX + "{}")
        # The names formulaic gives quoted columns (against the data's names, as its
        # stateful_eval does): the text of a stateful call, the key of its state, uses them.
        plain: dict[str, str] = {}
        code.sanitize_variable_names(expr, dict.fromkeys(() if data is None else data), plain)
        formulaic_name = {orig: alias for alias, orig in plain.items()}
        self.state_names = {mine: formulaic_name.get(orig, mine)
                            for mine, orig in self.aliases.items()}
        try:
            self.tree = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            raise ValueError(f"factor {expr[:80]!r} is not an expression (or too deeply "
                             "nested)") from None

    # ----------------------------------------------------------------- nodes
    def value(self, node: ast.AST) -> Any:
        """The value of an expression node (``_COLUMN`` for data when checking only)."""
        literal = self.literal(node, must=False)
        if _is_number(literal):
            return literal
        if isinstance(node, ast.Name):
            return self.column(self.aliases.get(node.id, node.id))
        if isinstance(node, ast.Constant):
            raise _refuse(self.expr, f"holds {node.value!r} where a column or number "
                          "belongs")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.numeric(self.value(node.operand))
            return operand if isinstance(node.op, ast.UAdd) or operand is _COLUMN else -operand
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left = self.numeric(self.value(node.left))
            right = self.numeric(self.value(node.right))
            if left is _COLUMN or right is _COLUMN:
                return _COLUMN
            with np.errstate(all="ignore"):
                return _OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            raise _refuse(self.expr, f"reads the attribute {node.attr!r}")
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            op = node.op
            raise _refuse(self.expr, f"applies the operator {type(op).__name__}")
        raise _refuse(self.expr, f"holds a {type(node).__name__} ({_shown(node)})")

    def column(self, name: str) -> Any:
        if self.data is None:
            return _COLUMN
        if name not in self.data:
            raise ValueError(f"factor {self.expr!r} names the column {name!r}, which the "
                             "data do not have")
        return self.data[name]

    def numeric(self, v: Any) -> Any:
        """Arithmetic and numeric functions read numbers: text columns (which pandas
        would repeat: 'ab' * 10**9) are refused."""
        if v is _COLUMN or isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            return v
        dtype = getattr(v, "dtype", None)
        if dtype is not None and getattr(dtype, "kind", "O") in "biuf":
            return v
        raise ValueError(f"factor {self.expr!r}: arithmetic and numeric functions read "
                         "numeric columns and numbers")

    def literal(self, node: ast.AST, must: bool = True) -> Any:
        """A literal (number, text, bool, None, or list of them) computed within
        ``LITERAL_BITS``; None where the node is none (an error where ``must``)."""
        value = _literal(node, self.expr, self.literals)
        if value is _NOT_LITERAL:
            if must:
                raise _refuse(self.expr, f"holds {_shown(node)} where a literal belongs")
            return None
        return value

    # ------------------------------------------------------------------ calls
    def call(self, node: ast.Call) -> Any:
        name = _called(node.func)
        if name in FUNCTIONS:
            params = FUNCTIONS[name]
        elif name.startswith(("np.", "numpy.")) and name.split(".", 1)[1] in NUMPY_FUNCTIONS:
            params = (_D,)
        else:
            raise _refuse(self.expr, f"calls {name!r}, not a formula function")
        args = self.bind(node, name, params)
        if self.data is None:
            return _COLUMN
        return self.apply(node, name, args)

    def bind(self, node: ast.Call, name: str, params: tuple[_Param, ...]) -> dict[str, Any]:
        """The arguments of a call by parameter name, each checked for its kind."""
        if any(isinstance(a, ast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise _refuse(self.expr, f"unpacks arguments of {name}")
        if len(node.args) > len(params):
            raise _refuse(self.expr, f"gives {name} {len(node.args)} arguments, it takes at "
                          f"most {len(params)}")
        given = dict(zip((p.name for p in params), node.args))
        by_name = {p.name: p for p in params}
        for keyword in node.keywords:
            if keyword.arg not in by_name or keyword.arg in given:
                raise _refuse(self.expr, f"gives {name} the argument {keyword.arg!r}")
            given[str(keyword.arg)] = keyword.value
        if params and params[0].kind in ("data", "column") and params[0].name not in given:
            raise _refuse(self.expr, f"calls {name} without its data")
        return {k: self.argument(by_name[k], v, name) for k, v in given.items()}

    def argument(self, param: _Param, node: ast.AST, name: str) -> Any:
        kind = param.kind
        if kind == "data":
            return self.value(node)
        if kind == "contrast":
            return self.contrast(node)
        v = self.literal(node)
        where = f"{name}'s {param.name}"
        if kind == "column" and isinstance(v, str):
            return self.column(v)
        if kind in ("count", "degree", "ddof") and _is_int(v):
            low, high = {"count": (1, MAX_BASIS), "degree": (0, MAX_BASIS),
                         "ddof": (0, _SMALL)}[kind]
            if low <= v <= high:
                return int(v)
            raise _refuse(self.expr, f"gives {where} = {v}, outside {low}..{high}")
        if kind == "number" and (v is None or _is_number(v)):
            return v
        if kind == "numbers" and isinstance(v, list) and all(_is_number(e) for e in v):
            if len(v) > MAX_BASIS:
                raise _refuse(self.expr, f"gives {where} {len(v)} values, more than "
                              f"{MAX_BASIS}")
            return v
        if kind == "flag" and isinstance(v, bool):
            return v
        if kind == "choice" and (v is None or v in param.choices):
            return v
        if kind == "label" and isinstance(v, (str, int, float, bool)):
            return v
        if kind == "labels" and isinstance(v, list) and all(
                isinstance(e, (str, int, float, bool)) for e in v):
            if len(v) > MAX_LEVELS:
                raise _refuse(self.expr, f"gives {where} {len(v)} levels, more than "
                              f"{MAX_LEVELS}")
            return v
        raise _refuse(self.expr, f"gives {where} the value {_shown(node)}")

    def contrast(self, node: ast.AST) -> Any:
        name = _called(node.func) if isinstance(node, ast.Call) else ""
        if not isinstance(node, ast.Call) or name not in _CONTRASTS:
            raise _refuse(self.expr, f"gives C the contrasts {_shown(node)}")
        cls, params = _CONTRASTS[name]
        args = self.bind(node, name, params)
        if self.data is None:
            return None
        contrasts = import_optional("formulaic.transforms.contrasts", "formula",
                                    "problin.Formula")
        kwargs = {"base": v for v in args.values()}  # (Treatment's reference is its base)
        return getattr(contrasts, cls)(**kwargs)

    def apply(self, node: ast.Call, name: str, args: dict[str, Any]) -> Any:
        """Call a formula function on evaluated arguments."""
        if name == "Q":
            return args["name"]
        if name == "I":
            return args["x"]
        transforms = import_optional("formulaic.transforms", "formula", "problin.Formula")
        if name == "C":
            data = args.pop("x")
            return transforms.C(data, args.pop("contrasts", None), **args)
        if name not in FUNCTIONS or name in _BARE_NUMPY:
            with np.errstate(all="ignore"):
                return getattr(np, name.split(".")[-1])(self.numeric(args["x"]))
        func: Callable[..., Any]
        if name in _SPLINES:
            func = getattr(transforms, _SPLINES[name])
        elif name == "standardize":
            func = import_optional("formulaic.transforms.patsy_compat", "formula",
                                   "problin.Formula").standardize
        else:
            func = getattr(transforms, name)
        data = self.numeric(args.pop("x"))
        # formulaic's key of a stateful call's state: the call as formulaic formats it.
        key = self.format_expr(_renamed(node, self.state_names))
        metadata = self.metadata.get(key) if isinstance(self.metadata, Mapping) else None
        key = key.replace('"', r'\\\\"')
        state = self.state.setdefault(key, {})
        return func(data, **args, _state=state, _metadata=metadata, _spec=self.spec,
                    _context=self.data)


_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a ** b}


class _NotLiteral:
    pass


_NOT_LITERAL = _NotLiteral()


def _literal(node: ast.AST, expr: str, seen: dict[int, Any]) -> Any:
    """A subtree of literals computed (integers within ``LITERAL_BITS``), or
    ``_NOT_LITERAL``; ``seen`` keeps the values of the nodes already computed (the walk
    asks each node once, not once per ancestor)."""
    if id(node) not in seen:
        seen[id(node)] = _literal_of(node, expr, seen)
    return seen[id(node)]


def _literal_of(node: ast.AST, expr: str, seen: dict[int, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, int, float, bool)) or \
            node.value is None else _NOT_LITERAL
    if isinstance(node, (ast.List, ast.Tuple)):
        if len(node.elts) > MAX_LEVELS:
            raise _refuse(expr, f"holds a list of {len(node.elts)} values")
        values = [_literal(e, expr, seen) for e in node.elts]
        if any(v is _NOT_LITERAL or isinstance(v, list) for v in values):
            return _NOT_LITERAL
        return values
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal(node.operand, expr, seen)
        if v is _NOT_LITERAL or not _is_number(v):
            return _NOT_LITERAL
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        a, b = _literal(node.left, expr, seen), _literal(node.right, expr, seen)
        if a is _NOT_LITERAL or b is _NOT_LITERAL:
            return _NOT_LITERAL
        if not (_is_number(a) and _is_number(b)):
            raise _refuse(expr, "does arithmetic on text, lists or truth values")
        return _arithmetic(node.op, a, b, expr)
    return _NOT_LITERAL


def _arithmetic(op: ast.operator, a: Any, b: Any, expr: str) -> Any:
    big = _refuse(expr, f"computes a number beyond {LITERAL_BITS} bits from literals")
    if isinstance(op, ast.Pow) and isinstance(a, int) and isinstance(b, int) and b > 0 \
            and max(abs(a).bit_length() - 1, 0) * b > LITERAL_BITS:
        raise big
    try:
        value = _OPERATORS[type(op)](a, b)
    except (OverflowError, ZeroDivisionError):  # (as numpy: inf or nan, not an error)
        with np.errstate(all="ignore"):
            value = float(_OPERATORS[type(op)](np.float64(a), np.float64(b)))
    if isinstance(value, complex):
        return float("nan")
    if isinstance(value, int) and value.bit_length() > LITERAL_BITS:
        raise big
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _called(func: ast.AST) -> str:
    """A called function's dotted name (``np.log``), or its source text for messages."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return _shown(func)


def _shown(node: ast.AST) -> str:
    try:
        return ast.unparse(node)[:60]
    except (ValueError, RecursionError):  # pragma: no cover - parsed nodes unparse
        return type(node).__name__


def _renamed(node: ast.AST, names: Mapping[str, str]) -> ast.AST:
    """A copy of ``node`` with our names of quoted columns replaced by formulaic's."""
    if not names:
        return node
    tree = ast.parse(ast.unparse(node), mode="eval")
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Name) and sub.id in names:
            sub.id = names[sub.id]
    return tree.body


def check_factor(expr: str) -> None:
    """Raise ValueError unless ``expr`` (a formula factor's Python expression) is in the
    formula language (see the module docstring)."""
    walk = _Walk(expr)
    try:
        walk.value(walk.tree)
    except RecursionError:
        raise ValueError(f"factor {expr[:80]!r} is too deeply nested") from None


def evaluate_factor(expr: str, data: Mapping[str, Any], state: MutableMapping[str, Any],
                    metadata: Any, spec: Any) -> Any:
    """The values of the factor ``expr`` on ``data`` (a mapping of column names to
    Series); stateful transforms read and write their state in ``state`` (formulaic's
    ``transform_state``)."""
    walk = _Walk(expr, data, state, metadata, spec)
    try:
        value = walk.value(walk.tree)
    except RecursionError:
        raise ValueError(f"factor {expr[:80]!r} is too deeply nested") from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        index = getattr(data, "index", None)
        return pd.Series(float(value), index=index) if index is not None else value
    return value
