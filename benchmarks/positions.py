"""What positions in fast-parsed files cost: the event parser's whole map of
each file against rapidyaml's tree, node by node, as findings ask for them.

    python benchmarks/fleet.py --varied 10000 /tmp/fleet-varied
    python benchmarks/positions.py /tmp/fleet-varied

For every file of the folder the fast path reads, it times: the event parser's
map of the whole file (how every position was worked out before, the first
time one was asked for); a server's `memory_gb` key and value, asked for every
server of every file, file after file (what a finding on every server asks);
and the same asked for with the files interleaved, so that trees are parsed
again as they leave the few kept. It checks the positions agree.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import Any

from checker.source import fastpath
from checker.source.parse import Document, decode, parse


def fast_files(folder: Path) -> list[str]:
    texts = [decode(p.read_bytes()) for p in sorted(folder.glob("*.yaml"))]
    return [t for t in texts if fastpath.load(t) is not None]


def run_trees() -> Any:
    """The holder of trees one run's files share (fastpath.Trees), or None for
    a checker from before there was one (its trees were kept module-wide)."""
    holder = getattr(fastpath, "Trees", None)
    return None if holder is None else holder()


def load(text: str, trees: Any) -> list[Document]:
    return (fastpath.load(text) if trees is None else fastpath.load(text, trees)) or []


def servers(docs: list[Document]) -> list[tuple[Document, int]]:
    return [(d, i) for d in docs for i in range(len(d.value.get("servers", [])))]


def ask(pairs: list[tuple[Document, int]]) -> list[tuple[Any, ...]]:
    return [
        (d.src.locate(["servers", i, "memory_gb"]), d.src.locate(["servers", i, "memory_gb"], key=False))
        for d, i in pairs
    ]


def timed(work: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = work()
    return value, time.perf_counter() - start


def main(folder: Path) -> None:
    gc.disable()  # as the command line runs
    texts = fast_files(folder)
    eager, event_s = timed(lambda: [parse(t) for t in texts])
    trees = run_trees()  # as one audit reads these files
    in_order = [p for t in texts for p in servers(load(t, trees))]
    tree_positions, tree_s = timed(lambda: ask(in_order))
    per_file = [servers(load(t, trees)) for t in texts]
    longest = max(map(len, per_file))
    interleaved = [f[i] for i in range(longest) for f in per_file if i < len(f)]
    _, mixed_s = timed(lambda: ask(interleaved))
    assert tree_positions == ask([p for e in eager for p in servers(e)]), "positions differ"
    print(
        f"{len(texts)} fast-parsed files, {len(in_order)} servers | event parser's maps {event_s:.2f}s"
        f" | from the tree, a key and a value of every server, file by file {tree_s:.2f}s,"
        f" files interleaved {mixed_s:.2f}s"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
