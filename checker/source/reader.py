"""Reading a YAML file: by the fast path where it provably gives the event
parser's values, else by the event parser."""

from __future__ import annotations

from pathlib import Path

from checker.source import fastpath
from checker.source.parse import Document, decode, parse


def read(path: Path, data: bytes | None = None, trees: fastpath.Trees | None = None) -> list[Document]:
    """A file's documents (`data`: its bytes, when already read): by the fast
    path when it can show it gives exactly what `parse` gives, else by `parse`.
    `trees`: the run's holder of rapidyaml trees for positions (fastpath.Trees),
    one for all the files a run reads; default: one for this file alone."""
    text = decode(path.read_bytes() if data is None else data)
    fast = fastpath.load(text, trees)
    return fast if fast is not None else parse(text)
