from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.derive.facts import Fact
from checker.derive.rows import Block, Header, Row
from checker.evaluate import engine
from checker.evaluate.engine import _pack, _projected, cells_json, fact_json, match
from checker.evaluate.rulebook import CompiledRule, Rule
from checker.source.parse import Src, parse
from tests.helpers import compiled_rule, evaluated


def _facts(n: int) -> list[tuple[str, dict[str, object]]]:
    return [("rack", {"name": f"R{i}", "load_kw": float(i % 100), "capacity_kw": 49.5}) for i in range(n)]


def test_ten_thousand_facts_yield_exactly_the_matching_findings_every_run() -> None:
    rule = compiled_rule("t.half", "rack", "load_kw > capacity_kw")
    facts = _facts(10_000)
    expected = sum(1 for _, v in facts if v["load_kw"] > v["capacity_kw"])  # type: ignore[operator]
    assert expected == 5_000
    runs = [match([rule], facts) for _ in range(3)]
    assert all(len(r) == expected for r in runs)
    assert runs[0] == runs[1] == runs[2]
    assert len(set(runs[0])) == expected  # one match per fact, no duplicates


def test_every_rule_fires_on_each_matching_fact_once() -> None:
    rules = [
        compiled_rule("t.over", "rack", "load_kw > capacity_kw"),
        compiled_rule("t.any", "rack", "load_kw >= 0"),
        compiled_rule("t.feed", "feed", "amps > 0"),
    ]
    facts = [
        ("rack", {"name": "A", "load_kw": 60.0, "capacity_kw": 49.5}),
        ("rack", {"name": "B", "load_kw": 10.0, "capacity_kw": 49.5}),
    ]
    assert match(rules, facts) == [(0, 0), (1, 0), (1, 1)]


def test_no_rules_or_no_facts_match_nothing() -> None:
    assert match([], _facts(3)) == []
    assert match([compiled_rule("t.x", "rack", "load_kw > 1")], []) == []


def test_fact_json_drops_missing_values_and_numbers_facts() -> None:
    fact = json.loads(fact_json(7, "server", {"name": "s", "support.level": None, "gpu.count": 8}))
    assert fact == {"id": 7, "kind": "server", "name": "s", "gpu.count": 8}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e-05, "0.00001"),
        (1e14, "100000000000000.0"),
        (1e-07, "0.0000001"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (3, "3"),
        (True, "true"),
        ('a"b', '"a\\"b"'),
    ],
)
def test_fact_json_writes_numbers_without_exponents(value: object, text: str) -> None:
    # durable-rules' parser drops a fact with 1e-05 and every later fact of the batch.
    assert fact_json(0, "rack", {"x": value}) == '{"id": 0, "kind": "rack", "x": ' + text + "}"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e16, "999999999999999"),
        (float("inf"), "999999999999999"),
        (float("-inf"), "-999999999999999"),
        (10**20, "999999999999999"),
        (-(10**20), "-999999999999999"),
    ],
)
def test_fact_json_clamps_what_durable_cannot_read(value: float, text: str) -> None:
    # Derived from valid input (a tiny feed), a huge number still compares as huge.
    assert fact_json(0, "rack", {"load_kw": value}) == '{"id": 0, "kind": "rack", "load_kw": ' + text + "}"


def test_fact_json_leaves_out_nan() -> None:
    assert fact_json(0, "rack", {"load_kw": float("nan")}) == '{"id": 0, "kind": "rack"}'


def _sent(kind: str, facts: list[dict[str, object]], fields: set[str]) -> str:
    """What the engine sends durable: the fields read, picked from each fact."""
    return cells_json(kind, *_projected(facts, sorted(fields)))


@pytest.mark.parametrize(
    "odd",
    [1e-05, 1e16, 1e15, 10**16, float("inf"), float("-inf"), float("nan"), None],
    ids=["tiny", "huge", "1e15", "big-int", "inf", "-inf", "nan", "none"],
)
def test_facts_sent_are_what_fact_json_writes_whatever_the_numbers(odd: object) -> None:
    # The batch is written by one json.dumps unless a value needs fact_json's
    # care; either way durable must get exactly fact_json's facts.
    facts = [{"name": "a", "load_kw": 2.5, "x": 1}, {"name": "b", "load_kw": odd, "skip": 3}]
    sent = [{k: v for k, v in f.items() if k != "skip"} for f in facts]
    expected = [json.loads(fact_json(i, "rack", f)) for i, f in enumerate(sent)]
    assert json.loads(_sent("rack", facts, {"name", "load_kw", "x"})) == expected


def test_facts_sent_hold_only_the_fields_rules_read() -> None:
    text = _sent("server", [{"name": "a", "gpu.count": 8, "memory_gb": 512}], {"gpu.count"})
    assert json.loads(text) == [{"id": 0, "kind": "server", "gpu.count": 8}]


def test_tiny_numbers_do_not_drop_later_facts() -> None:
    rule = compiled_rule("t.any", "rack", "load_kw >= 0")
    facts = [("rack", {"name": "a", "load_kw": 0.00001}), ("rack", {"name": "b", "load_kw": 1.0})]
    assert match([rule], facts) == [(0, 0), (0, 1)]


def test_many_rules_are_packed_into_rulesets_within_durable_limits() -> None:
    # 200 rules of one kind, all matching one fact: in one ruleset durable fails
    # past 64 matching alternatives and hangs near 512.
    rules = [compiled_rule(f"t.r{i}", "rack", f"load_kw > {i}") for i in range(200)]
    chunks = _pack([1] * 200)
    assert all(len(c) <= 64 for c in chunks) and [i for c in chunks for i in c] == list(range(200))
    assert _pack([40, 30, 64, 1]) == [[0], [1], [2], [3]] and _pack([]) == [[]]
    assert match(rules, [("rack", {"name": "a", "load_kw": 1000.0})]) == [(i, 0) for i in range(200)]


def test_rules_of_other_kinds_see_only_their_facts() -> None:
    rules = [compiled_rule("t.rack", "rack", "exists(name)"), compiled_rule("t.feed", "feed", "exists(name)")]
    facts = [("feed", {"name": "f"}), ("rack", {"name": "r"})]
    assert match(rules, facts) == [(0, 1), (1, 0)]


def test_findings_are_located_at_the_locate_field_else_the_entity() -> None:
    doc = parse("name: A01\nfeeds:\n  - {name: f}\nload_kw: 3\n")[0]
    fact = Fact(
        "rack", "rack/sh1/A01", {"name": "A01", "load_kw": 30.0, "capacity_kw": 20.0}, "f.yaml", doc.src
    )
    located = compiled_rule("t.loc", "rack", "load_kw > capacity_kw", locate="feeds")
    plain = compiled_rule("t.plain", "rack", "load_kw > capacity_kw")
    findings = evaluated([located, plain], [fact])
    # Findings come out in source order.
    assert [(f.rule, f.line, f.column) for f in findings] == [("t.plain", 1, 1), ("t.loc", 2, 1)]
    assert [f.message for f in findings] == ["t.plain on A01", "t.loc on A01"]


@pytest.mark.parametrize("cls", [CompiledRule, Rule])
def test_compiled_rules_are_immutable(cls: type) -> None:
    rule = compiled_rule("t.x", "rack", "load_kw > 1")
    target = rule if cls is CompiledRule else rule.rule
    with pytest.raises((AttributeError, TypeError, ValueError)):
        target.severity = "info"  # type: ignore[misc, union-attr]


def test_ten_thousand_facts_render_the_same_bytes_run_after_run() -> None:
    rule = compiled_rule("t.half", "rack", "load_kw > capacity_kw")
    src = parse("name: R\n")[0].src
    facts = [
        Fact("rack", f"rack/f/R{i}", values, "f.yaml", src) for i, (_, values) in enumerate(_facts(10_000))
    ]
    outputs = [json.dumps([f.__repr__() for f in evaluated([rule], facts)]) for _ in range(2)]
    assert outputs[0] == outputs[1]
    assert outputs[0].count("t.half on R") == 5_000


def test_facts_sent_in_batches_fire_as_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = [
        compiled_rule("t.half", "rack", "load_kw > capacity_kw"),
        compiled_rule("t.any", "rack", "exists(name)"),
    ]
    facts = _facts(160)
    whole = match(rules, facts)
    monkeypatch.setattr(engine, "FACT_BATCH", 70)  # 3 batches, the last one short
    assert match(rules, facts) == whole and len(whole) == 160 + 60


def _count_sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many facts each batch sends to durable."""
    sent: list[int] = []
    real = engine.cells_json

    def counted(kind: str, names: list[str], cells: list[tuple[object, ...]], first: int = 0) -> str:
        sent.append(len(cells))
        return real(kind, names, cells, first)

    monkeypatch.setattr(engine, "cells_json", counted)
    return sent


def test_facts_equal_in_the_fields_rules_read_are_sent_once_and_all_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = _count_sent(monkeypatch)
    rule = compiled_rule("t.half", "rack", "load_kw > capacity_kw")
    facts = _facts(1_000)  # 1,000 names, 100 distinct loads
    assert match([rule], facts) == [(0, i) for i in range(1_000) if i % 100 > 49.5]
    assert sent == [100]


def _alone(rules: list[CompiledRule], facts: list[tuple[str, dict[str, object]]]) -> list[tuple[int, int]]:
    return sorted((r, i) for i, fact in enumerate(facts) for r, _ in match(rules, [fact]))


@pytest.mark.parametrize(
    ("field", "values"),
    [
        ("load_kw", [1, 1.0, 0, 0.0, -0.0, 1, 2.0, 1.0]),
        ("load_kw", [float("nan"), float("nan"), 1.0, float("inf"), -float("inf"), 1e-05, 1e17, None]),
        ("cooling", ["air", "Air", "1", None, "air", ""]),
    ],
)
def test_facts_equal_in_python_but_not_as_json_are_told_apart(field: str, values: list[object]) -> None:
    rules = [
        compiled_rule("t.eq", "rack", f"{field} == 1" if field == "load_kw" else f'{field} == "air"'),
        compiled_rule("t.gt", "rack", f"{field} > 0" if field == "load_kw" else f'{field} != "1"'),
        compiled_rule("t.any", "rack", f"exists({field})"),
    ]
    facts = [("rack", {"name": f"R{i}", field: v}) for i, v in enumerate(values)]
    assert match(rules, facts) == _alone(rules, facts)


# Facts built by checker.derive.facts are rows: a tuple of cells under a header their
# kind shares. The engine reads their cells by position; the findings must be
# those of the dicts they stand for, whatever the headers.
ROW_FIELDS = ["name", "load_kw", "capacity_kw", "cooling"]


def _mixed(n: int) -> list[dict[str, object]]:
    coolings = ["air", None, "liquid", "Air"]
    facts: list[dict[str, object]] = []
    for i in range(n):
        loads = [float(i % 7), i % 7, None, 0.00001 * i, float("nan") if i == 5 else 1.0]
        cells = (f"R{i}", loads[i % 5], 3.0, coolings[i % 4])
        facts.append({k: v for k, v in zip(ROW_FIELDS, cells, strict=True) if v is not None})
    return facts


def _as_row(values: dict[str, object], names: list[str]) -> Row:
    assert set(values) <= set(names)
    return Row(Header(names), tuple(values.get(n) for n in names))


ROW_RULES = [
    ("t.over", "load_kw > capacity_kw"),
    ("t.eq", "load_kw == 1"),
    ("t.air", 'cooling == "air"'),
    ("t.any", "exists(cooling)"),
]


@pytest.mark.parametrize("headers", [1, 2])
def test_rows_match_as_the_dicts_they_stand_for(headers: int) -> None:
    rules = [compiled_rule(i, "rack", w) for i, w in ROW_RULES]
    dicts = _mixed(200)
    # Two headers: facts built in parts whose columns differ (one without `cooling`).
    names = [ROW_FIELDS, ROW_FIELDS[:3]]
    rows = [
        _as_row(v, names[1] if headers == 2 and i % 2 and "cooling" not in v else names[0])
        for i, v in enumerate(dicts)
    ]
    assert match(rules, [("rack", r) for r in rows]) == match(rules, [("rack", d) for d in dicts])


def test_rows_equal_in_the_fields_rules_read_are_sent_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _count_sent(monkeypatch)
    header = Header(["name", "load_kw", "capacity_kw"])
    rows = [("rack", Row(header, (f"R{i}", float(i % 100), 49.5))) for i in range(1_000)]
    assert match([compiled_rule("t.half", "rack", "load_kw > capacity_kw")], rows) == [
        (0, i) for i in range(1_000) if i % 100 > 49.5
    ]
    assert sent == [100]


def test_a_nan_in_a_row_is_reported_and_other_rows_are_not() -> None:
    header = Header(["name", "utilization_pct"])
    src = Src(7, 5)
    facts = [
        Fact("rack", f"rack/f1/R0{i}", Row(header, (f"R0{i}", value)), "f.yaml", src)
        for i, value in enumerate([1.0, float("nan"), None, 0.0])
    ]
    assert [(f.rule, f.entity) for f in evaluated([], facts)] == [("schema.invalid", "rack/f1/R01")]


@pytest.mark.parametrize("asked", [False, True], ids=["new rows", "rows asked before"])
@pytest.mark.parametrize("dicts", [False, True], ids=["rows only", "with a dict fact"])
def test_a_nan_is_found_in_new_rows_rows_asked_before_and_dicts(asked: bool, dicts: bool) -> None:
    """Rows carried from the last command know whether they hold a NaN (Row.nan):
    they are not asked again, and one that holds it is reported all the same."""
    header = Header(["name", "utilization_pct"])
    src = Src(7, 5)
    rows = [Row(header, (f"R0{i}", value)) for i, value in enumerate([1.0, float("nan"), 0.0])]
    if asked:
        assert [row.has_nan for row in rows] == [False, True, False]
    assert [row.nan for row in rows] == ([False, True, False] if asked else [None, None, None])
    values: list[Any] = list(rows)
    if dicts:
        values.append({"name": "R03", "utilization_pct": float("nan")})
    facts = [Fact("rack", f"rack/f1/R0{i}", v, "f.yaml", src) for i, v in enumerate(values)]
    expected = [("schema.invalid", "rack/f1/R01")] + ([("schema.invalid", "rack/f1/R03")] if dicts else [])
    assert [(f.rule, f.entity) for f in evaluated([], facts)] == expected
    assert [row.nan for row in rows] == [False, True, False]


@pytest.mark.parametrize("rows", [False, True], ids=["dicts", "rows"])
def test_facts_equal_in_python_but_not_in_json_are_told_apart(rows: bool) -> None:
    """1, 1.0 and true are one key in a dict, three values to durable: each distinct
    tuple of the fields read is sent once, with its type (marshal bytes, and the
    typed key where marshal cannot write a value)."""
    from checker.evaluate.engine import _distinct
    from checker.source.parse import WrittenFloat

    values: list[Any] = [1, 1.0, True, 1, WrittenFloat(1.0, "1.00"), "1", None, 1.0]
    header = Header(("x", "y"))
    facts: list[Any] = [Row(header, (v, "a")) if rows else {"x": v, "y": "a"} for v in values]
    names, distinct, members, keys = _distinct(facts, frozenset({"x"}))
    assert names == ["x"]
    by_value = {repr(d): m for d, m in zip(distinct, members, strict=True)}
    # A WrittenFloat (written 1.00) is not marshal's: every fact then gets the typed key.
    assert sorted(map(sorted, members)) == [[0, 3], [1, 7], [2], [4], [5], [6]]
    assert keys == [(*d, *map(type, d)) for d in distinct]
    assert by_value["(True,)"] == [2]
    plain = [f for f, v in zip(facts, values, strict=True) if not isinstance(v, WrittenFloat)]
    _, distinct, members, _ = _distinct(plain, frozenset({"x"}))
    assert sorted(map(sorted, members)) == [[0, 3], [1, 6], [2], [4], [5]]


_CELLS = [1, 1.0, True, 0.0, -0.0, None, "1", 2, float("nan")]


def _typed_groups(facts: list[Any], fields: frozenset[str]) -> tuple[list[str], list[Any], list[list[int]]]:
    """_distinct's answer with each distinct tuple as its typed reprs (NaN is unequal to itself)."""
    from checker.evaluate.engine import _distinct

    names, distinct, members, _ = _distinct(facts, fields)
    return names, [[(type(v), repr(v)) for v in d] for d in distinct], members


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(*[st.integers(0, len(_CELLS) - 1)] * 3), min_size=1, max_size=30),
    st.lists(st.integers(1, 6), min_size=1, max_size=30),
    st.sets(st.sampled_from(["a", "b", "c", "d"]), min_size=1),
)
def test_rows_of_blocks_are_grouped_as_rows_of_none(
    picks: list[tuple[int, int, int]], runs: list[int], read: set[str]
) -> None:
    """Rows made together (a Block: the columns alike in all of them) are projected
    once per distinct cells of the other columns read: the groups are those of the
    same rows made one by one, 1, 1.0 and true, 0.0 and -0.0 told apart."""
    header = Header(("a", "b", "c"))
    cells = [tuple(_CELLS[i] for i in pick) for pick in picks]
    plain = [Row(header, one) for one in cells]
    blocked: list[Any] = []
    at = 0
    for size in itertools.cycle(runs):
        part = cells[at : at + size]
        if not part:
            break
        # A block's alike columns: those whose cell is one object in each of its rows.
        same = frozenset(n for i, n in enumerate(header.names) if all(c[i] is part[0][i] for c in part))
        block = Block(same)
        blocked += [Row(header, one, None, block) for one in part]
        at += size
    fields = frozenset(read)
    assert _typed_groups(blocked, fields) == _typed_groups(plain, fields)


@pytest.mark.parametrize(
    ("column", "groups"),
    [
        ([1, 1, 1], [[0, 1, 2]]),
        ([1, 1.0, True], [[0], [1], [2]]),
        ([0.0, -0.0, 0.0], [[0, 2], [1]]),
        (["x", "y", "x"], [[0, 2], [1]]),
    ],
)
def test_a_blocks_rows_are_told_apart_by_the_columns_not_alike(
    column: list[Any], groups: list[list[int]]
) -> None:
    """The block says `y` is alike in its rows; `x` differs, and tells them apart, with its type."""
    from checker.evaluate.engine import _distinct

    header = Header(("x", "y"))
    block = Block(frozenset({"y"}))
    facts = [Row(header, (v, "same"), None, block) for v in column]
    _, distinct, members, _ = _distinct(facts, frozenset({"x", "y"}))
    assert members == groups
    assert [type(d[0]) for d in distinct] == [type(column[g[0]]) for g in groups]


@pytest.mark.parametrize("folder", ["inventories", "examples/nvl72", "tests/fixtures/every-field"])
def test_a_findings_shape_read_off_its_rows_cells_is_the_shape_read_by_name(folder: str) -> None:
    """values_shape picks a row's message fields by position (a picker per rule
    and header, made once a run): the same shape as each field read by name."""
    import datetime as dt
    from pathlib import Path

    from checker.audit import run_audit
    from checker.decide.config import Config, settings

    root = Path(__file__).resolve().parents[2]
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result = run_audit([root / folder], cfg, dt.date(2027, 1, 15))
    rules = result.messages.rules
    pickers: engine.Pickers = {}
    found = [f for f in result.findings if f.fact >= 0]
    assert found
    for f in found:
        fact = result.facts[f.fact]
        assert isinstance(fact.values, Row)
        by_name = engine.values_shape(rules[f.rule], fact)
        assert engine.values_shape(rules[f.rule], fact, pickers) == by_name
    assert pickers
