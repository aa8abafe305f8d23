"""The built-in rules compiled ahead (checker/evaluate/builtin_rulebook.json).

A run reads them from the file instead of compiling the rule files (about 90 ms
of every run without a cache), only while the file is what compiling them gives
and while its key is the rule files' bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.core.resources import rules_dir
from checker.evaluate import rulebook
from checker.evaluate.rulebook import AHEAD, CompiledRule, ahead_text, builtin_rules, load_rulebook

FILES = rulebook._files([rules_dir()])


def _compiled_here() -> list[CompiledRule]:
    rules: list[CompiledRule] = []
    for path in FILES:
        rules += rulebook._load_file(path).rules
    return sorted(rules, key=lambda r: r.id)


def _shape(r: CompiledRule) -> tuple[object, ...]:
    return (r.rule.model_dump(), r.file, r.src.line, r.src.column, r.when, r.template.source,
            r.template.names, r.message_fields)


def test_the_file_is_what_compiling_the_rules_gives_now() -> None:
    text = ahead_text(FILES)
    if os.environ.get("CHECKER_REGENERATE_GOLDEN"):
        AHEAD.write_text(text)
    assert AHEAD.read_text() == text, (
        "checker/evaluate/builtin_rulebook.json is stale: "
        "CHECKER_REGENERATE_GOLDEN=1 pytest tests/evaluate/test_rulebook_ahead.py"
    )


def test_the_rules_read_from_it_are_the_rules_compiled() -> None:
    ahead = builtin_rules(FILES, {})
    assert ahead is not None
    assert [_shape(r) for r in ahead] == [_shape(r) for r in _compiled_here()]


def test_a_rule_file_edited_since_is_compiled_not_read_stale() -> None:
    first = FILES[0]
    edited = first.read_bytes() + b"\n# an edit\n"
    assert builtin_rules(FILES, {first: edited}) is None


@pytest.mark.parametrize("content", [b"", b"not json", b'{"d": [["key", "x"]]}', b'{"x": 1}', b"[1, 2]"])
def test_a_broken_file_is_ignored_and_the_rules_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    broken = tmp_path / "builtin_rulebook.json"
    broken.write_bytes(content)
    monkeypatch.setattr(rulebook, "AHEAD", broken)
    assert builtin_rules(FILES, {}) is None
    book = load_rulebook()
    assert [_shape(r) for r in book.rules] == [_shape(r) for r in _compiled_here()]


def test_a_run_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[Path] = []
    original = rulebook._load_file

    def counting(path: Path, data: bytes | None = None) -> rulebook._Read:
        compiled.append(path)
        return original(path, data)

    monkeypatch.setattr(rulebook, "_load_file", counting)
    load_rulebook()
    assert compiled == []  # no built-in file compiled
