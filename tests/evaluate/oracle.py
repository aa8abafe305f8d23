"""A reference interpreter of the durable-rules conditions that expr.py compiles.

It reads the JSON condition a `CompiledWhen` holds (not the `when` text) and
decides it for one fact, in plain Python, so the tests can check durable-rules
(the engine, which stays the only engine) against an independent reading.
Nothing is evaluated with eval/exec; the condition is walked as data.

The semantics are durable-rules 2.0.28's, read from its C source
(src/rules/events.c: reduceProperties, reduceInt/Double/Bool/String,
isAlphaMatch, handleAlpha; state.c: setObjectProperty) and from the quirks
docs/architecture.md lists ("durable-rules, as used here"):

* A comparison is reached only through its left field: a missing left field
  makes it false, whatever the operator. `$ex`/`$nex` test presence.
* Values keep their JSON type: an int, a double (a number with a dot), a
  boolean, a string (its raw JSON text, escapes as written), null.
* int op int is C `long long` arithmetic (wrapping, `/` truncating toward
  zero); any double makes it C double arithmetic (the int converted to a
  double, as C does, not compared exactly as Python would); a boolean is 0/1
  against numbers, but bool + bool is AND and bool * bool is XOR, and bool - /
  bool are unsupported.
* Strings compare with strncmp over the longer of the two lengths; a fact's
  string is followed by its closing quote, a literal by NUL. So equality is
  exact but order is raw JSON order ('a' > 'a b'). A boolean is compared with
  a string as the text "true " (length 4) or "false " (length 5).
* An operation durable does not support (arithmetic on a string, `-` on two
  booleans, arithmetic over constants only, which durable leaves untyped)
  makes the comparison false (isAlphaMatch treats ERR_OPERATION_NOT_SUPPORTED
  as no match).

Two cases are not modelled, and give UNDEFINED (None):

* A comparison whose right side reads a missing field ({"$m": ...}, also
  inside arithmetic). docs/architecture.md calls it true for every operator
  (pinned by test_expr.py::test_quirk_missing_right_hand_field_makes_any_comparison_true)
  and expr.py guards every such field with `$ex`; but isAlphaMatch then reads
  a result nobody wrote, and inside deeper arithmetic it is measurably false
  too (see test_oracle.py), so the oracle does not guess.
* A number compared with a string. durable prints the number ("%lld", or
  "%f" for a double) and compares it as text over a length that is the
  number's JSON text length (which depends on how the engine wrote the
  number: "5.0" or "5") or, for a literal or an arithmetic result, a length
  nobody initialised.

`and`/`or` are three-valued (Kleene), which is sound here: durable reaches
some boolean for an unknown comparison, and a false conjunct or a true
disjunct decides regardless.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["UNDEFINED", "OracleError", "document", "matches"]

UNDEFINED = None
Verdict = bool | None  # None: UNDEFINED

_INT64 = 2**63
# The engine writes numbers of at least this magnitude clamped (engine._number),
# so a fact value there is not what durable compares: outside this oracle.
_EXACT_MAGNITUDE = 1e15

_COMPARISONS = frozenset({"$lt", "$lte", "$gt", "$gte", "$eq", "$neq"})
_ARITHMETIC = frozenset({"$add", "$sub", "$mul", "$div"})


class OracleError(Exception):
    """A condition or value outside what this oracle (and expr.py) handles."""


class _NotSupported(Exception):
    """durable's ERR_OPERATION_NOT_SUPPORTED: the comparison does not match."""


class _MissingReference(Exception):
    """A {"$m": field} naming a field the fact lacks: durable's verdict is not defined."""


# ---------------------------------------------------------------------------
# Values as durable holds them.


@dataclass(frozen=True)
class _Int:
    value: int


@dataclass(frozen=True)
class _Double:
    value: float


@dataclass(frozen=True)
class _Bool:
    value: bool


@dataclass(frozen=True)
class _Str:
    # The bytes strncmp may read, and the length durable gives the string.
    text: bytes
    length: int


@dataclass(frozen=True)
class _Nil:
    pass


_Value = _Int | _Double | _Bool | _Str | _Nil

# reduceProperties compares a boolean with a string as these C literals, with these lengths.
_TRUE_TEXT = _Str(b"true \0", 4)
_FALSE_TEXT = _Str(b"false \0", 5)


def _raw_json_string(text: str) -> bytes:
    """A string's text between its quotes as the engine's json.dumps(ensure_ascii=False) writes it."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")


def _fact_value(key: str, value: Any) -> _Value:
    if isinstance(value, bool):
        return _Bool(value)
    if isinstance(value, int):
        if abs(value) >= _EXACT_MAGNITUDE:
            raise OracleError(f"fact field {key}: {value} is clamped by the engine, not modelled")
        return _Int(value)
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= _EXACT_MAGNITUDE:
            raise OracleError(f"fact field {key}: {value} is clamped by the engine, not modelled")
        # The engine writes a whole float either as "5.0" (double) or "5" (int),
        # depending on the batch; as a number it is the same value either way,
        # and only number-vs-string comparisons (UNDEFINED here) could tell.
        return _Double(value)
    if isinstance(value, str):
        raw = _raw_json_string(value)
        # setObjectProperty points into the message: the closing quote follows.
        return _Str(raw + b'"', len(raw))
    raise OracleError(f"fact field {key}: unsupported value {value!r}")


def _literal(value: Any) -> _Value:
    if value is None:
        return _Nil()
    if isinstance(value, bool):
        return _Bool(value)
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise OracleError(f"integer literal {value} does not fit a C long")
        return _Int(value)
    if isinstance(value, float):
        if not math.isfinite(value) or "e" in repr(value):
            # json.dumps would write an exponent, which durable refuses (error 204).
            raise OracleError(f"number literal {value!r} cannot be read by durable-rules")
        return _Double(value)
    if isinstance(value, str):
        raw = _raw_json_string(value)
        return _Str(raw + b"\0", len(raw))  # a C string in the rule's string pool
    raise OracleError(f"unsupported literal {value!r}")


def document(values: Mapping[str, Any]) -> dict[str, Any]:
    """A fact as durable receives it from the engine: None (no value) and NaN
    are left out (engine.fact_json), every other value kept under its key."""
    return {k: v for k, v in values.items() if v is not None and not (isinstance(v, float) and v != v)}


# ---------------------------------------------------------------------------
# Conditions.


def matches(condition: Mapping[str, Any], fact: Mapping[str, Any]) -> Verdict:
    """Whether durable-rules matches `condition` on `fact` (keys as durable sees
    them, see expr.fact_key; missing fields absent): True, False or UNDEFINED."""
    typed = {key: _fact_value(key, value) for key, value in fact.items()}
    return _condition(condition, typed)


def _condition(condition: Mapping[str, Any], fact: Mapping[str, _Value]) -> Verdict:
    if len(condition) != 1:
        raise OracleError(f"a condition holds one operator, not {sorted(condition)}")
    ((op, body),) = condition.items()
    if op == "$and":
        return _all(_condition(part, fact) for part in _parts(op, body))
    if op == "$or":
        return _any(_condition(part, fact) for part in _parts(op, body))
    if op in ("$ex", "$nex"):
        (key,) = _single(op, body)
        return (key in fact) is (op == "$ex")
    if op in _COMPARISONS:
        ((key, right),) = _single(op, body).items()
        return _comparison(op, key, right, fact)
    if not op.startswith("$"):  # {"kind": "rack"}: durable's shorthand for $eq
        return _comparison("$eq", op, body, fact)
    raise OracleError(f"operator {op} is not modelled")


def _parts(op: str, body: Any) -> list[Mapping[str, Any]]:
    if not isinstance(body, list) or not body:
        raise OracleError(f"{op} needs a non-empty list")
    return body


def _single(op: str, body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping) or len(body) != 1:
        raise OracleError(f"{op} needs one field")
    return body


def _all(verdicts: Any) -> Verdict:
    seen = list(verdicts)
    if False in seen:
        return False
    return UNDEFINED if UNDEFINED in seen else True


def _any(verdicts: Any) -> Verdict:
    seen = list(verdicts)
    if True in seen:
        return True
    return UNDEFINED if UNDEFINED in seen else False


def _comparison(op: str, key: str, right: Any, fact: Mapping[str, _Value]) -> Verdict:
    left = fact.get(key)
    if left is None:  # the alpha node is reached through the left field only
        return False
    try:
        value = _operand(right, fact)
        return _compare(op, left, value)
    except _NotSupported:
        return False
    except _MissingReference:
        return UNDEFINED  # uninitialised in durable; expr.py guards every $m with $ex


# ---------------------------------------------------------------------------
# Operands and arithmetic.


def _operand(node: Any, fact: Mapping[str, _Value]) -> _Value:
    if not isinstance(node, Mapping):
        return _literal(node)
    if len(node) != 1:
        raise OracleError(f"an operand holds one operator, not {sorted(node)}")
    ((op, body),) = node.items()
    if op == "$m":
        if not isinstance(body, str):
            raise OracleError("$m names a field")
        value = fact.get(body)
        if value is None:
            raise _MissingReference(body)
        return value
    if op not in _ARITHMETIC:
        raise OracleError(f"operand {op} is not modelled")
    if not isinstance(body, Mapping) or set(body) != {"$l", "$r"}:
        raise OracleError(f"{op} needs $l and $r")
    if not _reads_fact(node):
        # readExpression gives an expression over constants only no type, and
        # reduceOperand refuses an untyped operand.
        raise _NotSupported(op)
    return _arith(op, _operand(body["$l"], fact), _operand(body["$r"], fact))


def _reads_fact(node: Any) -> bool:
    """Whether an operand reads a fact field somewhere below it."""
    if not isinstance(node, Mapping):
        return False
    for op, body in node.items():
        if op == "$m":
            return True
        if isinstance(body, Mapping) and (_reads_fact(body.get("$l")) or _reads_fact(body.get("$r"))):
            return True
    return False


def _wrap(value: int) -> int:
    """C long long arithmetic, as it wraps on the machines durable runs on."""
    return (value + _INT64) % (2 * _INT64) - _INT64


def _c_int_div(a: int, b: int) -> int:
    if b == 0:
        raise OracleError("integer division by zero kills durable-rules (SIGFPE)")
    quotient = abs(a) // abs(b)
    return _wrap(quotient if (a < 0) == (b < 0) else -quotient)


def _c_double_div(a: float, b: float) -> float:
    if b != 0:
        return a / b
    if a == 0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _number(value: _Value) -> int | float | None:
    """The value reduceProperties computes with: ints and booleans as integers, doubles as doubles."""
    if isinstance(value, _Bool):
        return int(value.value)
    if isinstance(value, (_Int, _Double)):
        return value.value
    return None


def _arith(op: str, left: _Value, right: _Value) -> _Value:
    if isinstance(left, _Nil) or isinstance(right, _Nil):
        nil_result = _nil(op, left, right)
        if nil_result is None:
            raise _NotSupported(op)
        return nil_result
    if isinstance(left, _Bool) and isinstance(right, _Bool):
        if op == "$add":
            return _Bool(left.value and right.value)  # reduceBool: left & right
        if op == "$mul":
            return _Bool(left.value != right.value)  # reduceBool: left ^ right
        raise _NotSupported(op)
    a, b = _number(left), _number(right)
    if a is None or b is None:  # a string: reduceString supports no arithmetic
        raise _NotSupported(op)
    if isinstance(left, _Double) or isinstance(right, _Double):
        x, y = float(a), float(b)
        result = {"$add": x + y, "$sub": x - y, "$mul": x * y}.get(op)
        return _Double(_c_double_div(x, y) if result is None else result)
    assert isinstance(a, int) and isinstance(b, int)
    if op == "$div":
        return _Int(_c_int_div(a, b))
    return _Int(_wrap({"$add": a + b, "$sub": a - b, "$mul": a * b}[op]))


def _nil(op: str, left: _Value, right: _Value) -> _Value | None:
    """reduceProperties with a null: x vs null is only !=, null vs null only ==
    (for every operator, arithmetic included); null vs x is unsupported (None)."""
    if isinstance(left, _Nil) and isinstance(right, _Nil):
        return _Bool(op == "$eq")
    if isinstance(right, _Nil):
        return _Bool(op == "$neq")
    return None


# ---------------------------------------------------------------------------
# Comparisons.


def _compare(op: str, left: _Value, right: _Value) -> Verdict:
    if isinstance(left, _Nil) or isinstance(right, _Nil):
        result = _nil(op, left, right)
        if result is None:
            raise _NotSupported(op)
        assert isinstance(result, _Bool)
        return result.value
    if isinstance(left, _Str) or isinstance(right, _Str):
        return _compare_text(op, left, right)
    a, b = _number(left), _number(right)
    assert a is not None and b is not None
    if isinstance(left, _Double) or isinstance(right, _Double):
        # C converts the other side to double; Python would compare int and float exactly.
        a, b = float(a), float(b)
    # Python's operators on two floats or two ints are C's (NaN included).
    return {
        "$lt": a < b,
        "$lte": a <= b,
        "$gt": a > b,
        "$gte": a >= b,
        "$eq": a == b,
        "$neq": a != b,
    }[op]


def _compare_text(op: str, left: _Value, right: _Value) -> Verdict:
    a, b = _as_text(left), _as_text(right)
    if a is None or b is None:
        return UNDEFINED  # a number against a string: see the module docstring
    return _ordered(op, _strncmp(a.text, b.text, max(a.length, b.length)))


def _as_text(value: _Value) -> _Str | None:
    if isinstance(value, _Str):
        return value
    if isinstance(value, _Bool):
        return _TRUE_TEXT if value.value else _FALSE_TEXT
    return None


def _strncmp(a: bytes, b: bytes, n: int) -> int:
    for i in range(n):
        if i >= len(a) or i >= len(b):
            # Past a fact string's closing quote: only possible for text that is
            # not valid escaped JSON, which the engine never sends.
            raise OracleError("strncmp would read past the known text")
        if a[i] != b[i]:
            return -1 if a[i] < b[i] else 1
        if a[i] == 0:
            return 0
    return 0


def _ordered(op: str, sign: int) -> bool:
    return {
        "$lt": sign < 0,
        "$lte": sign <= 0,
        "$gt": sign > 0,
        "$gte": sign >= 0,
        "$eq": sign == 0,
        "$neq": sign != 0,
    }[op]
