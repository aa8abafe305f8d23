"""The importers' YAML writer: what it writes reads back as the same values."""

from __future__ import annotations

from typing import Any

import pytest

from checker.importers import emit
from checker.source.reader import parse_text

TRICKY = ["N", "y", "yes", "No", "off", "null", "~", "1", "1.5", "1e3", "0x1f", "12:30", "2027-01-01",
          "0755", "-", "- a", "a: b", "#x", "a #b", "'q'", '"q"', "[a]", "{a}", "&a", "*a", "!t", "%x",
          "@x", "`x", "R01-A", "fra1", "Frankfurt 1", " lead", "trail ", "", "ü-rack", "a\nb", "tab\tx",
          ".inf", "-.inf", ".nan", "+1", "1_000", "Y"]


@pytest.mark.parametrize("text", TRICKY)
def test_a_string_reads_back_as_itself(text: str) -> None:
    doc = emit.document({"value": text, "list": [text], "flow": {"a": text}})
    (read,) = parse_text(doc)
    assert read.value == {"value": text, "list": [text], "flow": {"a": text}}


@pytest.mark.parametrize("value", [0, 1, -3, 42.5, 0.1, 1e-9, 120.0, True, False, None])
def test_numbers_booleans_and_null_read_back(value: Any) -> None:
    (read,) = parse_text(emit.document({"v": value}))
    assert read.value == {"v": value}
    assert isinstance(read.value["v"], type(value) if value != 120.0 else int)


def test_layout_short_mappings_on_one_line_comments_above() -> None:
    doc = emit.document(
        {"kind": "Facility", "racks": [emit.Commented({"name": "R1", "feeds": [{"name": "A", "amps": 16}]},
                                                      ("rack one",))]},
        ["head"],
    )
    assert doc == ("# head\nkind: Facility\nracks:\n  # rack one\n  - name: R1\n    feeds:\n"
                   "      - {name: A, amps: 16}\n")
