"""The Jinja environment for documents rendered from templates/."""

from __future__ import annotations

import functools
import re

import jinja2

from checker.core.resources import templates_dir

# Characters that change the meaning of a Markdown table cell or inline text,
# or start an HTML tag or entity (GitHub renders inline HTML).
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\|`*_[]<>#&~"})
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9 _./:+-]")


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# An @mention would notify whoever a name mentions, a bare URL becomes a link
# (spam in a PR comment): a zero-width space (as an entity, plain ASCII) breaks both.
_NOTIFY = re.compile(r"@(?=[A-Za-z0-9])|(?<=[A-Za-z])(?=://)|(?<=www)(?=\.)", re.IGNORECASE)


def md_escape(value: object) -> str:
    """A user-supplied string, safe inside Markdown text and table cells: no
    markup, no @mention, no autolinked URL."""
    return _NOTIFY.sub(_break, _visible(" ".join(str(value).split())).translate(_MD_SPECIAL))


def _break(match: re.Match[str]) -> str:
    return match.group() + "&#8203;"


def mermaid_label(value: object) -> str:
    """A label inside a quoted Mermaid string in a code fence: no quote, backtick or markup."""
    return _MERMAID_UNSAFE.sub("_", str(value))[:40]


def number(value: float) -> str:
    """Figures for people: thousands grouped, at most two decimals, no trailing zeros."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return md_escape(value)
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def present_in(column: tuple[str, ...], rows: list[dict[str, object]]) -> bool:
    """Whether any row has the column's field: figures not computed are left out."""
    return any(column[0] in row for row in rows)


def numeric_in(column: tuple[str, ...], rows: list[dict[str, object]]) -> bool:
    """Whether the column's first figure is a number: the column is then right-aligned."""
    for row in rows:
        value = row.get(column[0])
        if value is not None:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
    return False


def oneline(value: object) -> str:
    return " ".join(str(value).split())


def html_number(value: object) -> str:
    """`number` for HTML, where autoescaping (not Markdown escapes) keeps strings harmless."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return oneline(value)
    return number(value)


# One environment of each per process: it holds what templates/ gives (filters,
# and each template compiled once, about 0.1 s for a report; Jinja reloads a
# template whose file changed), never a run's data (tests/test_run_state.py).
@functools.cache
def html_environment() -> jinja2.Environment:
    """HTML from templates/: every value autoescaped; `num` formats figures."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["oneline"] = oneline
    env.filters["num"] = html_number
    env.tests["present_in"] = present_in
    env.tests["numeric_in"] = numeric_in
    return env


@functools.cache
def environment() -> jinja2.Environment:
    """Markdown from templates/: user strings escaped by `md`; `num` formats figures."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        autoescape=False,  # Markdown, not HTML: user strings go through `md`
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.filters["md"] = md_escape
    env.filters["oneline"] = oneline
    env.filters["num"] = number
    env.filters["mermaid"] = mermaid_label
    env.tests["present_in"] = present_in
    env.tests["numeric_in"] = numeric_in
    return env
