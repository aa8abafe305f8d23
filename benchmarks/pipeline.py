"""Time each stage of the checker found on `sys.path` on one fleet folder.

    python benchmarks/fleet.py 10000 /tmp/fleet10k
    python benchmarks/pipeline.py /tmp/fleet10k

stages.py writes a new fleet for every run; this script reads a folder you
give it, so two versions of checker can be timed on the very same files:
check an older commit out into a git worktree and put it first on the path,

    git worktree add /tmp/old 9ffac20
    PYTHONPATH=/tmp/old python benchmarks/pipeline.py /tmp/fleet10k

(9ffac20 is the commit whose figures the capacity issue compared against:
docs/performance.md, "After parsing"). The few names that moved since are
looked up both ways below; nothing else differs between the two runs.
"""

from __future__ import annotations

import datetime as dt
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from checker.audit import run_audit
from checker.derive.capacity import compute
from checker.derive.facts import build_all
from checker.evaluate.engine import evaluate
from checker.evaluate.rulebook import load_rulebook
from checker.load.build import load
from checker.render import get_formatter
from checker.source.reader import read

try:  # moved out of checker.decide.verdict with checker.yaml support
    from checker.decide.config import Config, settings
except ImportError:  # older checkers
    from checker.decide.verdict import Config, settings  # type: ignore[attr-defined,no-redef]

AS_OF = dt.date(2027, 1, 15)
CAP = 100  # the default --max-per-rule
T = TypeVar("T")


def timed(func: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = func()
    return value, time.perf_counter() - start


def facts_of(inv: Any, cap: Any) -> Any:
    try:
        from checker.derive.facts import Context
    except ImportError:  # before the audit date reached the facts
        return build_all(inv, cap)  # type: ignore[call-arg]
    return build_all(inv, cap, Context(AS_OF))


def rules_on(book: Any, facts: Any) -> Any:
    try:
        found = evaluate(book.rules, facts, CAP)  # messages only for what the cap shows, as audits ran
    except TypeError:  # the engine renders no message (engine.Messages, when shown), or knew no cap
        found = evaluate(book.rules, facts)
    return found[0] if isinstance(found, tuple) else found


def main(folder: Path) -> None:
    files = sorted(folder.glob("*.yaml"))
    gc.enable()  # PyYAML as users run it
    _, plain = timed(lambda: [list(yaml.load_all(p.read_text(), Loader=yaml.CSafeLoader)) for p in files])
    gc.disable()  # as the command line runs
    _, ours = timed(lambda: [read(p) for p in files])
    (inv, problems), load_s = timed(lambda: load([folder]))
    assert not problems, problems[:3]
    book = load_rulebook()
    cap, cap_s = timed(lambda: compute(inv))
    facts, facts_s = timed(lambda: facts_of(inv, cap))
    findings, rules_s = timed(lambda: rules_on(book, facts))
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    result, audit_s = timed(lambda: run_audit([folder], cfg, AS_OF, book))
    _, json_s = timed(lambda: get_formatter("json")(result))
    after = load_s - ours + cap_s + facts_s + rules_s + json_s
    size = sum(p.stat().st_size for p in files)
    print(
        f"{len(files)} files, {size / 1e6:.1f} MB | yaml.load {plain:.2f}s"
        f" | our parse {ours:.2f}s{_parsers(files)} | validate {load_s - ours:.2f}s"
        f" | capacity {cap_s:.2f}s | facts {facts_s:.2f}s"
        f" | rules {rules_s:.2f}s ({len(findings)} findings, {len(book.rules)} rules) | json {json_s:.2f}s"
        f" | after parse {after:.2f}s = {after / plain:.0%} of yaml.load | whole audit {audit_s:.2f}s"
    )


def _parsers(files: list[Path]) -> str:
    """Which parser read the files (docs/architecture.md, "Source maps")."""
    try:
        from checker.source import fastpath
        from checker.source.parse import decode
    except ImportError:  # before the fast path
        return ""
    fast = sum(fastpath.load(decode(p.read_bytes())) is not None for p in files)
    return f" (fast path for {fast} of {len(files)} files)"


if __name__ == "__main__":
    main(Path(sys.argv[1]))
