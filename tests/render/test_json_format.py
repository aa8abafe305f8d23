from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from checker.core import terminal
from checker.render import get_formatter
from checker.render.json_format import _indented, dumps
from tests.conftest import CliRunner, Run
from tests.helpers import assert_golden
from tests.render.test_text import FINDINGS, _result


def test_json_contract_fields() -> None:
    data = json.loads(get_formatter("json")(_result(FINDINGS)))
    assert list(data) == ["tool", "version", "as_of", "verdict", "summary", "findings", "capacity"]
    assert data["as_of"] == "2027-01-15" and data["verdict"] == "fail"
    assert list(data["findings"][0]) == [
        "rule",
        "severity",
        "category",
        "entity",
        "message",
        "remediation",
        "file",
        "line",
        "column",
        "waived",
    ]
    assert data["findings"][1]["waived"] is True
    assert data["capacity"] == {"facilities": [], "racks": []}


def test_json_keeps_non_ascii_text_and_ends_with_a_newline() -> None:
    out = get_formatter("json")(_result(FINDINGS))
    assert out.endswith("}\n")


def test_json_golden(golden_run: Callable[[str], Run]) -> None:
    run = golden_run("json")
    assert (run.code, run.err) == (0, "")
    assert_golden("audit.json", run.out)


def test_capacity_rows_keep_the_keys_of_0_1_0(cli: CliRunner, in_fixtures: Path) -> None:
    """The JSON contract only adds: rack and facility rows keep their first key names."""
    doc = json.loads(cli("audit", "overload", "--as-of", "2027-01-15", "--format", "json").out)
    (rack,) = doc["capacity"]["racks"]
    assert (rack["servers"], rack["feeds"], rack["side_a_kw"], rack["side_b_kw"]) == (2, 2, 5.888, 5.888)
    assert (rack["server_count"], rack["feed_count"]) == (2, 2)
    (facility,) = doc["capacity"]["facilities"]
    assert (facility["servers"], facility["racks"], facility["it_capacity_kw"]) == (2, 1, 100)


_SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_JSONISH = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_SCALAR, inner, max_size=4),
    max_leaves=20,
)


@given(_JSONISH)
@settings(max_examples=300, deadline=None)
def test_indented_is_byte_for_byte_json_dumps_with_indent_2(value: object) -> None:
    # The contract's bytes were json.dumps(indent=2); the faster writer must not move one.
    assert _indented(value, 0) == json.dumps(value, indent=2, ensure_ascii=False)


_TRICKY = st.sampled_from(["},\n      {", "}, {", '"}', "{", "}", "\n", "\\", '": {', "\u2028", "\x1b"])
_ROW_VALUE = _SCALAR | _TRICKY | st.lists(_TRICKY, max_size=2).map("".join)
_ROW = st.dictionaries(st.text(max_size=4) | _TRICKY, _ROW_VALUE, min_size=1, max_size=5)
_ROWS = st.lists(_ROW, max_size=6)


@given(_ROWS, st.integers(min_value=0, max_value=3))
@settings(max_examples=300, deadline=None)
def test_rows_are_written_byte_for_byte_as_json_dumps_with_indent_2(rows: list[object], depth: int) -> None:
    nested: object = rows
    for _ in range(depth):
        nested = {"level": nested}
    assert _indented(nested, 0) == json.dumps(nested, indent=2, ensure_ascii=False)


# What an inventory can put in a string: every kind of character output must
# escape (C0, DEL, C1, line separators, bidi and invisible ones, a lone
# surrogate from an undecodable file name) and workflow commands.
_HOSTILE = st.sampled_from(
    ["\x00", "\x1b[2J", "\t", "\n", "\x7f", "\x85", "\x9b", "\u2028", "\u202e", "\u200b", "\ufeff",
     "\udcff", "::", "::add-mask::x", "\n::stop-commands::", "##[", "é", "数据", " ", "a"]
)
_HOSTILE_TEXT = st.lists(_HOSTILE, max_size=4).map("".join) | st.text(max_size=6)
_HOSTILE_SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _HOSTILE_TEXT
_HOSTILE_DOC = st.recursive(
    _HOSTILE_SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_HOSTILE_TEXT, inner, max_size=4),
    max_leaves=20,
)


@given(_HOSTILE_DOC)
@settings(max_examples=400, deadline=None)
def test_json_is_written_escaped_for_any_terminal_in_one_pass(value: object) -> None:
    """dumps writes the bytes it always wrote (json.dumps with indent=2, then every
    character JSON leaves raw that a terminal must not get written as \\uNNNN),
    which output's last guard (escape_lines) would not change: Format.escaped."""
    written = dumps({"value": value})
    table = {code: f"\\u{code:04x}" for code in terminal._UNSAFE if code >= 0x20}
    expected = json.dumps({"value": value}, indent=2, ensure_ascii=False).translate(table) + "\n"
    assert written == expected
    assert terminal.escape_lines(written) == written
    assert json.loads(written) == {"value": value}
