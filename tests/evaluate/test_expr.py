"""Tests for checker.evaluate.expr: the `when` language and its durable-rules encoding.

The heart is a differential test: random well-typed expressions are compiled
and run through the real durable-rules engine, and every (rule, fact) verdict
is compared with a small reference evaluator that walks the same Python AST.

Float exactness: generated numbers (fact values and literals) are small
multiples of 0.5 and divisors are powers of two, so every intermediate result
is an exact binary fraction and no comparison can depend on rounding.
"""

from __future__ import annotations

import ast
import itertools
import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from checker.evaluate import engine as checker_engine
from checker.evaluate.expr import CompiledWhen, ExprError, FieldType, compile_when, fact_key

FIELDS: dict[str, FieldType] = {
    "load_kw": "number",
    "capacity_kw": "number",
    "psu.count": "number",
    "name": "string",
    "site.region": "string",
    "id": "string",  # durable's own key: exercises fact_key's renaming
    "active": "boolean",
    "psu.redundant": "boolean",
    "commissioned": "date",
    "warranty.end": "date",
}
NUMBERS = [name for name, kind in FIELDS.items() if kind == "number"]
STRINGS = [name for name, kind in FIELDS.items() if kind == "string"]
BOOLEANS = [name for name, kind in FIELDS.items() if kind == "boolean"]
DATES = [name for name, kind in FIELDS.items() if kind == "date"]

Fact = dict[str, Any]


# --------------------------------------------------------------------------
# Driving the real engine.


def fire(conditions: Sequence[Mapping[str, Any]], facts: Sequence[Fact]) -> set[tuple[int, int]]:
    """(rule index, fact index) pairs that fire through the engine's own path:
    conditions packed into rulesets, facts written by the engine's cells_json."""
    fields = frozenset(name for fact in facts for name in fact)
    whens = [CompiledWhen("", dict(c), fields) for c in conditions]
    return set(checker_engine.match_kind("rack", whens, facts))


def fire_raw(conditions: Sequence[Mapping[str, Any]], facts: Sequence[Fact]) -> set[tuple[int, int]]:
    """The same in one ruleset, with facts written by json.dumps as durable-rules
    itself would: for pinning durable's raw behaviour, bypassing our workarounds."""
    wrapped = [{"$and": [{"kind": "rack"}, dict(c)]} for c in conditions]
    raw = [
        {**{fact_key(k): v for k, v in fact.items() if v is not None}, "kind": "rack", "id": index}
        for index, fact in enumerate(facts)
    ]
    return checker_engine.run_ruleset(wrapped, json.dumps(raw, ensure_ascii=False))


def fires(source: str, fact: Fact) -> bool:
    return bool(fire([compile_when(source, FIELDS).condition], [fact]))


def full_fact(**overrides: Any) -> Fact:
    """A fact with every field; `psu__count=None` overrides (here: drops) "psu.count"."""
    fact: Fact = {
        "load_kw": 10,
        "capacity_kw": 12.5,
        "psu.count": 2,
        "name": "A01",
        "site.region": "eu",
        "id": "rack-1",
        "active": True,
        "psu.redundant": False,
        "commissioned": "2024-03-01",
        "warranty.end": "2027-03-01",
    }
    for key, value in overrides.items():
        fact[key.replace("__", ".")] = value
    return fact


# --------------------------------------------------------------------------
# Reference evaluators (AST walkers; no eval).


def dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    assert isinstance(node, ast.Attribute)
    return f"{dotted(node.value)}.{node.attr}"


def python_value(node: ast.expr, fact: Fact) -> Any:
    """Plain Python semantics; every field must be present."""
    if isinstance(node, ast.BoolOp):
        results = (python_value(value, fact) for value in node.values)
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.UnaryOp):
        operand = python_value(node.operand, fact)
        return (not operand) if isinstance(node.op, ast.Not) else -operand
    if isinstance(node, ast.BinOp):
        return _arith(node.op, python_value(node.left, fact), python_value(node.right, fact))
    if isinstance(node, ast.Compare):
        return _chain(node, fact)
    if isinstance(node, ast.Call):
        return fact.get(dotted(node.args[0])) is not None
    if isinstance(node, ast.List):
        return [python_value(item, fact) for item in node.elts]
    if isinstance(node, ast.Constant):
        return node.value
    return fact[dotted(node)]


def _arith(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right
    assert isinstance(op, ast.Div)
    return left / right


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    table: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
        ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b,
        ast.Eq: lambda a, b: a == b,
        ast.NotEq: lambda a, b: a != b,
        ast.In: lambda a, b: a in b,
        ast.NotIn: lambda a, b: a not in b,
    }
    return table[type(op)](left, right)


def _chain(node: ast.Compare, fact: Fact) -> bool:
    left = python_value(node.left, fact)
    for op, right_node in zip(node.ops, node.comparators, strict=True):
        right = python_value(right_node, fact)
        if not _compare(op, left, right):
            return False
        left = right
    return True


def _fields_of(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.Name, ast.Attribute)):
        return {dotted(node)}
    return set().union(*(_fields_of(child) for child in ast.iter_child_nodes(node)))


def documented_value(node: ast.expr, fact: Fact, negated: bool = False) -> bool:
    """The module docstring's semantics: `not` pushed to the comparisons, and a
    comparison (bare flag, `in` list) involving a missing field is false."""
    if isinstance(node, ast.BoolOp):
        results = [documented_value(value, fact, negated) for value in node.values]
        return all(results) if isinstance(node.op, ast.And) != negated else any(results)
    if isinstance(node, ast.UnaryOp):
        return documented_value(node.operand, fact, not negated)
    if isinstance(node, ast.Call):
        return (fact.get(dotted(node.args[0])) is not None) != negated
    if isinstance(node, ast.Compare):
        return _documented_chain(node, fact, negated)
    present = fact.get(dotted(node)) is not None
    return present and bool(python_value(node, fact)) != negated


def _documented_chain(node: ast.Compare, fact: Fact, negated: bool) -> bool:
    sides = [node.left, *node.comparators]
    results = []
    for left, op, right in zip(sides, node.ops, sides[1:], strict=False):
        pair = ast.Compare(left=left, ops=[op], comparators=[right])
        present = all(fact.get(name) is not None for name in _fields_of(pair))
        results.append(present and _chain(pair, fact) != negated)
    return any(results) if negated else all(results)


# --------------------------------------------------------------------------
# Compilation tables.

EX = {"$ex": {"capacity_kw": 1}}

VALID: list[tuple[str, dict[str, Any]]] = [
    ("load_kw > 1", {"$gt": {"load_kw": 1}}),
    ("load_kw >= -1.5", {"$gte": {"load_kw": -1.5}}),
    ("1 < load_kw", {"$gt": {"load_kw": 1}}),
    ("2 >= load_kw", {"$lte": {"load_kw": 2}}),
    ("load_kw == 3", {"$eq": {"load_kw": 3}}),
    ("3 != load_kw", {"$neq": {"load_kw": 3}}),
    ("load_kw > capacity_kw", {"$and": [EX, {"$gt": {"load_kw": {"$m": "capacity_kw"}}}]}),
    (
        "load_kw > capacity_kw * 0.8",
        {"$and": [EX, {"$gt": {"load_kw": {"$mul": {"$l": {"$m": "capacity_kw"}, "$r": 0.8}}}}]},
    ),
    (
        "capacity_kw * 0.8 < load_kw",
        {"$and": [EX, {"$gt": {"load_kw": {"$mul": {"$l": {"$m": "capacity_kw"}, "$r": 0.8}}}}]},
    ),
    (
        "load_kw <= capacity_kw / 2",
        {"$and": [EX, {"$lte": {"load_kw": {"$div": {"$l": {"$m": "capacity_kw"}, "$r": 2.0}}}}]},
    ),
    (
        "load_kw == -capacity_kw",
        {"$and": [EX, {"$eq": {"load_kw": {"$sub": {"$l": 0, "$r": {"$m": "capacity_kw"}}}}}]},
    ),
    (
        "load_kw > (capacity_kw - 1) * (psu.count + 2)",
        {
            "$and": [
                EX,
                {"$ex": {"psu.count": 1}},
                {
                    "$gt": {
                        "load_kw": {
                            "$mul": {
                                "$l": {"$sub": {"$l": {"$m": "capacity_kw"}, "$r": 1}},
                                "$r": {"$add": {"$l": {"$m": "psu.count"}, "$r": 2}},
                            }
                        }
                    }
                },
            ]
        },
    ),
    # Constant sub-expressions are folded (durable never matches them).
    ("load_kw > 1 + 2 * 3", {"$gt": {"load_kw": 7}}),
    ("load_kw > 3 / 2", {"$gt": {"load_kw": 1.5}}),
    ("load_kw > -(-2)", {"$gt": {"load_kw": 2}}),
    ("load_kw > (1 + 1) / 4", {"$gt": {"load_kw": 0.5}}),
    (
        "0 < load_kw <= capacity_kw",
        {"$and": [{"$gt": {"load_kw": 0}}, EX, {"$lte": {"load_kw": {"$m": "capacity_kw"}}}]},
    ),
    ("load_kw == load_kw + 0", {"$eq": {"load_kw": {"$add": {"$l": {"$m": "load_kw"}, "$r": 0}}}}),
    ("name == 'A01'", {"$eq": {"name": "A01"}}),
    ('name != "B"', {"$neq": {"name": "B"}}),
    ("id == 'x'", {"$eq": {"@id": "x"}}),
    ("commissioned < '2024-06-30'", {"$lt": {"commissioned": "2024-06-30"}}),
    (
        "commissioned < warranty.end",
        {"$and": [{"$ex": {"warranty.end": 1}}, {"$lt": {"commissioned": {"$m": "warranty.end"}}}]},
    ),
    ("active", {"$eq": {"active": True}}),
    ("not active", {"$eq": {"active": False}}),
    ("psu.redundant == False", {"$eq": {"psu.redundant": False}}),
    ("psu.redundant != True", {"$eq": {"psu.redundant": False}}),
    (
        "active != psu.redundant",
        {"$and": [{"$ex": {"psu.redundant": 1}}, {"$neq": {"active": {"$m": "psu.redundant"}}}]},
    ),
    ("exists(psu.count)", {"$ex": {"psu.count": 1}}),
    ("not exists(psu.count)", {"$nex": {"psu.count": 1}}),
    ("name in ['a']", {"$eq": {"name": "a"}}),
    ("name in ['a', 'b']", {"$or": [{"$eq": {"name": "a"}}, {"$eq": {"name": "b"}}]}),
    ("load_kw not in [1, -2.5]", {"$and": [{"$neq": {"load_kw": 1}}, {"$neq": {"load_kw": -2.5}}]}),
    ("not load_kw in [1, 2]", {"$and": [{"$neq": {"load_kw": 1}}, {"$neq": {"load_kw": 2}}]}),
    ("not (load_kw not in [1])", {"$eq": {"load_kw": 1}}),
    ("commissioned in ['2024-01-01']", {"$eq": {"commissioned": "2024-01-01"}}),
    ("name in ['a', 'a']", {"$eq": {"name": "a"}}),
    ("load_kw not in [1, 1.0, 2, 1]", {"$and": [{"$neq": {"load_kw": 1}}, {"$neq": {"load_kw": 2}}]}),
    (f"load_kw in [{', '.join(map(str, range(64)))}]", {"$or": [{"$eq": {"load_kw": n}} for n in range(64)]}),
    ("not load_kw > 1", {"$lte": {"load_kw": 1}}),
    ("not load_kw >= 1", {"$lt": {"load_kw": 1}}),
    ("not load_kw < 1", {"$gte": {"load_kw": 1}}),
    ("not load_kw <= 1", {"$gt": {"load_kw": 1}}),
    ("not load_kw == 1", {"$neq": {"load_kw": 1}}),
    ("not load_kw != 1", {"$eq": {"load_kw": 1}}),
    ("not not load_kw > 1", {"$gt": {"load_kw": 1}}),
    (
        "not (load_kw > 1 and (active or exists(name)))",
        {"$or": [{"$lte": {"load_kw": 1}}, {"$and": [{"$eq": {"active": False}}, {"$nex": {"name": 1}}]}]},
    ),
    (
        "not 0 < load_kw < 5",
        {"$or": [{"$lte": {"load_kw": 0}}, {"$gte": {"load_kw": 5}}]},
    ),
    (
        "load_kw > 1 and load_kw < 5 and (active and psu.redundant)",
        {
            "$and": [
                {"$gt": {"load_kw": 1}},
                {"$lt": {"load_kw": 5}},
                {"$eq": {"active": True}},
                {"$eq": {"psu.redundant": True}},
            ]
        },
    ),
    (
        "load_kw > 1 or (name == 'a' or active)",
        {"$or": [{"$gt": {"load_kw": 1}}, {"$eq": {"name": "a"}}, {"$eq": {"active": True}}]},
    ),
    ("(load_kw >\n   1)", {"$gt": {"load_kw": 1}}),
    ("  load_kw > 1  # why", {"$gt": {"load_kw": 1}}),
    ("load_kw > 0.0001", {"$gt": {"load_kw": 0.0001}}),
    ("load_kw < 9223372036854775807", {"$lt": {"load_kw": 9223372036854775807}}),
]


@pytest.mark.parametrize(("source", "expected"), VALID)
def test_compiles_to_durable_json(source: str, expected: dict[str, Any]) -> None:
    compiled = compile_when(source, FIELDS)
    assert compiled.condition == expected
    assert compiled.source == source
    # The condition must survive the JSON round trip durable makes.
    assert json.loads(json.dumps(compiled.condition)) == expected


def test_condition_distinguishes_int_from_float_literals() -> None:
    # 2 and 2.0 are equal in Python, so pin the divisor's type explicitly.
    condition = compile_when("load_kw < capacity_kw / 2", FIELDS).condition
    divisor = condition["$and"][1]["$lt"]["load_kw"]["$div"]["$r"]
    assert type(divisor) is float


def test_reports_the_fields_it_uses() -> None:
    compiled = compile_when("load_kw > capacity_kw and exists(psu.count) or active", FIELDS)
    assert compiled == CompiledWhen(
        compiled.source, compiled.condition, frozenset({"load_kw", "capacity_kw", "psu.count", "active"})
    )


def test_fact_key() -> None:
    assert fact_key("load_kw") == "load_kw"
    assert fact_key("psu.count") == "psu.count"
    assert fact_key("kind") == "kind"  # the engine's kind test relies on this
    assert fact_key("id") != "id"
    assert fact_key("sid") != "sid"
    assert fact_key("rack.id") == "rack.id"


INVALID: list[tuple[str, str, int, int]] = [
    # (source, message fragment, line, column)
    ("lod_kw > 1", "unknown field 'lod_kw' (did you mean 'load_kw'?)", 1, 1),
    ("load_kw > zzz", "unknown field 'zzz'", 1, 11),
    ("psu.cuont > 1", "unknown field 'psu.cuont' (did you mean 'psu.count'?)", 1, 1),
    ("load_kw > 1 and exists(nme)", "unknown field 'nme' (did you mean 'name'?)", 1, 24),
    ("name.upper() == 'A'", "function calls other than exists(field) are not allowed", 1, 1),
    ("len(name) > 1", "function calls other than exists(field) are not allowed", 1, 1),
    ("exists(name).x == 1", "attribute access is only allowed on field names", 1, 1),
    ("exists(name, id)", "exists() takes exactly one field name", 1, 1),
    ("exists('name')", "exists() takes exactly one field name", 1, 1),
    ("load_kw > 1 and name[0] == 'A'", "subscripts are not allowed", 1, 17),
    ("(lambda: 1) == load_kw", "lambda expressions are not allowed", 1, 2),
    ("load_kw in [x for x in [1]]", "'in' needs a list of literals", 1, 12),
    ("[x for x in [1]]", "comprehensions are not allowed", 1, 1),
    ("load_kw ** 2 > 1", "operator '**' is not allowed", 1, 1),
    ("load_kw % 2 == 0", "operator '%' is not allowed", 1, 1),
    ("load_kw // 2 == 0", "operator '//' is not allowed", 1, 1),
    ("active & psu.redundant", "operator '&' (use 'and') is not allowed", 1, 1),
    ("load_kw is 1", "operator 'is' (use == or exists()) is not allowed", 1, 1),
    ("+load_kw > 1", "operator unary '+' is not allowed", 1, 1),
    ("load_kw == None", "None is not allowed", 1, 12),
    ("load_kw > 1j", "complex literals are not allowed", 1, 11),
    ("load_kw / capacity_kw > 1", "divisor of '/' must be a non-zero number literal", 1, 11),
    ("load_kw / 0 > 1", "division by zero", 1, 11),
    ("load_kw / 0.0 > 1", "division by zero", 1, 11),
    ("load_kw / (2 - 2) > 1", "division by zero", 1, 12),
    ("1 < 2", "a comparison needs a fact field alone on one side", 1, 1),
    ("load_kw + 1 > capacity_kw + 1", "a comparison needs a fact field alone on one side", 1, 1),
    ("-load_kw > 1", "a comparison needs a fact field alone on one side", 1, 1),
    ("0 < load_kw + 1 < 2", "a comparison needs a fact field alone on one side", 1, 1),
    ("load_kw + 1 in [1, 2]", "'in' needs a fact field alone on its left", 1, 1),
    ("load_kw in [capacity_kw]", "'in' lists may only hold literals", 1, 13),
    ("load_kw in []", "'in' needs a non-empty list", 1, 12),
    (f"load_kw in [{', '.join(map(str, range(65)))}]", "'in' lists may hold at most 64 values", 1, 12),
    ("load_kw in (1, 2)", "'in' needs a list of literals", 1, 12),
    ("load_kw in [1, 'a']", "cannot compare number field 'load_kw' with string 'a'", 1, 16),
    ("load_kw > 'a'", "cannot compare number field 'load_kw' with string 'a'", 1, 1),
    ("name > load_kw", "cannot compare string field 'name' with number field 'load_kw'", 1, 1),
    ("active == 1", "cannot compare boolean field 'active' with number 1", 1, 1),
    ("active > False", "boolean values only support ==, != and in, not >", 1, 1),
    ("name < 'B'", "string values only support ==, != and in, not <; durable-rules orders", 1, 1),
    ("'B' >= site.region", "string values only support ==, != and in, not >=", 1, 1),
    ("name + 'x' == 'ax'", "arithmetic needs numbers, not string field 'name'", 1, 1),
    ("load_kw + active > 1", "arithmetic needs numbers, not boolean field 'active'", 1, 11),
    ("-name == 'x'", "arithmetic needs numbers, not string field 'name'", 1, 2),
    ("commissioned < '2024-1-5'", "'2024-1-5' is not a date written as 'YYYY-MM-DD'", 1, 16),
    ("commissioned == '2024-02-30'", "'2024-02-30' is not a date written as 'YYYY-MM-DD'", 1, 17),
    ("commissioned in ['2024-02-01', 'soon']", "'soon' is not a date", 1, 32),
    ("commissioned < name", "cannot compare date field 'commissioned' with string field", 1, 1),
    ("commissioned < 20240101", "cannot compare date field 'commissioned' with number", 1, 1),
    ("load_kw", "number field 'load_kw' cannot be used as a condition on its own", 1, 1),
    ("load_kw > 1 and True", "a constant cannot be used as a condition", 1, 17),
    ("load_kw + 1", "an arithmetic value cannot be used as a condition", 1, 1),
    ("load_kw == (capacity_kw > 1)", "a condition cannot be used as a value", 1, 13),
    ("active == (not psu.redundant)", "a condition cannot be used as a value", 1, 12),
    ("load_kw > 1e-05", "needs exponent notation", 1, 11),
    ("load_kw > 1e16", "needs exponent notation", 1, 11),
    ("load_kw > 1e999", "not finite", 1, 11),
    ("load_kw > 9223372036854775808", "too large", 1, 11),
    ("load_kw > 4000000000 * 4000000000", "too large", 1, 11),
    ("load_kw > 1 if active else 2", "conditional expressions are not allowed", 1, 1),
    ("f'{name}' == 'x'", "f-strings are not allowed", 1, 1),
    ("load_kw > b'1'", "bytes literals are not allowed", 1, 11),
    ("(x := load_kw) > 1", "':=' assignments are not allowed", 1, 2),
    ("load_kw >", "syntax error", 1, 10),
    ("load_kw > (1", "syntax error: '(' was never closed", 1, 11),
    ("load_kw >\n 1", "syntax error", 1, 10),
    ("", "empty expression", 1, 1),
    ("   \n  ", "empty expression", 2, 3),
    # Columns count characters, not UTF-8 bytes, and survive stripped indentation.
    ("name == 'é€' and lod_kw > 1", "unknown field 'lod_kw'", 1, 18),
    ("  lod_kw > 1", "unknown field 'lod_kw'", 1, 3),
    ("\n  lod_kw > 1", "unknown field 'lod_kw'", 2, 3),
    ("(load_kw > 1 and\n  lod_kw > 1)", "unknown field 'lod_kw'", 2, 3),
    ("(load_kw > 1 and\n  name > 1)", "cannot compare string field 'name' with number 1", 2, 3),
]


@pytest.mark.parametrize(("source", "message", "line", "column"), INVALID)
def test_rejects(source: str, message: str, line: int, column: int) -> None:
    with pytest.raises(ExprError) as caught:
        compile_when(source, FIELDS)
    error = caught.value
    assert message in error.message
    assert str(error) == error.message
    assert (error.line, error.column) == (line, column)


def test_deep_nesting_is_an_expr_error() -> None:
    source = "load_kw > " + " + ".join(["1"] * 5000)
    with pytest.raises(ExprError):
        compile_when(source, FIELDS)


def test_bad_field_table_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown type"):
        compile_when("x > 1", {"x": "integer"})  # type: ignore[dict-item]


# --------------------------------------------------------------------------
# Against the engine: presence, missing fields, and the arithmetic quirks.


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("exists(psu.count)", True),
        ("not exists(psu.count)", False),
        ("exists(capacity_kw)", False),
        ("not exists(capacity_kw)", True),
        ("not exists(capacity_kw) and not exists(id)", True),
        ("exists(capacity_kw) or not exists(name)", False),
        ("not (exists(capacity_kw) or exists(load_kw))", False),
        ("not exists(capacity_kw) or load_kw > 100", True),
    ],
)
def test_exists_against_engine(source: str, expected: bool) -> None:
    fact = full_fact(capacity_kw=None, id=None)
    assert fires(source, fact) is expected


MISSING_IS_FALSE = [
    "capacity_kw > 1",
    "capacity_kw != 1",
    "not capacity_kw > 1",
    "not capacity_kw != 1",
    "load_kw > capacity_kw",
    "load_kw != capacity_kw",
    "load_kw == capacity_kw",
    "not load_kw > capacity_kw",
    "not load_kw != capacity_kw",
    "capacity_kw < load_kw",
    "load_kw > capacity_kw + 1",
    "load_kw != capacity_kw * 2",
    "load_kw < 1 - capacity_kw",
    "load_kw != -capacity_kw",
    "load_kw > capacity_kw / 2",
    "not load_kw < capacity_kw / 2",
    "capacity_kw in [1, 2]",
    "capacity_kw not in [1, 2]",
    "not capacity_kw in [1, 2]",
    "0 < capacity_kw < 100",
    "not 0 < capacity_kw < 100",
    "not (load_kw < 0 or capacity_kw != 3)",
    "psu.redundant",
    "not psu.redundant",
    "active != psu.redundant",
    "id == 'rack-1'",
    "id != 'x'",
    "warranty.end > commissioned",
]


@pytest.mark.parametrize("source", MISSING_IS_FALSE)
def test_comparison_with_missing_field_is_false(source: str) -> None:
    fact = full_fact(capacity_kw=None, psu__redundant=None, id=None, warranty__end=None)
    assert not fires(source, fact)


@pytest.mark.parametrize(
    ("source", "fact", "expected"),
    [
        # A chained comparison is an `and`: one present pair can decide `not`.
        ("not 20 < load_kw < capacity_kw", full_fact(capacity_kw=None), True),
        ("load_kw > 1 or capacity_kw > 1", full_fact(capacity_kw=None), True),
        ("load_kw > 1 and capacity_kw > 1", full_fact(capacity_kw=None), False),
        ("not exists(capacity_kw) or capacity_kw > 100", full_fact(capacity_kw=None), True),
    ],
)
def test_missing_field_inside_junctions(source: str, fact: Fact, expected: bool) -> None:
    assert fires(source, fact) is expected


@pytest.mark.parametrize(
    ("source", "fact", "expected"),
    [
        # durable would compute int/int as C integer division: 1 / 3 == 0.
        ("capacity_kw == load_kw / 3", full_fact(load_kw=1, capacity_kw=0), False),
        ("capacity_kw == load_kw / 3", full_fact(load_kw=1, capacity_kw=1 / 3), True),
        ("capacity_kw == load_kw / 2", full_fact(load_kw=3, capacity_kw=1.5), True),
        ("capacity_kw > load_kw / -2", full_fact(load_kw=3, capacity_kw=-1), True),
        # durable never matches arithmetic on two constants; folding fixes it.
        ("load_kw == 1 + 2", full_fact(load_kw=3), True),
        ("load_kw == 3 / 2", full_fact(load_kw=1.5), True),
        ("load_kw == -(2 * 3)", full_fact(load_kw=-6), True),
        ("capacity_kw == load_kw * 2.5", full_fact(load_kw=3, capacity_kw=7.5), True),
        ("load_kw == 10", full_fact(load_kw=10.0), True),
        ("load_kw > -0.5", full_fact(load_kw=0), True),
        ("load_kw > 9223372036854775806", full_fact(load_kw=9223372036854775807), True),
        ("name == 'é'", full_fact(name="é"), True),
        ("name != 'a'", full_fact(name="a b"), True),
        ("name == 'a'", full_fact(name="a b"), False),
        ("name == ''", full_fact(name=""), True),
        ("name == 'A\\\\B'", full_fact(name="A\\B"), True),
        ("name == 'say \"hi\"'", full_fact(name='say "hi"'), True),
        ("commissioned < '2024-10-01'", full_fact(commissioned="2024-09-30"), True),
        ("id == 'rack-1'", full_fact(), True),
        ("psu.count == 2 and psu.redundant == False", full_fact(), True),
    ],
)
def test_engine_agrees_on_edge_cases(source: str, fact: Fact, expected: bool) -> None:
    # Raw: some facts hold values (up to a C long) that the engine's fact writer refuses.
    assert bool(fire_raw([compile_when(source, FIELDS).condition], [fact])) is expected
    assert python_value(ast.parse(source, mode="eval").body, fact) is expected


# --------------------------------------------------------------------------
# The raw durable-rules behaviours expr.py works around. If an upgrade makes
# one of these fail, the matching workaround in expr.py may be obsolete.


def test_quirk_missing_right_hand_field_makes_any_comparison_true() -> None:
    ops = ["$lt", "$lte", "$gt", "$gte", "$eq", "$neq"]
    raw: list[dict[str, Any]] = [{op: {"a": {"$m": "b"}}} for op in ops]
    assert fire_raw(raw, [{"a": 1}]) == {(index, 0) for index in range(len(ops))}


def test_quirk_int_division_truncates_and_constant_arithmetic_never_matches() -> None:
    raw: list[dict[str, Any]] = [
        {"$eq": {"a": {"$div": {"$l": {"$m": "b"}, "$r": 3}}}},
        {"$eq": {"a": {"$add": {"$l": 1, "$r": 2}}}},
    ]
    assert fire_raw(raw, [{"a": 0, "b": 1}, {"a": 3, "b": 1}]) == {(0, 0)}


def test_quirk_exponent_numbers() -> None:
    with pytest.raises(Exception, match="204"):
        fire_raw([{"$gt": {"a": 1e-05}}], [{"a": 1}])
    # A fact value that json.dumps writes with an exponent silently drops that
    # fact and every later fact of the same batch: the engine must avoid them.
    assert fire_raw([{"$eq": {"b": 1}}], [{"b": 1}, {"b": 1, "a": 1e-05}, {"b": 1}]) == {(0, 0)}
    # The engine writes such numbers without an exponent, so nothing is dropped.
    assert fire([{"$eq": {"b": 1}}], [{"b": 1}, {"b": 1, "a": 1e-05}, {"b": 1}]) == {(0, 0), (0, 1), (0, 2)}


def test_quirk_a_fact_may_match_at_most_64_alternatives() -> None:
    alternatives = [{"$gt": {"a": -n}} for n in range(65)]
    assert len(fire_raw(alternatives[:64], [{"a": 1}])) == 64
    with pytest.raises(Exception, match="error code: 303"):
        fire_raw(alternatives, [{"a": 1}])
    with pytest.raises(Exception, match="error code: 303"):
        fire_raw([{"$or": alternatives}], [{"a": 1}])
    # Alternatives that do not match cost nothing here.
    assert fire_raw([{"$lt": {"a": -n}} for n in range(300)], [{"a": 1}]) == set()


def test_quirk_strings_order_as_json_text_with_closing_quote() -> None:
    # Python: 'a"b' < 'a#'; durable compares the escaped text a\"b with a#.
    assert fire_raw([{"$lt": {"s": "a#"}}], [{"s": 'a"b'}, {"s": "a!"}]) == {(0, 1)}
    # Python: 'a' < 'a b'; durable compares a" with a b, and '"' > ' '.
    raw: list[dict[str, Any]] = [{"$lt": {"s": "a b"}}, {"$gt": {"s": "a b"}}, {"$gt": {"s": {"$m": "t"}}}]
    assert fire_raw(raw, [{"s": "a", "t": "a b"}]) == {(1, 0), (2, 0)}
    # Equality is exact, escapes and prefixes included.
    raw = [{"$eq": {"s": 'a"b'}}, {"$eq": {"s": "a"}}, {"$neq": {"s": {"$m": "t"}}}]
    assert fire_raw(raw, [{"s": 'a"b', "t": 'a"b'}, {"s": "a b", "t": "a"}]) == {
        (0, 0),
        (2, 1),
    }


def _run_isolated(script: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    # Crashing experiments must not take the test process down with them.
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


_ISOLATED_PRELUDE = """
    import os
    from checker._vendor.durable import engine

    class Host(engine.Host):
        def _run(self):
            pass

    def run(condition, action):
        host = Host({"rs": {"r": {"all": [{"m": condition}], "run": action}}})
        rules = host.get_ruleset("rs")
        try:
            rules.assert_facts([{"id": "1", "a": 1, "b": 1}])
        except engine.MessageNotHandledException:
            pass
        rules.dispatch()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_quirk_integer_division_by_zero_kills_the_process() -> None:
    result = _run_isolated(
        _ISOLATED_PRELUDE
        + """
    run({"$eq": {"a": {"$div": {"$l": {"$m": "b"}, "$r": 0}}}}, lambda c: None)
    """
    )
    assert result.returncode == -signal.SIGFPE


def test_quirk_lone_nex_matches_the_session_state() -> None:
    # The fact has "a", so only durable's session state lacks it. The action
    # would re-trigger on the updated state forever: exit on the first call.
    result = _run_isolated(
        _ISOLATED_PRELUDE
        + """
    def action(c):
        print(sorted(c.m._d), flush=True)
        os._exit(3)

    run({"$nex": {"a": 1}}, action)
    """
    )
    assert result.returncode == 3
    assert "'$s'" in result.stdout


# --------------------------------------------------------------------------
# Differential test: random expressions, real engine vs reference evaluator.

HALVES = [value / 2 for value in range(-8, 9)]  # -4.0 .. 4.0 by 0.5
NUMBER_VALUES = st.sampled_from([*range(-4, 5), *HALVES])
NUMBER_LITERALS = st.sampled_from(["0", "1", "2", "3", "-1", "0.5", "1.5", "-2.5", "4"])
DIVISORS = st.sampled_from(["2", "4", "0.5", "-2", "8", "(1 + 1)"])
# Strings are only compared for equality, which is exact even for escapes.
STRING_VALUES = ["", "a", "ab", "a b", "B", "A01", "é", 'say "hi"', "back\\slash", "tab\t"]
DATE_VALUES = ["2023-12-31", "2024-01-01", "2024-02-29", "2024-10-01", "2025-01-01"]
COMPARE_OPS = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
EQUALITY_OPS = st.sampled_from(["==", "!="])


def _quoted(values: Sequence[str]) -> st.SearchStrategy[str]:
    return st.sampled_from([repr(value) for value in values])


def _number_expr() -> st.SearchStrategy[str]:
    leaf = st.one_of(st.sampled_from(NUMBERS), NUMBER_LITERALS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner)
        return st.one_of(
            binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            binary.map(" ".join),  # unparenthesised: precedence comes from ast
            st.tuples(inner, DIVISORS).map(lambda t: f"({t[0]} / {t[1]})"),
            inner.map(lambda e: f"-{e}"),
        )

    return st.recursive(leaf, extend, max_leaves=4)


def _oriented(field: str, op: str, other: str, swap: bool) -> str:
    return f"{other} {op} {field}" if swap else f"{field} {op} {other}"


def _number_comparison() -> st.SearchStrategy[str]:
    simple = st.builds(_oriented, st.sampled_from(NUMBERS), COMPARE_OPS, _number_expr(), st.booleans())
    chained = st.builds(
        lambda a, op1, field, op2, b: f"{a} {op1} {field} {op2} {b}",
        _number_expr(),
        COMPARE_OPS,
        st.sampled_from(NUMBERS),
        COMPARE_OPS,
        _number_expr(),
    )
    return st.one_of(simple, simple, chained)


def _text_comparison(
    fields: list[str], values: list[str], ops: st.SearchStrategy[str]
) -> st.SearchStrategy[str]:
    other = st.one_of(_quoted(values), st.sampled_from(fields))
    return st.builds(_oriented, st.sampled_from(fields), ops, other, st.booleans())


def _bool_condition() -> st.SearchStrategy[str]:
    other = st.one_of(st.sampled_from(["True", "False"]), st.sampled_from(BOOLEANS))
    compared = st.builds(_oriented, st.sampled_from(BOOLEANS), EQUALITY_OPS, other, st.booleans())
    return st.one_of(st.sampled_from(BOOLEANS), compared)


def _membership() -> st.SearchStrategy[str]:
    def listed(fields: list[str], items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.builds(
            lambda field, neg, elts: f"{field} {'not in' if neg else 'in'} [{', '.join(elts)}]",
            st.sampled_from(fields),
            st.booleans(),
            st.lists(items, min_size=1, max_size=3),
        )

    return st.one_of(
        listed(NUMBERS, NUMBER_LITERALS),
        listed(STRINGS, _quoted(STRING_VALUES)),
        listed(DATES, _quoted(DATE_VALUES)),
    )


def _atom() -> st.SearchStrategy[str]:
    return st.one_of(
        _number_comparison(),
        _number_comparison(),
        _text_comparison(STRINGS, STRING_VALUES, EQUALITY_OPS),
        _text_comparison(DATES, DATE_VALUES, COMPARE_OPS),
        _bool_condition(),
        _membership(),
        st.sampled_from(list(FIELDS)).map(lambda field: f"exists({field})"),
    )


def conditions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map(lambda t: f"({t[0]} and {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]} or {t[1]})"),
            inner.map(lambda c: f"not ({c})"),
            inner.map(lambda c: f"not {c}"),  # binds tighter than and/or
        )

    return st.recursive(_atom(), extend, max_leaves=5)


def facts(optional: bool) -> st.SearchStrategy[Fact]:
    values: dict[str, st.SearchStrategy[Any]] = {
        "number": NUMBER_VALUES,
        "string": st.sampled_from(STRING_VALUES),
        "boolean": st.booleans(),
        "date": st.sampled_from(DATE_VALUES),
    }
    fields = {
        name: st.one_of(st.none(), values[kind]) if optional else values[kind]
        for name, kind in FIELDS.items()
    }
    return st.fixed_dictionaries(fields)


DIFFERENTIAL = settings(
    max_examples=75,
    derandomize=True,  # the same examples on every run: CI stays deterministic
    database=None,  # and writes nothing into the tree
    deadline=None,
    # Shrinking a batch of 100 rules x 12 facts runs into Hypothesis' 5-minute
    # cap; the assertion message already names the failing rule and fact.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
RULES_PER_ENGINE = 100
FACTS_PER_ENGINE = 12


def _check_against_engine(
    sources: list[str], fact_list: list[Fact], reference: Callable[[ast.expr, Fact], bool]
) -> None:
    compiled = [compile_when(source, FIELDS) for source in sources]
    fired = fire([c.condition for c in compiled], fact_list)
    trees = [ast.parse(source, mode="eval").body for source in sources]
    for (rule, tree), (index, fact) in itertools.product(enumerate(trees), enumerate(fact_list)):
        expected = bool(reference(tree, fact))
        verdict = (rule, index) in fired
        assert verdict is expected, (
            f"when: {sources[rule]}\nfact: {fact}\n"
            f"condition: {compiled[rule].condition}\nengine fired: {verdict}"
        )


SOURCES = st.lists(conditions(), min_size=RULES_PER_ENGINE, max_size=RULES_PER_ENGINE, unique=True)
FULL_FACTS = st.lists(facts(optional=False), min_size=FACTS_PER_ENGINE, max_size=FACTS_PER_ENGINE)
SPARSE_FACTS = st.lists(facts(optional=True), min_size=FACTS_PER_ENGINE, max_size=FACTS_PER_ENGINE)
# Every `make test` runs a quick sample; CI's slow run (`-m slow`) runs many more.
QUICK = settings(DIFFERENTIAL, max_examples=10)
THOROUGH = settings(DIFFERENTIAL, max_examples=300)


@QUICK
@given(sources=SOURCES, fact_list=FULL_FACTS)
def test_engine_matches_python_evaluation(sources: list[str], fact_list: list[Fact]) -> None:
    _check_against_engine(sources, fact_list, python_value)


@QUICK
@given(sources=SOURCES, fact_list=SPARSE_FACTS)
def test_engine_matches_documented_missing_field_semantics(sources: list[str], fact_list: list[Fact]) -> None:
    _check_against_engine(sources, fact_list, documented_value)


@pytest.mark.slow
@THOROUGH
@given(sources=SOURCES, fact_list=FULL_FACTS)
def test_engine_matches_python_evaluation_thoroughly(sources: list[str], fact_list: list[Fact]) -> None:
    _check_against_engine(sources, fact_list, python_value)


@pytest.mark.slow
@THOROUGH
@given(sources=SOURCES, fact_list=SPARSE_FACTS)
def test_engine_matches_missing_field_semantics_thoroughly(sources: list[str], fact_list: list[Fact]) -> None:
    _check_against_engine(sources, fact_list, documented_value)
