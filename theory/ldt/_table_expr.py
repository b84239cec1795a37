"""Table strings as SymPy expressions, parsed without ever evaluating them as Python.

The symbols of the symbolic scaling tables (:mod:`richlazy.theory.ldt._tables`) and
:func:`parse_table_expression`, which builds a SymPy expression from the :mod:`ast` of a table
string node by node over a fixed grammar: a table string read from a file can never run code.
"""

from __future__ import annotations

import ast
import operator
import re

import sympy as sp

__all__ = ["TABLE_SYMBOLS", "parse_table_expression"]

# symbols (all positive)
d, N, N1, N2, S, H, L = sp.symbols("d N N1 N2 S H L", positive=True)
D, M, M1, M2, beta, mu = sp.symbols("D M M1 M2 beta mu", positive=True)

#: name -> Symbol for every symbol used in the tables.  Plain ``sympy.sympify`` maps ``N`` to
#: sympy's numerical-evaluation function, ``S`` to its singleton registry and ``beta`` to the beta
#: function; parse table strings with :func:`parse_table_expression` (``sympy.sympify`` evaluates
#: its input as Python: never give it text read from a file).
TABLE_SYMBOLS = {str(s): s for s in (d, N, N1, N2, S, H, L, D, M, M1, M2, beta, mu)}


_EXPR_FORBIDDEN = re.compile(r"[^A-Za-z0-9_\s+\-*/^().,<>=!]")

#: the functions a table string may call, mapped to SymPy (name -> (function, allowed arities))
_TABLE_FUNCTIONS = {"sqrt": (sp.sqrt, (1,)), "log": (sp.log, (1, 2)), "exp": (sp.exp, (1,))}
#: named constants (the non-finite ones are rejected after parsing, with their own message)
_TABLE_CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "zoo": sp.zoo, "nan": sp.nan}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq,
            ast.NotEq: sp.Ne}
_MAX_EXPONENT = 10_000  # a literal power above this is refused (2**10**10 would never finish)
_GRAMMAR = ("numbers, the symbols " + " ".join(TABLE_SYMBOLS) + ", + - * / ** ^, unary + -, "
            "parentheses, one comparison (< <= > >= == !=) and the functions "
            + "/".join(_TABLE_FUNCTIONS))


class _Rejected(ValueError):
    """A syntax element outside the table grammar (the message says what was found)."""


def _describe(node: ast.AST) -> str:
    """A short human name of a rejected syntax element."""
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        return f"a call of {name}"
    if isinstance(node, ast.Name):
        return f"the unknown name {node.id!r}"
    if isinstance(node, ast.Constant):
        return f"the {type(node.value).__name__} literal {node.value!r}"
    if isinstance(node, ast.Attribute):
        return f"an attribute access (.{node.attr})"
    kind = type(node).__name__
    return {"Subscript": "a subscript", "Lambda": "a lambda", "Tuple": "a tuple",
            "BinOp": "the operator " + type(getattr(node, "op", None)).__name__}.get(kind, f"a {kind}")


def _table_number(value) -> sp.Expr:
    """A numeric literal as SymPy (ints exactly, floats as sympify reads them); nothing else."""
    if type(value) is int:
        return sp.Integer(value)
    if type(value) is float:
        return sp.Float(repr(value))
    raise _Rejected(f"the {type(value).__name__} literal {value!r}")


def _table_call(node: ast.Call) -> sp.Expr:
    """A call of a whitelisted function with positional arguments only."""
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in _TABLE_FUNCTIONS or node.keywords:
        raise _Rejected(_describe(node))
    fn, arities = _TABLE_FUNCTIONS[name]
    if len(node.args) not in arities or any(isinstance(a, ast.Starred) for a in node.args):
        raise _Rejected(f"a call of {name} with {len(node.args)} argument(s)")
    return fn(*(_table_node(a) for a in node.args))


def _table_power(base, exp):
    """``base ** exp``, refusing literal exponents too large to evaluate."""
    if exp.is_Number and abs(exp) > _MAX_EXPONENT:
        raise _Rejected(f"the exponent {exp} (at most {_MAX_EXPONENT} in absolute value)")
    return base ** exp


def _table_node(node: ast.AST):
    """Build the SymPy object of one node of the table grammar; any other node is rejected."""
    if isinstance(node, ast.Constant):
        return _table_number(node.value)
    if isinstance(node, ast.Name):
        if node.id in TABLE_SYMBOLS:
            return TABLE_SYMBOLS[node.id]
        if node.id in _TABLE_CONSTANTS:
            return _TABLE_CONSTANTS[node.id]
        raise _Rejected(_describe(node))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_table_node(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _table_node(node.left), _table_node(node.right)
        if isinstance(node.op, ast.Pow):
            return _table_power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        return _table_call(node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](_table_node(node.left), _table_node(node.comparators[0]))
    if isinstance(node, ast.Compare):
        raise _Rejected("a chained or unsupported comparison")
    if isinstance(node, ast.Tuple):
        return sp.Tuple(*(_table_node(e) for e in node.elts))  # refused as non-scalar later
    raise _Rejected(_describe(node))


def parse_table_expression(text: str) -> sp.Basic:
    """Parse a table string (``P_star``, a parameter, an energy) into a SymPy expression whose
    symbols are the positive symbols of this module (:data:`TABLE_SYMBOLS`); a relation such as
    ``"N < d**3"`` (a validity condition) gives a SymPy relational.

    The text is parsed with :func:`ast.parse` and the SymPy expression is built node by node from
    a fixed grammar (numbers, the table symbols, ``+ - * / **``, ``^`` as power, unary signs,
    one comparison, ``sqrt``/``log``/``exp``); nothing is evaluated by Python, so a table string
    can never run code.

    Raises TypeError if ``text`` is not a str and ValueError (quoting ``text``) if it is not a
    valid expression, contains anything outside the grammar, or evaluates to something that is
    not a finite scalar expression (e.g. ``"1/0"``, which SymPy reads as complex infinity ``zoo``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    bad = sorted(set(_EXPR_FORBIDDEN.findall(text)))
    if bad or "__" in text:
        raise ValueError(f"text must be a table expression ({_GRAMMAR}); {text!r} contains "
                         f"{bad or ['__']}")
    try:
        tree = ast.parse(text.replace("^", "**").strip(), mode="eval")
        expr = _table_node(tree.body)
    except _Rejected as err:
        raise ValueError(f"text must be a table expression ({_GRAMMAR}); {text!r} contains "
                         f"{err}") from None
    except (SyntaxError, RecursionError, MemoryError, TypeError, ValueError) as err:
        raise ValueError(f"text must be a table expression (e.g. 'N*d**2 + 1/D'); could not "
                         f"parse {text!r} ({type(err).__name__}: {err})") from None
    if not isinstance(expr, (sp.Expr, sp.core.relational.Relational)):
        raise ValueError(f"text must be a scalar table expression or relation; {text!r} parses to "
                         f"{type(expr).__name__} {expr!r}")
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise ValueError(f"text must be a finite table expression; {text!r} parses to {expr}")
    return expr
