"""Model formulas parsed and their designs built by formulaic, with no Python evaluated.

formulaic 1.2.2 evaluates Python at three places: its materializer evaluates each factor
with ``eval`` (``stateful_eval``), its parser asks the left-hand side's tokens for their
``required_variables``, which ``eval`` the called name and its arguments
(``{__import__('os').system(...)(x)} ~ x`` ran the command while parsing), and so does
``required_variables`` on a parsed formula. Here:

- :func:`check_formula` reads the formula with formulaic's tokenizer (a scanner that
  evaluates nothing), refuses ``{...}`` blocks and checks every Python token against the
  formula language (:mod:`problin._formula_language`) *before* formulaic parses it; it
  also bounds the text (``MAX_FORMULA_CHARS``) and the number of terms the operators may
  expand to (``MAX_TERMS``: ``a*b*c*...`` of 30 names is 2**30 terms);
- :func:`parse_formula` is formulaic's parser after that check;
- :func:`design_matrix` builds a design with a subclass of formulaic's pandas materializer
  whose factors are looked up in the data only (not in the caller's variables, which
  ``formulaic.model_matrix`` captures by default) and evaluated by problin's interpreter;
  given ``max_width`` (a fitted model's number of design columns), a term that would be
  wider is refused before its columns are multiplied out.
"""
import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ._formula_language import ALLOWED, check_factor, evaluate_factor
from ._optional import import_optional

__all__ = ["MAX_FORMULA_CHARS", "MAX_TERMS", "check_formula", "design_matrix",
           "parse_formula"]

MAX_FORMULA_CHARS = 20_000
MAX_TERMS = 4_096
_WHAT = "problin.Formula"
_F = TypeVar("_F", bound=Callable[..., Any])


def _formulaic(module: str) -> Any:
    return import_optional(module, "formula", _WHAT)


def check_formula(formula: str) -> None:
    """Raise ValueError unless ``formula`` is in the formula language (see the module
    docstring and :data:`problin._formula_language.ALLOWED`); nothing is evaluated."""
    if not isinstance(formula, str) or not formula.strip():
        raise TypeError(f"formula must be a non-empty string, got {formula!r}"[:200])
    if len(formula) > MAX_FORMULA_CHARS:
        raise ValueError(f"the formula is {len(formula)} characters long, longer than a "
                         f"formula may be ({MAX_FORMULA_CHARS})")
    errors = _formulaic("formulaic.errors")
    token_kind = _formulaic("formulaic.parser.types").Token.Kind
    tokenize = _formulaic("formulaic.parser.algos.tokenize").tokenize
    try:
        tokens = list(tokenize(formula))
    except (errors.FormulaicError, SyntaxError) as exc:
        raise ValueError(f"cannot parse the formula {formula!r}: {exc}") from None
    for token in tokens:
        if token.kind is token_kind.PYTHON:
            if formula[token.source_start:token.source_start + 1] == "{":
                raise ValueError(f"the formula {formula[:200]!r} holds a {{...}} block: a "
                                 "formula is not Python (write arithmetic as I(...)); "
                                 f"{ALLOWED}")
            check_factor(token.token)
        elif token.kind is token_kind.NAME and "__" in token.token and \
                formula[token.source_start:token.source_start + 1] != "`":
            # (a column look-up, evaluating nothing; but it reads as Python's attributes)
            raise ValueError(f"the formula {formula!r} names {token.token!r}: a formula "
                             "reads no attributes (quote a column of that name in "
                             f"backticks); {ALLOWED}")
    try:
        tree = _formulaic("formulaic.parser").DefaultFormulaParser().get_ast(formula)
    except (errors.FormulaicError, SyntaxError) as exc:
        raise ValueError(f"cannot parse the formula {formula!r}: {exc}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"cannot parse the formula {formula[:80]!r}...: too deeply "
                         "nested") from None
    if _terms(tree) > MAX_TERMS:
        raise ValueError(f"the formula {formula[:200]!r} expands to more than {MAX_TERMS} "
                         "terms (its products and powers of sums)")


def _terms(node: Any) -> int:
    """An upper bound on the terms an operator tree expands to (capped above MAX_TERMS)."""
    args = getattr(node, "args", None)
    if args is None:
        return 1
    sizes = [_terms(a) for a in args]
    symbol = node.operator.symbol
    if symbol in ("+", "-", "~", "|", "(", ")"):
        bound = sum(sizes)
    elif symbol == ":":
        bound = math.prod(sizes)
    elif symbol == "**" and len(sizes) == 2:
        exponent = str(args[1])
        n = int(exponent) if exponent.isdigit() else MAX_TERMS
        bound = min(2 ** min(sizes[0], 63), (sizes[0] + 1) ** min(n, 63))
    else:  # a*b = a + b + a:b, a/b, a %in% b ...: at most every product of subsets
        bound = math.prod(s + 1 for s in sizes)
    return min(bound, MAX_TERMS + 1)


def parse_formula(formula: str) -> Any:
    """formulaic's ``Formula`` of ``formula``, after :func:`check_formula`."""
    check_formula(formula)
    errors = _formulaic("formulaic.errors")
    try:
        return _formulaic("formulaic").Formula(formula)
    except (errors.FormulaicError, SyntaxError) as exc:
        raise ValueError(f"cannot parse the formula {formula!r}: {exc}") from None


@functools.cache
def _materializer() -> Any:
    """formulaic's pandas materializer, its factors evaluated by problin's interpreter."""
    base = _formulaic("formulaic.materializers").PandasMaterializer
    variable = _formulaic("formulaic.utils.variables").Variable
    # (formulaic's materializers refuse overrides not marked by interface_meta's decorator)
    override = cast(Callable[[_F], _F], import_optional("interface_meta", "formula",
                                                        _WHAT).override)

    class DataOnlyMaterializer(base):  # type: ignore[misc, valid-type]
        max_width: int | None = None

        @override
        def _lookup(self, name: str) -> tuple[Any, set[Any]]:
            if name not in self.data.columns:
                raise NameError(f"`{name}` is not a column of the data")
            return self.data[name], {variable(name, roles=("value",), source="data")}

        @override
        def _evaluate(self, expr: str, metadata: Any, spec: Any) -> tuple[Any, set[Any]]:
            value = evaluate_factor(expr, self.data, spec.transform_state, {expr: metadata},
                                    spec)
            return value, set()

        @override
        def _get_columns_for_term(self, factors: list[dict[str, Any]], spec: Any,
                                  scale: float = 1) -> dict[str, Any]:
            width = math.prod(len(f) for f in factors)
            if self.max_width is not None and width > self.max_width:
                raise ValueError(f"a term gives {width} columns, more than the "
                                 f"{self.max_width} of the fitted design")
            return dict(super()._get_columns_for_term(factors, spec, scale))

    return DataOnlyMaterializer


def design_matrix(spec: Any, frame: Any, max_width: int | None = None, **params: Any) -> Any:
    """The design of ``spec`` (a parsed formula or a fitted ``ModelSpec``) on the
    DataFrame ``frame``, built by formulaic with no Python evaluated; ``params`` are
    formulaic's (``na_action``, ``ensure_full_rank``, ``output``)."""
    materializer = _materializer()(frame, context={})
    materializer.max_width = max_width
    return materializer.get_model_matrix(spec, **params)
