"""The readiness report as a GitHub job summary: cut to fit GitHub's 1 MiB.

GitHub drops a step's summary, all of it, when the step wrote more than
1 MiB to it ("each step is restricted to a maximum size of 1MiB":
https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary);
the report of 26,000 servers is past that (its rack table). So the longest
tables and lists are cut to the same number of rows, the most that fits, and
each says how many rows it left out; the verdict, the findings by rule and
every small table stay whole. `checker report` writes the whole report.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

LIMIT = 1024 * 1024  # bytes GitHub takes for one step's summary (module docstring)
ADVICE = "GitHub drops a step summary over 1 MiB; `checker report` writes the whole report"


def _size(line: str) -> int:
    return len(line.encode("utf-8", "backslashreplace")) + 1  # with its newline


@dataclass(frozen=True)
class Block:
    """Lines that stay together (`head`), then rows that may be cut (`rows`)."""

    head: tuple[str, ...]
    rows: tuple[str, ...] = ()
    table: bool = False

    def lines(self, keep: int) -> list[str]:
        out = [*self.head, *self.rows[:keep]]
        cut = len(self.rows) - keep
        if cut > 0:
            if self.table:  # a paragraph after the table, not a row of it
                out += ["", f"*{keep:,} of {len(self.rows):,} rows shown: {ADVICE}.*"]
            else:
                out.append(f"- ... and {cut:,} more not shown: {ADVICE}")
        return out


def blocks(text: str) -> list[Block]:
    """A table (its heading and rule line, then rows), a list (its items), a
    fenced block whole, any other line on its own."""
    lines = text.splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines) - 1)
            out.append(Block(tuple(lines[i : end + 1])))
            i = end + 1
            continue
        for marker, table in (("|", True), ("- ", False)):
            if line.startswith(marker):
                end = i
                while end < len(lines) and lines[end].startswith(marker):
                    end += 1
                head = 2 if table else 0
                out.append(Block(tuple(lines[i : i + head]), tuple(lines[i + head : end]), table))
                i = end
                break
        else:
            out.append(Block((line,)))
            i += 1
    return out


def _total(parts: Sequence[Block], keep: int) -> int:
    return sum(sum(map(_size, b.lines(min(keep, len(b.rows))))) for b in parts)


def fit(text: str, budget: int = LIMIT) -> str:
    """`text` itself when it fits in `budget` bytes; else every table and list cut to
    the most rows that fit, and a closing note; "" when not even the note fits."""
    if sum(map(_size, text.splitlines())) <= budget:
        return text
    parts = blocks(text)
    note = f"*This job summary is cut to fit: {ADVICE}.*"
    room = budget - _size("") - _size(note)
    longest = max((len(b.rows) for b in parts), default=0)
    # The largest row count that fits, -1 if none does: _total grows with it,
    # but for the note a cut list gains, longer than the rows it loses when
    # they are few; so the count found is checked, and lowered until it fits.
    keep = bisect.bisect_right(range(longest + 1), room, key=lambda k: _total(parts, k)) - 1
    while keep >= 0 and _total(parts, keep) > room:
        keep -= 1
    if keep >= 0:
        lines = [line for b in parts for line in b.lines(min(keep, len(b.rows)))]
    else:  # no table or list to cut is long enough: the first lines that fit
        lines, used = [], 0
        for line in text.splitlines():
            used += _size(line)
            if used > room:
                break
            lines.append(line)
    if room < 0:
        return ""
    return "\n".join([*lines, "", note]) + "\n"
