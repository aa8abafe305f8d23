"""The formats: one explicit table, one row per format; formatters only read an
AuditResult (or a DiffResult).

Adding a format is one module with `render(result, ctx) -> str` and one row
below. Everything else is derived from the table: `--format` help and the
unknown-name message of `audit`, `report` and `diff`, what `diff` writes, and
the format tables of README.md and docs/architecture.md (a test checks them
against `formats_table()`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from checker.core.suggest import lookup
from checker.decide.result import AuditResult
from checker.render import diff_formats, github, gitlab, html, json_format, junit, markdown, sarif, text
from checker.render.context import RenderContext
from checker.render.diff_formats import DiffFormatter, narrowed

Formatter = Callable[[AuditResult, RenderContext], str]


@dataclass(frozen=True)
class Format:
    name: str
    render: Formatter  # the audit
    diff: DiffFormatter  # `checker diff`
    what: str  # what it writes (help and the docs' table)
    # Whether it shows at most --max-per-rule findings of each rule (the formats
    # people read, which then say how many they left out) or every finding.
    capped: bool
    # What `checker diff` writes in it.
    in_diff: str = "the head audit narrowed to the change's new and worsened findings"
    # The findings column of the docs' table, for a format that is not capped
    # but does not show every finding either (a service's own limit).
    shows: str = "every one"
    # A service reads it and resolves its paths from the repository root (GitHub's
    # annotations and code scanning, GitLab's Code Quality): under GitHub Actions
    # `checker audit` names files from there, from any working directory
    # (`checker diff` always does).
    from_root: bool = False


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "text",
            text.render,
            diff_formats.text,
            "`file:line:col: severity rule message` lines, the findings counted by rule, "
            "and the verdict (the default)",
            capped=True,
            in_diff="the verdict and its reason, new, worsened, resolved and waived findings (most severe "
            "first), capacity changes",
        ),
        Format(
            "json",
            json_format.render,
            diff_formats.json_format,
            "the machine contract ([docs/architecture.md](docs/architecture.md#json-output-contract))",
            capped=False,
            in_diff="every new and resolved finding, the worsened ones with what they were, the verdict's "
            "reason, capacity changes with each figure before and after",
        ),
        Format(
            "markdown",
            markdown.render,
            diff_formats.markdown,
            "the rollout readiness report: verdict, top risks and key figures, findings grouped by rule, "
            "facilities, racks with a utilisation chart (`checker report -o` adds load bars, rack elevations "
            "and a support timeline as SVG files beside it), workloads, software matrix, support, waivers "
            "([example](docs/example-readiness.md))",
            capped=True,
            in_diff="a pull-request comment: the verdict and its reason first, new, worsened, resolved "
            "and waived findings, capacity changes (power, cooling, U, weight, servers, GPUs), what to do "
            "per rule",
        ),
        Format(
            "html",
            html.render,
            narrowed(html.render),
            "the readiness report as one self-contained HTML file: inline CSS and SVG, no script, "
            "no request, printable with a page per section ([example](docs/example-readiness.html))",
            capped=True,
            in_diff="the head audit's report with the change's new and worsened findings only",
        ),
        Format(
            "sarif",
            sarif.render,
            narrowed(sarif.render),
            "SARIF 2.1.0 for GitHub code scanning: every rule that ran with its help, a result per open "
            "finding with a fingerprint of its rule and entity (two findings on one line are two alerts), "
            "named after the audited paths (`automationDetails`); waived findings are left out, and counted",
            capped=False,
            from_root=True,
            shows=f"every open one up to GitHub's {sarif.MAX_RESULTS:,}, the most severe first; "
            "a run notification counts the rest",
        ),
        Format(
            "junit",
            junit.render,
            narrowed(junit.render),
            "a test case per rule that ran, a suite per category: passed, a failure listing its open "
            "findings, or skipped when all are waived (valid against the Jenkins xunit schema)",
            capped=False,
            shows=f"every one, the listings sharing {junit.LISTING_BYTES / 1e6:.0f} MB; a listing cut short "
            "counts the rest",
        ),
        Format(
            "gitlab",
            gitlab.render,
            narrowed(gitlab.render),
            "a GitLab Code Quality report: an issue per open finding with a fingerprint of its rule and "
            "entity, for the merge request widget; waived findings are left out",
            capped=False,
            from_root=True,
            shows="every open one",
        ),
        Format(
            "github",
            github.render,
            diff_formats.github,
            "`::error file=..,line=..::` annotations on the pull request's lines (warning, notice below), "
            "most severe first",
            capped=True,
            in_diff="the change's new and worsened findings, most severe first, on the lines it touched",
            from_root=True,
        ),
    )
}


def get(name: str) -> Format:
    """The format of that name; an unknown name is a usage error naming the known ones."""
    return lookup(FORMATS, name, "format")


def get_formatter(name: str) -> Formatter:
    return get(name).render


def capped_names() -> str:
    """`text, markdown and github`: the formats --max-per-rule caps."""
    *first, last = [f.name for f in FORMATS.values() if f.capped]
    return f"{', '.join(first)} and {last}" if first else last


def formats_help() -> str:
    return "; ".join(f"{f.name}: {_plain(f.what)}" for f in FORMATS.values())


def diff_formats_help() -> str:
    return "; ".join(f"{f.name}: {_plain(f.in_diff)}" for f in FORMATS.values())


def _plain(markdown: str) -> str:
    """A table cell as --help shows it: no links, no code marks."""
    return re.sub(r" ?\(\[[^]]*\]\([^)]*\)\)", "", markdown).replace("`", "")


CAPPED = "the first `--max-per-rule` of each rule, then a count"


def formats_table(docs: str = "docs/") -> str:
    """The table README.md (`docs`: the docs folder from there) and
    docs/architecture.md (`docs=""`) show."""
    rows = [
        "| format | what it writes | findings | in `checker diff` |",
        "|---|---|---|---|",
        *(
            f"| `{f.name}` | {f.what} | {CAPPED if f.capped else f.shows} | {f.in_diff} |"
            for f in FORMATS.values()
        ),
    ]
    return "\n".join(rows).replace("](docs/", f"]({docs}") + "\n"
