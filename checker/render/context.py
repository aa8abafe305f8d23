"""What a formatter may know beyond the result: where links point, whether to colour,
how many findings per rule a person is shown."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class RenderContext:
    # Prefix that turns an inventory path into a link from where the output is
    # read: "" (same directory), "../" (a report in docs/), or a blob URL.
    link_base: str = ""
    color: bool = False
    # Findings shown per rule by the formats people read (text, markdown,
    # github), then a count of the rest; 0: all. The machine formats show all.
    max_per_rule: int = 100
    # Alike findings (render/groups.py) shown once with their count and names
    # by text, Markdown and the pull-request comment; False: a line each.
    group: bool = True
    # `checker audit --quiet`: the text format writes its summary line only.
    summary_only: bool = False

    def link(self, file: str, line: int) -> str:
        # A name with undecodable bytes (surrogates) links to those bytes, %-encoded.
        return f"{self.link_base}{quote(file, errors='surrogateescape')}#L{line}"


PLAIN = RenderContext()
