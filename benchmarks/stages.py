"""Time each pipeline stage on a synthetic fleet and print the figures.

    python benchmarks/stages.py 1000 10000 50000

The budget (design notes, "Performance budget"): everything after parsing
costs <= 25 % of the parse time, and growth is linear in servers.
"""

from __future__ import annotations

import datetime as dt
import gc
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fleet import write

from checker.audit import run_audit
from checker.capacity import compute
from checker.config import Config, settings
from checker.engine import evaluate
from checker.facts import Context, build_all
from checker.inventory import fastpath
from checker.inventory.loader import load
from checker.inventory.source import decode, read
from checker.perf import gc_paused
from checker.render import get_formatter
from checker.rulebook import load_rulebook

T = TypeVar("T")


def timed(func: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = func()
    return value, time.perf_counter() - start


def bench(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = write(count, folder)
        size = sum(p.stat().st_size for p in files)
        gc.enable()  # PyYAML as users run it, for the MB/s baseline
        _, plain = timed(lambda: [list(yaml.load_all(p.read_text(), Loader=yaml.CSafeLoader)) for p in files])
        gc.disable()
        _, ours = timed(lambda: [read(p) for p in files])
        # Which parser read each file (docs/architecture.md, "Source maps"); the event
        # parser is not timed here, as its source maps would raise the peak RSS.
        fast = sum(fastpath.load(decode(p.read_bytes())) is not None for p in files)
        taken = f"fast path for {fast} of {len(files)} files"
        (inv, problems), load_s = timed(lambda: load([folder]))
        assert not problems, problems[:3]
        book = load_rulebook()
        cap, cap_s = timed(lambda: compute(inv))
        facts, facts_s = timed(lambda: build_all(inv, cap, Context(dt.date(2027, 1, 15))))
        findings, eval_s = timed(lambda: evaluate(book.rules, facts))
        cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
        result, total_s = timed(lambda: run_audit([folder], cfg, dt.date(2027, 1, 15), book))
        _, json_s = timed(lambda: get_formatter("json")(result))
    after = load_s - ours + cap_s + facts_s + eval_s + json_s
    print(
        f"{count:>7} servers {size / 1e6:6.1f} MB | yaml.load {plain:6.2f}s ({size / 1e6 / plain:4.2f} MB/s)"
        f" | our parse {ours:6.2f}s ({taken})"
        f" | validate {load_s - ours:5.2f}s | capacity {cap_s:5.2f}s"
        f" | facts {facts_s:5.2f}s | rules {eval_s:5.2f}s ({len(findings)} findings) | json {json_s:5.2f}s"
        f" | after parse: {after:5.2f}s = {after / ours:4.0%} of our parse, {after / plain:4.0%} of yaml.load"
        f" | whole audit {total_s:6.2f}s"
    )


if __name__ == "__main__":
    # As in the CLI, which runs every command with the cycle collector paused.
    with gc_paused():
        for n in [int(a) for a in sys.argv[1:]] or [1000, 10000]:
            bench(n)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")
