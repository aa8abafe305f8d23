"""The Jinja environment for documents rendered from templates/."""

from __future__ import annotations

import jinja2

from checker.resources import templates_dir

# Characters that change the meaning of a Markdown table cell or inline text.
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\|`*_[]<>#"})


def md_escape(value: object) -> str:
    """A user-supplied string, safe inside Markdown text and table cells."""
    return " ".join(str(value).split()).translate(_MD_SPECIAL)


def oneline(value: object) -> str:
    return " ".join(str(value).split())


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        autoescape=False,  # Markdown, not HTML: user strings go through `md`
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    env.filters["md"] = md_escape
    env.filters["oneline"] = oneline
    return env
