"""durable-rules against an independent interpreter of the conditions it is given.

tests/evaluate/oracle.py decides a compiled `when` (the durable JSON condition)
in plain Python. Here every built-in rule's examples, facts generated for the
built-in rules, and generated `when` expressions go through both the real
engine (checker.evaluate.engine, the path audits and `checker rules test`
take) and the oracle, and every (rule, fact) verdict must agree. Raw
conditions beyond what expr.py emits check the oracle's model of durable's
quirks against durable itself.

Where the oracle says UNDEFINED (a number compared with a string, which
durable compares as text over a length it does not define; a missing
right-hand field, which expr.py guards) the verdict is not compared; the
property tests check that this stays a minority of the cases.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from checker.derive.facts import REGISTRY
from checker.evaluate import engine
from checker.evaluate.expr import CompiledWhen, ExprError, FieldType, compile_when, fact_key
from checker.evaluate.rulebook import CompiledRule, flatten, load_rulebook
from tests.evaluate import oracle

RULES = load_rulebook().rules
Fact = dict[str, Any]


def sent(values: Mapping[str, Any]) -> Fact:
    """A fact's values as the oracle reads them: durable's keys, missing values left out."""
    return oracle.document({fact_key(k): v for k, v in values.items()})


def disagreements(
    conditions: Sequence[CompiledWhen], facts: Sequence[Fact], fired: set[tuple[int, int]]
) -> tuple[list[str], int]:
    """Every (condition, fact) where the oracle and the engine's `fired` pairs
    differ, described; and how many verdicts the oracle left undefined."""
    problems: list[str] = []
    undefined = 0
    for (c, when), (f, fact) in itertools.product(enumerate(conditions), enumerate(facts)):
        expected = oracle.matches(when.condition, sent(fact))
        if expected is oracle.UNDEFINED:
            undefined += 1
            continue
        if expected != ((c, f) in fired):
            problems.append(
                f"when: {when.source}\ncondition: {json.dumps(when.condition)}\nfact: {fact!r}\n"
                f"oracle: {expected}, engine: {not expected}"
            )
    return problems, undefined


PROPERTY = settings(
    derandomize=True,  # the same examples on every run: CI stays deterministic
    database=None,  # and writes nothing into the tree
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # a failure already names its rule and fact
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
# Every `make test` runs a quick sample; CI's slow run (`-m slow`) runs many more.
QUICK = settings(PROPERTY, max_examples=10)
THOROUGH = settings(PROPERTY, max_examples=300)


# --------------------------------------------------------------------------
# 1. The built-in rules' own examples.


def _examples(rule: CompiledRule) -> list[tuple[str, Fact]]:
    ex = rule.rule.examples
    return [("fail", flatten(e)) for e in ex.fail] + [("pass", flatten(e)) for e in ex.pass_]


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_examples_give_the_same_verdicts_through_the_oracle_and_the_engine(rule: CompiledRule) -> None:
    cases = _examples(rule)
    assert cases
    # The path `checker rules test` takes (ruletest.run_rule_tests).
    fired = set(engine.match([rule], [(rule.rule.on, values) for _, values in cases]))
    for n, (label, values) in enumerate(cases):
        verdict = oracle.matches(rule.when.condition, sent(values))
        assert verdict is not oracle.UNDEFINED, values
        assert verdict == ((0, n) in fired), f"{label} example {values}: oracle {verdict}"
        assert verdict == (label == "fail"), f"{label} example {values}: oracle {verdict}"


# --------------------------------------------------------------------------
# 2. Generated facts for the built-in rules.

# Far below the engine's clamp (1e15), so every value is sent as it is.
MAGNITUDE = 1e12
TEXT = st.text(alphabet=st.sampled_from(list('ab "\\\té05.-')), max_size=5)
DATES = ["2023-12-31", "2024-01-01", "2024-02-29", "2026-06-30", "2027-01-15", "9999-12-31"]


def _literals(node: Any) -> Iterator[Any]:
    """Every literal in a condition (right-hand values and arithmetic operands)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key not in ("$ex", "$nex", "$m"):
                yield from _literals(value)
    elif isinstance(node, list):
        for item in node:
            yield from _literals(item)
    elif not isinstance(node, bool):
        yield node


def _near(value: float) -> list[int | float]:
    """Numbers on and around a threshold, as ints and floats."""
    out: list[int | float] = [value, -value, value + 1, value - 1, value + 0.5, value - 0.5]
    out += [math.nextafter(value, math.inf), math.nextafter(value, -math.inf), value * 2, value / 2]
    if float(value).is_integer():
        out += [int(value), int(value) + 1, int(value) - 1]
    return [v for v in out if abs(v) < MAGNITUDE]


def _numbers(thresholds: Sequence[float]) -> st.SearchStrategy[Any]:
    near = sorted({v for t in [0, 1, *thresholds] for v in _near(t)}, key=repr)
    return st.one_of(
        st.sampled_from(near),
        st.integers(-1000, 1000),
        st.floats(-MAGNITUDE, MAGNITUDE, allow_nan=False, allow_subnormal=False),
        st.floats(-1, 1, allow_nan=False, allow_subnormal=False),  # tiny ones too (no exponent sent)
    )


def _values(kind: FieldType, numbers: st.SearchStrategy[Any], texts: Sequence[str]) -> st.SearchStrategy[Any]:
    """A field's value: mostly of its type, sometimes missing, sometimes of another type."""
    strings = st.one_of(st.sampled_from(texts), TEXT) if texts else TEXT
    typed: dict[FieldType, st.SearchStrategy[Any]] = {
        "number": numbers,
        "string": strings,
        "boolean": st.booleans(),
        "date": st.sampled_from(sorted({*DATES, *(t for t in texts if len(t) == 10)})),
    }
    wrong = st.one_of(
        st.booleans(), st.integers(-2, 2), st.sampled_from(["", "true", "false", "5", "1.5"]), strings
    )
    return st.one_of(typed[kind], typed[kind], typed[kind], st.none(), wrong)


def _kind_facts(rules: Sequence[CompiledRule]) -> st.SearchStrategy[Fact]:
    types = REGISTRY[rules[0].rule.on].field_types()
    literals = [v for r in rules for v in _literals(r.when.condition)]
    numbers = _numbers(sorted({float(v) for v in literals if isinstance(v, (int, float))}))
    texts = sorted({v for v in literals if isinstance(v, str)})
    fields = sorted(set().union(*(r.when.fields for r in rules)))
    return st.fixed_dictionaries({name: _values(types[name], numbers, texts) for name in fields})


BY_KIND = {kind: [r for r in RULES if r.rule.on == kind] for kind in sorted({r.rule.on for r in RULES})}
FACTS_PER_KIND = 8
# One kind at a time: the whole rulebook's facts in one example outgrow what
# hypothesis generates (its rules read some 300 fields), and a kind's rules
# only ever match facts of that kind.
KIND_FACTS = {
    kind: st.lists(_kind_facts(rules), min_size=FACTS_PER_KIND, max_size=FACTS_PER_KIND)
    for kind, rules in BY_KIND.items()
}


def _check_rulebook(facts_by_kind: dict[str, list[Fact]]) -> int:
    facts = [(kind, fact) for kind, group in facts_by_kind.items() for fact in group]
    fired = set(engine.match(RULES, facts))
    problems: list[str] = []
    undefined = 0
    for kind, rules in BY_KIND.items():
        ids = [RULES.index(r) for r in rules]
        indices = [i for i, (k, _) in enumerate(facts) if k == kind]
        pairs = {(ids.index(r), indices.index(f)) for r, f in fired if r in ids and f in indices}
        found, unknown = disagreements([r.when for r in rules], [facts[i][1] for i in indices], pairs)
        problems += found
        undefined += unknown
    assert not problems, "\n\n".join(problems[:5])
    return undefined


@pytest.mark.parametrize("kind", sorted(BY_KIND))
@QUICK
@given(data=st.data())
def test_rulebook_matches_the_same_facts_through_the_oracle_and_the_engine(
    kind: str, data: st.DataObject
) -> None:
    facts = data.draw(KIND_FACTS[kind])
    undefined = _check_rulebook({kind: facts})
    # Some verdicts are undefined (a value of the wrong type): never all of them.
    assert undefined < len(BY_KIND[kind]) * len(facts)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BY_KIND))
@THOROUGH
@given(data=st.data())
def test_rulebook_matches_the_same_facts_thoroughly(kind: str, data: st.DataObject) -> None:
    _check_rulebook({kind: data.draw(KIND_FACTS[kind])})


# --------------------------------------------------------------------------
# 3. Generated `when` expressions over a few fields.

FIELDS: dict[str, FieldType] = {
    "a": "number",
    "b": "number",
    "c.d": "number",
    "id": "number",  # durable's own key: stored as "@id" (fact_key)
    "s": "string",
    "t": "string",
    "f": "boolean",
    "g": "boolean",
    "day": "date",
    "until": "date",
}
NUMBERS = [n for n, k in FIELDS.items() if k == "number"]
STRINGS = [n for n, k in FIELDS.items() if k == "string"]
BOOLEANS = [n for n, k in FIELDS.items() if k == "boolean"]
DAYS = [n for n, k in FIELDS.items() if k == "date"]
# Thresholds that are not binary fractions: durable and the oracle must round alike.
NUMBER_LITERALS = ["0", "1", "-1", "3", "0.1", "0.8", "-2.5", "1000000", "0.0001", "123456.789", "7"]
DIVISORS = ["2", "3", "0.1", "-4", "7.5", "(1 + 2)"]
STRING_LITERALS = ["", "a", "a b", "A01", "é", 'say "hi"', "back\\slash", "true", "5"]
DATE_LITERALS = ["2024-01-01", "2024-02-29", "2027-01-15"]
COMPARE = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
EQUALITY = st.sampled_from(["==", "!="])


def _number_expr() -> st.SearchStrategy[str]:
    leaf = st.sampled_from([*NUMBERS, *NUMBER_LITERALS])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(lambda t: "(" + " ".join(t) + ")"),
            st.tuples(inner, st.sampled_from(DIVISORS)).map(lambda t: f"({t[0]} / {t[1]})"),
            inner.map(lambda e: f"-{e}"),
        )

    return st.recursive(leaf, extend, max_leaves=3)


def _compared(
    fields: list[str], ops: st.SearchStrategy[str], other: st.SearchStrategy[str]
) -> st.SearchStrategy[str]:
    return st.builds(
        lambda field, op, value, swap: f"{value} {op} {field}" if swap else f"{field} {op} {value}",
        st.sampled_from(fields), ops, other, st.booleans(),
    )


def _listed(fields: list[str], items: list[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda field, neg, elts: f"{field} {'not in' if neg else 'in'} [{', '.join(elts)}]",
        st.sampled_from(fields), st.booleans(), st.lists(st.sampled_from(items), min_size=1, max_size=3),
    )


def _atom() -> st.SearchStrategy[str]:
    strings = [repr(s) for s in STRING_LITERALS]
    days = [repr(d) for d in DATE_LITERALS]
    return st.one_of(
        _compared(NUMBERS, COMPARE, _number_expr()),
        _compared(NUMBERS, COMPARE, _number_expr()),
        _compared(STRINGS, EQUALITY, st.sampled_from([*strings, *STRINGS])),
        _compared(DAYS, COMPARE, st.sampled_from([*days, *DAYS])),
        _compared(BOOLEANS, EQUALITY, st.sampled_from(["True", "False", *BOOLEANS])),
        st.sampled_from(BOOLEANS),
        _listed(NUMBERS, NUMBER_LITERALS),
        _listed(STRINGS, strings),
        _listed(DAYS, days),
        st.sampled_from(list(FIELDS)).map(lambda field: f"exists({field})"),
    )


def _when() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, inner).map(lambda t: f"({t[0]} and {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]} or {t[1]})"),
            inner.map(lambda c: f"not ({c})"),
        )

    return st.recursive(_atom(), extend, max_leaves=4)


def _compiled(source: str) -> CompiledWhen | None:
    try:
        return compile_when(source, FIELDS)
    except ExprError:  # e.g. 0.0001 * 0.1 folds to a number that needs an exponent
        return None


WHENS = st.lists(_when().map(_compiled), min_size=40, max_size=40).map(
    lambda whens: [w for w in whens if w is not None]
)
_NUMBER_POOL = _numbers([float(v) for v in NUMBER_LITERALS])
_TEXT_POOL = [*STRING_LITERALS, *DATE_LITERALS]
EXPR_FACTS = st.lists(
    st.fixed_dictionaries(
        {name: _values(kind, _NUMBER_POOL, _TEXT_POOL) for name, kind in FIELDS.items()}
    ),
    min_size=10,
    max_size=10,
)


def _check_whens(whens: list[CompiledWhen], facts: list[Fact]) -> None:
    fired = set(engine.match_kind("rack", whens, facts))
    problems, _ = disagreements(whens, facts, fired)
    assert not problems, "\n\n".join(problems[:5])


@QUICK
@given(whens=WHENS, facts=EXPR_FACTS)
def test_generated_whens_match_the_same_facts_through_the_oracle_and_the_engine(
    whens: list[CompiledWhen], facts: list[Fact]
) -> None:
    _check_whens(whens, facts)


@pytest.mark.slow
@THOROUGH
@given(whens=WHENS, facts=EXPR_FACTS)
def test_generated_whens_match_the_same_facts_thoroughly(
    whens: list[CompiledWhen], facts: list[Fact]
) -> None:
    _check_whens(whens, facts)


# --------------------------------------------------------------------------
# 4. Raw conditions, beyond what expr.py emits: the oracle's model of durable's
# quirks (unguarded right-hand fields, constant arithmetic, booleans in
# arithmetic, mixed types, null) against durable itself, facts as json.dumps
# writes them.


def fire_raw(conditions: Sequence[Mapping[str, Any]], facts: Sequence[Fact]) -> set[tuple[int, int]]:
    wrapped = [{"$and": [{"kind": "k"}, dict(c)]} for c in conditions]
    docs = [{**fact, "kind": "k", "id": i} for i, fact in enumerate(facts)]
    return engine.run_ruleset(wrapped, json.dumps(docs, ensure_ascii=False))


@pytest.mark.parametrize(
    ("condition", "fact", "expected"),
    [
        # A missing left field: false whatever the operator.
        ({"$neq": {"a": 1}}, {"b": 1}, False),
        # Arithmetic over constants only is never computed (expr.py folds it).
        ({"$eq": {"a": {"$add": {"$l": 1, "$r": 2}}}}, {"a": 3}, False),
        ({"$eq": {"a": {"$add": {"$l": {"$m": "a"}, "$r": {"$mul": {"$l": 1, "$r": 0}}}}}}, {"a": 3}, False),
        # int / int truncates toward zero (expr.py sends divisors as floats).
        ({"$eq": {"a": {"$div": {"$l": {"$m": "b"}, "$r": 2}}}}, {"a": -1, "b": -3}, True),
        ({"$eq": {"a": {"$div": {"$l": {"$m": "b"}, "$r": 2.0}}}}, {"a": -1.5, "b": -3}, True),
        # Booleans: 0/1 against numbers; + is AND, * is XOR, - unsupported.
        ({"$eq": {"a": True}}, {"a": 1}, True),
        ({"$gt": {"a": False}}, {"a": 0.5}, True),
        ({"$eq": {"a": {"$mul": {"$l": {"$m": "b"}, "$r": True}}}}, {"a": False, "b": True}, True),
        ({"$eq": {"a": {"$add": {"$l": {"$m": "b"}, "$r": True}}}}, {"a": False, "b": False}, True),
        ({"$neq": {"a": {"$sub": {"$l": {"$m": "b"}, "$r": True}}}}, {"a": True, "b": True}, False),
        # A boolean against a string: the text "true " over 4 characters.
        ({"$eq": {"a": True}}, {"a": "true"}, True),
        ({"$eq": {"a": "false"}}, {"a": False}, True),
        ({"$eq": {"a": True}}, {"a": "true "}, True),
        ({"$eq": {"a": True}}, {"a": "truex"}, False),
        # Strings order as raw JSON text; equality is exact.
        ({"$gt": {"a": "a b"}}, {"a": "a"}, True),
        ({"$lt": {"a": {"$m": "b"}}}, {"a": "a b", "b": "a"}, True),
        ({"$eq": {"a": 'x"y'}}, {"a": 'x"y'}, True),
        # Arithmetic on a string is unsupported: false, even for !=.
        ({"$neq": {"a": {"$add": {"$l": {"$m": "b"}, "$r": 1}}}}, {"a": 1, "b": "x"}, False),
        # null: x vs null is only !=.
        ({"$neq": {"a": None}}, {"a": 1}, True),
        ({"$eq": {"a": None}}, {"a": 1}, False),
    ],
)
def test_oracle_models_durable_quirks(condition: dict[str, Any], fact: Fact, expected: bool) -> None:
    assert oracle.matches(condition, fact) is expected
    assert bool(fire_raw([condition], [fact])) is expected


def test_a_missing_right_hand_field_is_undefined() -> None:
    # durable reads a result nobody wrote (expr.py guards every such field
    # with $ex). Usually true, but the condition below did not fire on
    # {"c": 2, "b": 1} in a ruleset of 40 generated conditions, and fires alone.
    deeper = {"$eq": {"c": {"$sub": {"$l": {"$div": {"$l": {"$m": "a"}, "$r": -4.0}}, "$r": "false"}}}}
    assert oracle.matches({"$lt": {"a": {"$m": "b"}}}, {"a": 1}) is oracle.UNDEFINED
    assert oracle.matches(deeper, {"c": 2, "b": 1}) is oracle.UNDEFINED


RAW_FIELDS = ["a", "b", "c"]
RAW_LITERALS = [0, 1, -1, 2, 3, 0.5, 1.5, -2.5, True, False, None, "", "a", "a b", "5", "true", "false"]
RAW_LITERALS.append('x"y')
RAW_DIVISORS = [2, 3, -2, 0.5, 2.0, -4.0]


def _raw_operand() -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.sampled_from(RAW_LITERALS), st.sampled_from(RAW_FIELDS).map(lambda f: {"$m": f}))

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(lambda op, left, right: {op: {"$l": left, "$r": right}},
                      st.sampled_from(["$add", "$sub", "$mul"]), inner, inner),
            # Divisors are non-zero literals: an integer 0 would kill the process.
            st.builds(
                lambda left, right: {"$div": {"$l": left, "$r": right}}, inner, st.sampled_from(RAW_DIVISORS)
            ),
        )

    return st.recursive(leaf, extend, max_leaves=3)


RAW_CONDITION = st.one_of(
    st.builds(lambda op, f, v: {op: {f: v}},
              st.sampled_from(["$lt", "$lte", "$gt", "$gte", "$eq", "$neq"]),
              st.sampled_from(RAW_FIELDS), _raw_operand()),
    st.builds(lambda op, f: {op: {f: 1}}, st.sampled_from(["$ex", "$nex"]), st.sampled_from(RAW_FIELDS)),
)
RAW_VALUES = [v for v in RAW_LITERALS if v is not None] + ["1.5", "\\", "a\tb"]
RAW_FACTS = st.lists(
    st.fixed_dictionaries({f: st.sampled_from(RAW_VALUES) for f in RAW_FIELDS}).flatmap(
        lambda full: st.sets(st.sampled_from(RAW_FIELDS)).map(
            lambda dropped: {k: v for k, v in full.items() if k not in dropped}
        )
    ),
    min_size=10,
    max_size=10,
)


def _check_raw(conditions: list[dict[str, Any]], facts: list[Fact]) -> None:
    fired = fire_raw(conditions, facts)
    problems = []
    for (c, condition), (f, fact) in itertools.product(enumerate(conditions), enumerate(facts)):
        expected = oracle.matches(condition, fact)
        if expected is not oracle.UNDEFINED and expected != ((c, f) in fired):
            problems.append(f"condition: {json.dumps(condition)}\nfact: {fact!r}\noracle: {expected}")
    assert not problems, "\n\n".join(problems[:5])


# At most 40 single-test conditions: a fact may match at most 64 alternatives of a ruleset.
RAW_CONDITIONS = st.lists(RAW_CONDITION, min_size=40, max_size=40)


@QUICK
@given(conditions=RAW_CONDITIONS, facts=RAW_FACTS)
def test_raw_conditions_match_the_same_facts_through_the_oracle_and_durable(
    conditions: list[dict[str, Any]], facts: list[Fact]
) -> None:
    _check_raw(conditions, facts)


@pytest.mark.slow
@THOROUGH
@given(conditions=RAW_CONDITIONS, facts=RAW_FACTS)
def test_raw_conditions_match_the_same_facts_thoroughly(
    conditions: list[dict[str, Any]], facts: list[Fact]
) -> None:
    _check_raw(conditions, facts)
