from __future__ import annotations

import pytest

from checker.core.errors import UserError
from checker.core.suggest import did_you_mean, lookup


@pytest.mark.parametrize(
    ("word", "choices", "hint"),
    [("amp", ["amps", "voltage"], " (did you mean 'amps'?)"), ("zzz", ["amps"], ""), ("x", [], "")],
)
def test_did_you_mean(word: str, choices: list[str], hint: str) -> None:
    assert did_you_mean(word, choices) == hint


def test_lookup_returns_the_entry_or_names_all_known() -> None:
    registry = {"text": 1, "json": 2}
    assert lookup(registry, "json", "format") == 2
    with pytest.raises(UserError) as exc:
        lookup(registry, "jsn", "format")
    assert exc.value.lines == ("unknown format 'jsn' (did you mean 'json'?); known: text, json",)
