"""Small builders shared by the unit tests."""

from __future__ import annotations

import contextlib
import os
import signal
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from checker.core.findings import Finding
from checker.derive.facts import REGISTRY, Fact
from checker.evaluate.engine import evaluate
from checker.evaluate.expr import compile_when
from checker.evaluate.rulebook import CompiledRule, Rule
from checker.evaluate.sandbox import environment
from checker.load import cache
from checker.source.parse import Src


def compiled_rule(
    rule_id: str, on: str, when: str, *, locate: str | None = None, severity: str = "error"
) -> CompiledRule:
    rule = Rule.model_validate(
        {
            "id": rule_id,
            "title": "t",
            "category": "power",
            "severity": severity,
            "on": on,
            "when": when,
            "message": rule_id + " on {{ name }}",
            "remediation": "r",
            "locate": locate,
        }
    )
    when_ = compile_when(when, REGISTRY[on].field_types())
    template = environment().compile_message(rule.message)
    return CompiledRule(rule, "rules/t.yaml", Src(1, 1), when_, template, ("name",))


GOLDEN = Path(__file__).parent / "golden"
# Set to regenerate the golden files on purpose, then review the diff.
REGENERATE = "CHECKER_REGENERATE_GOLDEN"


def assert_golden(name: str, text: str) -> None:
    """`text` equals tests/golden/<name>; drift fails until regenerated on purpose."""
    path = GOLDEN / name
    if os.environ.get(REGENERATE):
        path.write_text(text, encoding="utf-8", newline="")
    assert path.is_file(), f"tests/golden/{name} is missing: run with {REGENERATE}=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"tests/golden/{name} drifted: rerun with {REGENERATE}=1 and review the diff"


def write_file(path: Path, content: str | bytes) -> Path:
    """A test input file: bytes as they are, text dedented; parent folders created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(textwrap.dedent(content), encoding="utf-8")
    return path


def finding(
    rule: str = "power.rack-capacity",
    severity: str = "error",
    entity: str = "rack/f/A",
    category: str = "power",
) -> Finding:
    """A finding with only the fields a decide-stage test looks at."""
    return Finding(rule, severity, category, entity, "m", "r", "f.yaml", 3, 5)  # type: ignore[arg-type]


def evaluated(rules: Sequence[CompiledRule], facts: Sequence[Fact]) -> list[Finding]:
    """The engine's findings, each with its message (as a format shows them)."""
    found, messages = evaluate(rules, facts)
    return [messages.of(f) for f in found]


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """A hang fails the test, far beyond what the case takes (not a timing assertion)."""

    def fail(*_: object) -> None:
        raise AssertionError(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def cache_entries(folder: Path, tag: str) -> list[tuple[cache.Cache, str, Any]]:
    """Each entry of the cache in `folder` whose body is tagged `tag` (its first
    item): the cache, the entry's key and its unpacked body, in key order."""
    store = cache.open_cache(folder)
    assert store is not None
    found = []
    for entry in sorted((folder / cache.ENTRIES).iterdir()):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body[:1] == (tag,):
            found.append((store, entry.name, body))
    return found
