"""Command line: `main(argv) -> exit code`; subcommands are small functions.

Exit codes (DESIGN.md): 0 pass; 1 findings at or above the threshold;
2 invalid input or usage (one clean line per problem); 3 internal error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from checker import __version__
from checker.audit import run_audit
from checker.builtin import BUILTIN_CHECKS, builtin_check
from checker.decide import find_config, load_config, settings
from checker.errors import UserError
from checker.facts import REGISTRY, fact_kind
from checker.findings import SEVERITIES
from checker.perf import gc_paused
from checker.render import get_formatter
from checker.render.templating import environment
from checker.rulebook import CompiledRule, load_rulebook
from checker.ruletest import run_rule_tests
from checker.schema import inventory_schema
from checker.suggest import did_you_mean
from checker.terminal import SafeStream, escape, escape_lines

DEFAULT_PATH = Path("inventories")
EXIT_BROKEN_PIPE = 141
BUG_HINT = (
    "this is a bug in checker; please report it with the command line and the input files"
    " (CHECKER_DEBUG=1 prints a traceback)"
)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text!r}")
    return int(text)


def _format_spec(text: str) -> tuple[str, Path | None]:
    name, _, file = text.partition(":")
    try:
        get_formatter(name)  # unknown names fail here, before any work
    except UserError as exc:
        raise argparse.ArgumentTypeError(exc.lines[0]) from None
    return name, Path(file) if file else None


# ---------------------------------------------------------------- audit
def cmd_audit(args: argparse.Namespace) -> int:
    paths = args.paths or [DEFAULT_PATH]
    config, config_path = load_config(args.config or find_config(paths))
    cfg = settings(
        config,
        config_path,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
        rule_dirs=args.rules,
        max_per_rule=args.max_per_rule,
    )
    result = run_audit(paths, cfg, args.as_of or dt.date.today())
    for name, file in args.format or [("text", None)]:
        _write(file, get_formatter(name)(result))
    return result.exit_code


# ---------------------------------------------------------------- rules, explain, facts
def _rulebook(args: argparse.Namespace) -> list[CompiledRule]:
    return list(load_rulebook(args.rules).rules)


def cmd_rules_list(args: argparse.Namespace) -> int:
    rows: list[tuple[str, str, str, str]] = [
        (r.id, r.rule.severity, r.rule.category, r.rule.title) for r in _rulebook(args)
    ]
    rows += [(c.id, c.severity, c.category, c.title) for c in BUILTIN_CHECKS]
    width = max(len(r[0]) for r in rows)
    _print_lines(
        f"{rule_id:<{width}}  {severity:<7}  {category:<13}  {escape(title)}"
        for rule_id, severity, category, title in sorted(rows)
    )
    return 0


def _describe_rule(rule: CompiledRule, full: bool) -> list[str]:
    r = rule.rule
    lines = [
        f"{r.id}: {r.title}",
        f"  severity: {r.severity}",
        f"  category: {r.category}",
        f"  on: {r.on}",
        f"  when: {r.when}",
        f"  defined in: {rule.file}:{rule.src.line}",
    ]
    if r.rationale:
        lines.append(f"  rationale: {' '.join(r.rationale.split())}")
    lines.append(f"  remediation: {' '.join(r.remediation.split())}")
    if r.references:
        lines.append(f"  references: {'; '.join(r.references)}")
    if full:
        for label, examples in (("fails on", r.examples.fail), ("passes on", r.examples.pass_)):
            lines += [f"  {label}: {json.dumps(e, sort_keys=True, default=str)}" for e in examples]
    return lines


def _show(args: argparse.Namespace, full: bool) -> int:
    rules = _rulebook(args)
    rule = next((r for r in rules if r.id == args.id), None)
    if rule is not None:
        _print_lines(_describe_rule(rule, full))
        return 0
    check = builtin_check(args.id)
    if check is None:
        hint = did_you_mean(args.id, [r.id for r in rules] + [c.id for c in BUILTIN_CHECKS])
        raise UserError(f"unknown rule '{args.id}'{hint}; see `checker rules list`")
    _print_lines(
        [
            f"{check.id}: {check.title}",
            f"  severity: {check.severity}",
            f"  category: {check.category}",
            f"  rationale: {check.rationale}",
            f"  remediation: {check.remediation}",
        ]
    )
    return 0


def cmd_rules_show(args: argparse.Namespace) -> int:
    return _show(args, full=False)


def cmd_explain(args: argparse.Namespace) -> int:
    return _show(args, full=True)


def cmd_rules_test(args: argparse.Namespace) -> int:
    extra = [args.dir] if args.dir else []
    book = load_rulebook([*args.rules, *extra], builtin=args.dir is None)
    report, ok = run_rule_tests(book.rules)
    _print_lines(report.splitlines())
    return 0 if ok else 1


def cmd_rules_doc(args: argparse.Namespace) -> int:
    """Markdown reference of every rule, generated from the rules' own metadata."""
    template = environment().get_template("rules.md.j2")
    rules = [r.rule for r in _rulebook(args)]
    text = template.render(rules=rules, checks=BUILTIN_CHECKS, folders=[p.as_posix() for p in args.rules])
    _write(args.output, text)
    return 0


def _print_lines(lines: Iterable[str]) -> None:
    """Lines for a human: a newline inside one (a rule title, say) is escaped, not obeyed."""
    sys.stdout.write("".join(escape(line) + "\n" for line in lines))


def _write(file: Path | None, text: str) -> None:
    text = escape_lines(text)  # a report written to a file is read in a terminal too
    if file is None:
        sys.stdout.write(text)
        return
    try:
        file.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise UserError(f"{file}: cannot write: {exc.strerror}") from None


def cmd_facts(args: argparse.Namespace) -> int:
    kinds = [fact_kind(args.kind)] if args.kind else list(REGISTRY.values())
    lines = []
    for kind in kinds:
        lines.append(f"{kind.name}: {kind.doc}")
        width = max(len(f.name) for f in kind.fields)
        for f in kind.fields:
            unit = f" [{f.unit}]" if f.unit else ""
            lines.append(f"  {f.name:<{width}}  {f.type:<7}  {f.doc}{unit}")
    _print_lines(lines)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(inventory_schema(), indent=2, sort_keys=True))
    return 0


# ---------------------------------------------------------------- parser
def _add_rules_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rules",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="extra rule folder (repeatable)",
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # The message quotes the command line: a newline in an argument must not start a line.
        super().error(escape(message))


def _sub(
    subs: argparse._SubParsersAction[_Parser],
    name: str,
    func: Callable[[argparse.Namespace], int],
    help_: str,
) -> argparse.ArgumentParser:
    p = subs.add_parser(name, help=help_, description=help_)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="checker", description="Audit datacenter GPU rollout inventories.")
    parser.add_argument("--version", action="version", version=f"checker {__version__}")
    subs = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    audit = _sub(subs, "audit", cmd_audit, "audit inventories against the rulebook")
    audit.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="files or folders (default: inventories/)"
    )
    audit.add_argument(
        "--format",
        action="append",
        type=_format_spec,
        metavar="FMT[:FILE]",
        help="output format, optionally to a file (repeatable): text, json",
    )
    audit.add_argument(
        "--fail-on", choices=SEVERITIES, default=None, help="lowest failing severity (default error)"
    )
    audit.add_argument("--select", action="append", default=[], metavar="ID", help="rule id glob to run")
    audit.add_argument("--ignore", action="append", default=[], metavar="ID", help="rule id glob to skip")
    audit.add_argument(
        "--max-per-rule",
        type=_count,
        default=None,
        metavar="N",
        help="show at most N findings per rule, then a count (default 100; 0 shows all)",
    )
    audit.add_argument(
        "--as-of", type=_date, default=None, metavar="YYYY-MM-DD", help="evaluate dates as of this day"
    )
    audit.add_argument(
        "--config", type=Path, default=None, metavar="FILE", help="config file (default: checker.yaml)"
    )
    _add_rules_option(audit)

    rules = subs.add_parser("rules", help="list, show, test and document rules")
    rule_subs = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    _add_rules_option(_sub(rule_subs, "list", cmd_rules_list, "list every rule"))
    show = _sub(rule_subs, "show", cmd_rules_show, "show one rule")
    show.add_argument("id")
    _add_rules_option(show)
    test = _sub(rule_subs, "test", cmd_rules_test, "run every rule's examples through the engine")
    test.add_argument(
        "dir", nargs="?", type=Path, help="rule folder to test (default: the built-in rulebook)"
    )
    _add_rules_option(test)

    doc = _sub(rule_subs, "doc", cmd_rules_doc, "Markdown reference of every rule, from its metadata")
    doc.add_argument("-o", "--output", type=Path, default=None, metavar="FILE", help="write here, not stdout")
    _add_rules_option(doc)

    explain = _sub(subs, "explain", cmd_explain, "a rule's rationale, examples and remediation")
    explain.add_argument("id")
    _add_rules_option(explain)
    facts = _sub(subs, "facts", cmd_facts, "fact kinds and fields that rules can use")
    facts.add_argument("kind", nargs="?")
    _sub(subs, "schema", cmd_schema, "JSON Schema of the inventory kinds (for editors)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Every byte for a human goes through one escaping stream (checker.terminal).
    out, err = sys.stdout, sys.stderr
    for stream in (out, err):
        # A terminal that cannot show a name (an ASCII-only CI log) gets `\xe9`, not a crash.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return _run(argv)
    except BrokenPipeError:
        return _broken_pipe(out)
    finally:
        sys.stdout, sys.stderr = out, err


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (argparse exits 2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        with gc_paused():
            code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except UserError as exc:
        for line in exc.lines:
            print(escape(line), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:
        if os.environ.get("CHECKER_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        print(f"checker: internal error ({type(exc).__name__}: {escape(exc)}): {BUG_HINT}", file=sys.stderr)
        return 3


def _broken_pipe(stdout: TextIO) -> int:
    """The reader went away (`checker schema | head -1`): stop quietly, as Unix
    tools do when SIGPIPE ends them, with the shell's code for that (128 + 13)."""
    try:
        # Python flushes stdout again at exit; point it at /dev/null so that
        # flush does not print a second BrokenPipeError.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file descriptor (tests capture output in memory)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
