"""Compile a rule's `when` expression into a durable-rules condition.

A `when` expression is a small, Python-looking condition over the fields of one
fact, for example::

    load_kw > capacity_kw * 0.8 and not psu.redundant
    site.region in ["eu-west", "eu-north"] or exists(waiver)

It is parsed with :func:`ast.parse` (never evaluated: no eval/exec) and only a
whitelist of node types is accepted: field names (dotted names included),
int/float/str/bool literals, ``and``/``or``/``not``, the comparisons
``< <= > >= == !=`` (chained too), ``+ - * /`` and unary minus on numbers,
``field in [literals]`` / ``field not in [...]`` and ``exists(field)``.

Semantics, which follow durable-rules and therefore differ from Python when a
field is missing (a fact leaves out None-valued fields):

* A comparison that involves a missing field is false, whichever side the field
  is on and whatever the operator (``!=`` included).
* ``not`` is pushed down to the comparisons before compiling (De Morgan,
  ``not a > b`` becomes ``a <= b``), so the rule above still holds after
  ``not``: with ``x`` missing, both ``x > 1`` and ``not x > 1`` are false.
  Use ``exists(x)`` / ``not exists(x)`` to test for presence.
* ``flag`` alone means ``flag == True`` and ``not flag`` means ``flag == False``,
  so both are false when ``flag`` is missing.
* ``x in [a, b]`` means ``x == a or x == b``; ``x not in [a, b]`` means
  ``x != a and x != b``.
* Arithmetic is IEEE double arithmetic as in Python; ``/`` is true division and
  its divisor must be a non-zero number literal.
* Numbers and dates support all six comparisons; strings and booleans only
  ``==``, ``!=`` and ``in``. Dates are 'YYYY-MM-DD' strings, ordered as text
  (which orders ISO dates correctly).

durable-rules 2.0.28 behaviours this module works around (measured; see
tests/evaluate/test_expr.py for the experiments that pin them down):

* ``$div`` by an integer 0 kills the process with SIGFPE, and int-by-int
  ``$div`` is C integer division (``1 / 3 == 0``). Hence only non-zero literal
  divisors are accepted and they are always emitted as floats.
* A comparison whose right side names a missing field (``{"$m": "b"}``, also
  inside arithmetic) is TRUE for every operator. Every such comparison is
  therefore guarded with ``{"$ex": {"b": 1}}``.
* Arithmetic whose two operands are both constants never matches, so constant
  sub-expressions are folded here (with Python's identical IEEE arithmetic).
* A number written with an exponent (``1e-05``, ``1e+16``, which is how
  :func:`json.dumps` spells such floats) makes ruleset creation fail (error
  204); such literals are rejected. Integers must fit a C long.
* A condition that is true for a fact lacking every referenced field (a lone
  ``$nex``) also matches durable's own session-state document; its action then
  re-triggers itself forever (the "hang"). The engine always ands the condition
  with ``{"kind": ...}``, which the state document never satisfies.
* Strings are ordered as raw JSON text up to and including the closing quote:
  ``"a"`` sorts after ``"a b"`` (``'"'`` > ``' '``) and escaped characters
  (``"``, ``\\``, control characters) sort as their escapes. So ``< <= > >=``
  are refused on strings; equality is exact. Dates are fixed-width ISO text
  without escapes, which this ordering gets right.
* Size limits. Under one kind test, all rules of a ruleset together may hold
  only about 511 alternatives (each rule's first test after the kind test, and
  each branch of an ``$or`` at that level, such as each value of
  ``x in [...]``); beyond that, asserting a fact never returns. A fact may
  match at most 64 of them (error 303), and an ``and`` of 14 two-way ``or``
  fails ruleset creation (error 113). ``in`` lists are capped at 64 values;
  the rest is the engine's to budget (for instance one ruleset per rule).
* The fact keys ``id`` and ``sid`` are durable's own (fact identity, session),
  so fields with those names are stored under another key, see :func:`fact_key`.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, TypeAlias, get_args

__all__ = [
    "MAX_ALTERNATIVES",
    "CompiledWhen",
    "ExprError",
    "FieldType",
    "alternatives",
    "compile_when",
    "fact_key",
]

FieldType = Literal["number", "string", "boolean", "date"]

# durable reads numbers with a C long / atof; anything json.dumps would spell
# with an exponent, or an int outside a long, is not parsed as written.
_MAX_INT = 2**63 - 1

# Each value of `x in [...]` is one alternative under the fact's kind test.
# durable hangs once one kind has 512 alternatives in a ruleset (all rules
# together) and fails (error 303) once more than 64 of them match one fact.
_MAX_IN_ITEMS = 64

# The engine packs rules into rulesets of at most this many alternatives per
# fact kind, which keeps both limits above far away; one rule may not exceed it.
MAX_ALTERNATIVES = 64

# durable's own keys in a fact: "id" identifies the fact, "sid" picks the session.
_RESERVED_KEYS = frozenset({"id", "sid"})

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

_Scalar: TypeAlias = "bool | int | float | str"
_Json: TypeAlias = "dict[str, Any]"


class ExprError(Exception):
    """A bad `when` expression. line/column are 1-based positions inside the expression text."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class CompiledWhen:
    """A compiled `when`: `condition` is the durable-rules condition for one fact."""

    source: str
    condition: dict[str, Any]
    fields: frozenset[str]


def fact_key(field: str) -> str:
    """The key under which `field` must be stored in the flat fact sent to durable.

    durable resolves a dotted key such as "psu.count" both as a flat key and as
    a nested path, so dotted names are kept as they are. Only durable's own keys
    are moved away; "@" cannot occur in a name a `when` can use, so nothing clashes.
    """
    return f"@{field}" if field in _RESERVED_KEYS else field


# --------------------------------------------------------------------------
# Intermediate form: operands (values) and conditions (boolean structure).


@dataclass(frozen=True)
class _Field:
    name: str
    type: FieldType
    node: ast.expr


@dataclass(frozen=True)
class _Const:
    value: _Scalar
    type: FieldType
    node: ast.expr


@dataclass(frozen=True)
class _Arith:
    op: str  # "$add" | "$sub" | "$mul" | "$div"
    left: _Operand
    right: _Operand
    node: ast.expr

    @property
    def type(self) -> FieldType:
        return "number"


_Operand: TypeAlias = "_Field | _Const | _Arith"


@dataclass(frozen=True)
class _Compare:
    field: str
    op: str  # "$lt" | "$lte" | "$gt" | "$gte" | "$eq" | "$neq"
    value: _Operand


@dataclass(frozen=True)
class _Exists:
    field: str
    present: bool


@dataclass(frozen=True)
class _Junction:
    op: str  # "$and" | "$or"
    parts: tuple[_Cond, ...]


_Cond: TypeAlias = "_Compare | _Exists | _Junction"

_COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Lt: "$lt",
    ast.LtE: "$lte",
    ast.Gt: "$gt",
    ast.GtE: "$gte",
    ast.Eq: "$eq",
    ast.NotEq: "$neq",
}
# Operator seen from the other side: `3 < x` is `x > 3`.
_FLIPPED = {
    "$lt": "$gt",
    "$lte": "$gte",
    "$gt": "$lt",
    "$gte": "$lte",
    "$eq": "$eq",
    "$neq": "$neq",
}
# Operator of the negated comparison: `not x < 3` is `x >= 3` (no NaN can occur).
_INVERTED = {
    "$lt": "$gte",
    "$lte": "$gt",
    "$gt": "$lte",
    "$gte": "$lt",
    "$eq": "$neq",
    "$neq": "$eq",
}
_SYMBOLS = {"$lt": "<", "$lte": "<=", "$gt": ">", "$gte": ">=", "$eq": "==", "$neq": "!="}
# Strings are not ordered: durable compares raw JSON text, see the docstring.
# Dates are fixed-width ISO text without escapes, which durable orders right.
_ORDERED_TYPES = frozenset({"number", "date"})
_UNORDERED_WHY = {
    "string": "; durable-rules orders strings wrongly ('a' > 'a b')",
    "boolean": "",
}

_ARITH_OPS: dict[type[ast.operator], str] = {
    ast.Add: "$add",
    ast.Sub: "$sub",
    ast.Mult: "$mul",
    ast.Div: "$div",
}
_BAD_OPERATORS: dict[type[ast.AST], str] = {
    ast.Pow: "'**'",
    ast.Mod: "'%'",
    ast.FloorDiv: "'//'",
    ast.MatMult: "'@'",
    ast.LShift: "'<<'",
    ast.RShift: "'>>'",
    ast.BitAnd: "'&' (use 'and')",
    ast.BitOr: "'|' (use 'or')",
    ast.BitXor: "'^'",
    ast.Invert: "'~'",
    ast.UAdd: "unary '+'",
    ast.Is: "'is' (use == or exists())",
    ast.IsNot: "'is not' (use != or exists())",
}
_NODE_NAMES: dict[type[ast.AST], str] = {
    ast.Subscript: "subscripts",
    ast.Lambda: "lambda expressions",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.IfExp: "conditional expressions",
    ast.NamedExpr: "':=' assignments",
    ast.JoinedStr: "f-strings",
    ast.Starred: "'*' unpacking",
    ast.List: "lists outside 'in [...]'",
    ast.Tuple: "tuples",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}


# --------------------------------------------------------------------------
# Entry point.


def compile_when(source: str, fields: Mapping[str, FieldType]) -> CompiledWhen:
    """Parse, type-check and compile `source` over the given fact fields.

    Raises ExprError for anything outside the language or badly typed.
    """
    _check_field_types(fields)
    text, shift = _split_indent(source.replace("\r\n", "\n").replace("\r", "\n"))
    walker = _Walker(text, shift, fields)
    try:
        cond = walker.condition(_parse(text, shift).body)
    except (RecursionError, MemoryError):  # from the parser (its stack: MemoryError) or our walk
        raise ExprError("expression is nested too deeply", *shift) from None
    condition = _cond_json(cond)
    count = alternatives(condition)
    if count > MAX_ALTERNATIVES:
        raise ExprError(
            f"expression expands to {count} alternatives (and of ors multiply); "
            f"at most {MAX_ALTERNATIVES}: split it into several rules",
            *shift,
        )
    return CompiledWhen(source, condition, frozenset(walker.used))


def alternatives(condition: Mapping[str, Any]) -> int:
    """How many alternatives durable-rules expands a condition into: the size of
    its disjunctive normal form (an `and` of `or`s multiplies, an `or` adds)."""
    if "$and" in condition:
        return math.prod(alternatives(c) for c in condition["$and"])
    if "$or" in condition:
        return sum(alternatives(c) for c in condition["$or"])
    return 1


def _check_field_types(fields: Mapping[str, FieldType]) -> None:
    # A wrong field table is a programming error, not a user's bad expression.
    allowed = get_args(FieldType)
    for name, kind in fields.items():
        if kind not in allowed:
            raise ValueError(f"field {name!r} has unknown type {kind!r}")


def _split_indent(text: str) -> tuple[str, tuple[int, int]]:
    """Drop leading whitespace, which Python rejects as an indent.

    Returns the rest and the (line, column) of its start, so that reported
    positions still point into the original text.
    """
    lead = re.match(r"\s*", text)
    consumed = lead.group() if lead else ""
    line = consumed.count("\n") + 1
    column = len(consumed) - (consumed.rfind("\n") + 1) + 1
    return text[len(consumed) :], (line, column)


def _parse(text: str, shift: tuple[int, int]) -> ast.Expression:
    if not text.strip():
        raise ExprError("empty expression", *shift)
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as error:
        line = error.lineno or 1
        column = error.offset or _end_column(text, line)  # 0 means "at the end"
        raise ExprError(f"syntax error: {error.msg}", *_shifted(shift, line, column)) from None
    except ValueError as error:  # e.g. NUL characters (a SyntaxError from 3.12 on)
        raise ExprError(f"syntax error: {error}", *shift) from None


def _end_column(text: str, line: int) -> int:
    lines = text.split("\n")
    return len(lines[min(line, len(lines)) - 1]) + 1


def _shifted(shift: tuple[int, int], line: int, column: int) -> tuple[int, int]:
    # Only the first parsed line starts after the stripped indentation.
    return line + shift[0] - 1, column + (shift[1] - 1 if line == 1 else 0)


# --------------------------------------------------------------------------
# AST walker: whitelist, field resolution, type checks, constant folding.


class _Walker:
    def __init__(self, text: str, shift: tuple[int, int], fields: Mapping[str, FieldType]) -> None:
        self.lines = text.split("\n")
        self.shift = shift
        self.fields = fields
        self.used: set[str] = set()

    # ---- errors -----------------------------------------------------------

    def error(self, message: str, node: ast.AST) -> ExprError:
        line: int = getattr(node, "lineno", 1)
        offset: int = getattr(node, "col_offset", 0)
        # col_offset counts UTF-8 bytes; users count characters.
        encoded = self.lines[line - 1].encode("utf-8") if line <= len(self.lines) else b""
        column = len(encoded[:offset].decode("utf-8", errors="replace")) + 1
        return ExprError(message, *_shifted(self.shift, line, column))

    def unsupported(self, node: ast.AST) -> ExprError:
        name = _NODE_NAMES.get(type(node))
        if isinstance(node, ast.Call):
            return self.error("function calls other than exists(field) are not allowed", node)
        if isinstance(node, ast.Attribute):
            return self.error("attribute access is only allowed on field names", node)
        if name is None:
            name = f"'{type(node).__name__}' expressions"
        return self.error(f"{name} are not allowed in a `when` expression", node)

    # ---- conditions -------------------------------------------------------

    def condition(self, node: ast.expr) -> _Cond:
        if isinstance(node, ast.BoolOp):
            op = "$and" if isinstance(node.op, ast.And) else "$or"
            return _Junction(op, tuple(self.condition(value) for value in node.values))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _negate(self.condition(node.operand))
        if isinstance(node, ast.Compare):
            return self.comparison_chain(node)
        if isinstance(node, ast.Call):
            return _Exists(self.exists_argument(node), present=True)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.bare_flag(node)
        if isinstance(node, ast.Constant):
            raise self.error("a constant cannot be used as a condition", node)
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            self.operand(node)  # a bad operator or operand is the better message
            raise self.error("an arithmetic value cannot be used as a condition", node)
        raise self.unsupported(node)

    def bare_flag(self, node: ast.Name | ast.Attribute) -> _Cond:
        field = self.field(node)
        if field.type != "boolean":
            raise self.error(f"{_describe(field)} cannot be used as a condition on its own; compare it", node)
        return _Compare(field.name, "$eq", _Const(True, "boolean", node))

    def exists_argument(self, node: ast.Call) -> str:
        func = node.func
        if not (isinstance(func, ast.Name) and func.id == "exists"):
            raise self.unsupported(node)
        args = node.args
        if node.keywords or len(args) != 1 or not isinstance(args[0], (ast.Name, ast.Attribute)):
            raise self.error("exists() takes exactly one field name", node)
        return self.field(args[0]).name

    def comparison_chain(self, node: ast.Compare) -> _Cond:
        # `a < b < c` is `a < b and b < c`, as in Python.
        lefts = [node.left, *node.comparators[:-1]]
        parts = [
            self.comparison(left, op, right)
            for left, op, right in zip(lefts, node.ops, node.comparators, strict=True)
        ]
        return parts[0] if len(parts) == 1 else _Junction("$and", tuple(parts))

    def comparison(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> _Cond:
        if isinstance(op, (ast.In, ast.NotIn)):
            return self.membership(left, isinstance(op, ast.In), right)
        durable_op = _COMPARE_OPS.get(type(op))
        if durable_op is None:
            raise self.error(f"operator {_BAD_OPERATORS[type(op)]} is not allowed", left)
        lhs, rhs = self.operand(left), self.operand(right)
        lhs, rhs = _coerce_dates(lhs, rhs, self), _coerce_dates(rhs, lhs, self)
        self.check_comparable(durable_op, lhs, rhs, left)
        return self.orient(durable_op, lhs, rhs, left)

    def orient(self, op: str, lhs: _Operand, rhs: _Operand, node: ast.expr) -> _Compare:
        # durable wants a bare fact field on the left; flip the operator if it
        # is on the right. No algebra: moving terms would change the rounding.
        if isinstance(lhs, _Field):
            return _Compare(lhs.name, op, rhs)
        if isinstance(rhs, _Field):
            return _Compare(rhs.name, _FLIPPED[op], lhs)
        raise self.error(
            "a comparison needs a fact field alone on one side (e.g. load_kw > capacity_kw * 0.8)",
            node,
        )

    def check_comparable(self, op: str, lhs: _Operand, rhs: _Operand, node: ast.expr) -> None:
        if lhs.type != rhs.type:
            raise self.error(f"cannot compare {_describe(lhs)} with {_describe(rhs)}", node)
        if op not in ("$eq", "$neq") and lhs.type not in _ORDERED_TYPES:
            why = _UNORDERED_WHY[lhs.type]
            raise self.error(f"{lhs.type} values only support ==, != and in, not {_SYMBOLS[op]}{why}", node)

    def membership(self, left: ast.expr, positive: bool, right: ast.expr) -> _Cond:
        if not isinstance(right, ast.List):
            raise self.error("'in' needs a list of literals, e.g. x in [1, 2]", right)
        if not right.elts:
            raise self.error("'in' needs a non-empty list", right)
        lhs = self.operand(left)
        if not isinstance(lhs, _Field):
            raise self.error("'in' needs a fact field alone on its left", left)
        if len(right.elts) > _MAX_IN_ITEMS:
            raise self.error(f"'in' lists may hold at most {_MAX_IN_ITEMS} values", right)
        op = "$eq" if positive else "$neq"
        parts = _unique_values([self.list_item(lhs, op, item) for item in right.elts])
        return parts[0] if len(parts) == 1 else _Junction("$or" if positive else "$and", parts)

    def list_item(self, lhs: _Field, op: str, item: ast.expr) -> _Compare:
        value = self.operand(item)
        if not isinstance(value, _Const):
            raise self.error("'in' lists may only hold literals", item)
        value = _coerce_dates(value, lhs, self)
        self.check_comparable(op, lhs, value, item)
        return _Compare(lhs.name, op, value)

    # ---- operands ---------------------------------------------------------

    def operand(self, node: ast.expr) -> _Operand:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.field(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            raise self.error("a condition cannot be used as a value", node)
        raise self.unsupported(node)

    def constant(self, node: ast.Constant) -> _Const:
        value = node.value
        if isinstance(value, bool):
            return _Const(value, "boolean", node)
        if isinstance(value, (int, float)):
            return _Const(self.number(value, node), "number", node)
        if isinstance(value, str):
            return _Const(value, "string", node)
        if value is None:
            raise self.error("None is not allowed; use exists(field) / not exists(field)", node)
        raise self.error(f"{type(value).__name__} literals are not allowed", node)

    def number(self, value: int | float, node: ast.expr) -> int | float:
        if isinstance(value, int) and abs(value) > _MAX_INT:
            raise self.error(f"integer {value} is too large for durable-rules", node)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error("number is not finite", node)
        if isinstance(value, float) and "e" in repr(value):
            raise self.error(
                f"number {value!r} needs exponent notation, which durable-rules cannot read; "
                "use a value between 0.0001 and 1e16 in magnitude",
                node,
            )
        return value

    def field(self, node: ast.Name | ast.Attribute) -> _Field:
        name = self.dotted_name(node)
        kind = self.fields.get(name)
        if kind is None:
            raise self.error(_unknown_field_message(name, self.fields), node)
        self.used.add(name)
        return _Field(name, kind, node)

    def dotted_name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            return f"{self.dotted_name(node.value)}.{node.attr}"
        raise self.unsupported(node)

    def unary(self, node: ast.UnaryOp) -> _Operand:
        if not isinstance(node.op, ast.USub):
            if isinstance(node.op, ast.Not):
                raise self.error("a condition cannot be used as a value", node)
            raise self.error(f"operator {_BAD_OPERATORS[type(node.op)]} is not allowed", node)
        operand = self.arith_operand(node.operand)
        zero = _Const(0, "number", node)
        return self.fold(_Arith("$sub", zero, operand, node))

    def binary(self, node: ast.BinOp) -> _Operand:
        op = _ARITH_OPS.get(type(node.op))
        if op is None:
            raise self.error(f"operator {_BAD_OPERATORS[type(node.op)]} is not allowed", node)
        left = self.arith_operand(node.left)
        right = self.arith_operand(node.right)
        if op == "$div":
            right = self.divisor(right)
        return self.fold(_Arith(op, left, right, node))

    def arith_operand(self, node: ast.expr) -> _Operand:
        value = self.operand(node)
        if value.type != "number":
            raise self.error(f"arithmetic needs numbers, not {_describe(value)}", node)
        return value

    def divisor(self, value: _Operand) -> _Const:
        # durable dies (SIGFPE) on integer division by 0 and truncates int/int,
        # so only a non-zero literal is accepted, always sent as a float.
        if not isinstance(value, _Const):
            raise self.error("the divisor of '/' must be a non-zero number literal", value.node)
        if value.value == 0:
            raise self.error("division by zero", value.node)
        return _Const(float(value.value), "number", value.node)

    def fold(self, arith: _Arith) -> _Operand:
        # durable never matches arithmetic on two constants, so compute it here;
        # Python's float arithmetic is the same IEEE arithmetic durable uses.
        left, right = arith.left, arith.right
        if not (isinstance(left, _Const) and isinstance(right, _Const)):
            return arith
        a, b = left.value, right.value
        assert isinstance(a, (int, float)) and isinstance(b, (int, float))
        result = {"$add": a + b, "$sub": a - b, "$mul": a * b}.get(arith.op)
        value = a / b if result is None else result
        return _Const(self.number(value, arith.node), "number", arith.node)


def _coerce_dates(value: _Operand, other: _Operand, walker: _Walker) -> _Operand:
    """A string literal compared with a date becomes a date, if it is one."""
    if not (isinstance(value, _Const) and value.type == "string" and other.type == "date"):
        return value
    text = value.value
    assert isinstance(text, str)
    if not _is_iso_date(text):
        raise walker.error(f"{text!r} is not a date written as 'YYYY-MM-DD'", value.node)
    return _Const(text, "date", value.node)


def _is_iso_date(text: str) -> bool:
    if not _DATE_RE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _unique_values(items: list[_Compare]) -> tuple[_Compare, ...]:
    """Drop repeated list values: each one costs a durable alternative (see _MAX_IN_ITEMS)."""
    unique: dict[object, _Compare] = {}
    for item in items:
        assert isinstance(item.value, _Const)
        unique.setdefault(item.value.value, item)  # 1 and 1.0 count as one, as in Python
    return tuple(unique.values())


def _describe(value: _Operand) -> str:
    if isinstance(value, _Field):
        return f"{value.type} field '{value.name}'"
    if isinstance(value, _Const):
        return f"{value.type} {value.value!r}"
    return "a number expression"


def _unknown_field_message(name: str, fields: Mapping[str, FieldType]) -> str:
    close = difflib.get_close_matches(name, list(fields), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown field '{name}'{hint}"


def _negate(cond: _Cond) -> _Cond:
    """`not cond` pushed down to the comparisons (De Morgan)."""
    if isinstance(cond, _Compare):
        return _Compare(cond.field, _INVERTED[cond.op], cond.value)
    if isinstance(cond, _Exists):
        return _Exists(cond.field, not cond.present)
    op = "$or" if cond.op == "$and" else "$and"
    return _Junction(op, tuple(_negate(part) for part in cond.parts))


# --------------------------------------------------------------------------
# JSON output.


def _cond_json(cond: _Cond) -> _Json:
    if isinstance(cond, _Exists):
        return {"$ex" if cond.present else "$nex": {fact_key(cond.field): 1}}
    if isinstance(cond, _Compare):
        return _compare_json(cond)
    return _junction_json(cond.op, [_cond_json(part) for part in cond.parts])


def _compare_json(cond: _Compare) -> _Json:
    cond = _positive_flag(cond)
    test = {cond.op: {fact_key(cond.field): _value_json(cond.value)}}
    # durable treats a comparison with a missing right-hand field as TRUE;
    # requiring the field keeps "a missing field makes a comparison false".
    guards = [{"$ex": {fact_key(name): 1}} for name in _fields_in(cond.value) if name != cond.field]
    return _junction_json("$and", [*guards, test]) if guards else test


def _positive_flag(cond: _Compare) -> _Compare:
    """`flag != True` as `flag == False`: same meaning, and how `not flag` reads."""
    value = cond.value
    if cond.op != "$neq" or not isinstance(value, _Const) or value.type != "boolean":
        return cond
    return _Compare(cond.field, "$eq", _Const(not value.value, "boolean", value.node))


def _junction_json(op: str, parts: list[_Json]) -> _Json:
    # Flatten nested same-operator junctions: easier to read, same meaning.
    flat: list[_Json] = []
    for part in parts:
        flat.extend(part[op] if list(part) == [op] else [part])
    return {op: flat}


def _value_json(value: _Operand) -> Any:
    if isinstance(value, _Const):
        return value.value
    if isinstance(value, _Field):
        return {"$m": fact_key(value.name)}
    return {value.op: {"$l": _value_json(value.left), "$r": _value_json(value.right)}}


def _fields_in(value: _Operand) -> list[str]:
    """Field names used in an operand, first occurrence first, without repeats."""
    if isinstance(value, _Field):
        return [value.name]
    if isinstance(value, _Const):
        return []
    return list(dict.fromkeys([*_fields_in(value.left), *_fields_in(value.right)]))
