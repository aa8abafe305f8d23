"""Command line: `main(argv) -> exit code`; subcommands are small functions.

Exit codes (docs/architecture.md): 0 pass; 1 findings at or above the threshold;
2 invalid input or usage (one clean line per problem); 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import errno
import io
import json
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from checker import __version__
from checker.core import progress, signals
from checker.core.carried import Carried
from checker.core.errors import MAX_LISTED, MAX_SHOWN, UserError, clip, shown_value
from checker.core.findings import SEVERITIES
from checker.core.perf import ending_process, gc_paused, keep
from checker.core.suggest import did_you_mean
from checker.core.terminal import SafeStream, StreamError, escape, escape_lines, whole_writes
from checker.importers import IMPORTERS, Importer
from checker.render import FORMATS, capped_names, diff_formats_help, formats_help

# The stages are imported by the commands that run them (a command imports what it
# uses: `checker rules list` no inventory models, `checker audit` no importer or
# report template), inside main, while the cycle collector is paused (_run).
if TYPE_CHECKING:
    from checker.core.rulemeta import RuleMeta
    from checker.decide.config import Config, Settings
    from checker.decide.result import AuditResult
    from checker.load.reading import ReadOptions
    from checker.render.output import Output

DEFAULT_PATH = Path("inventories")
# Characters of a line on standard error: its values are clipped where the
# message is made, and this is the last guard; a path may be 4,096 long.
MAX_LINE = 5_000
EXIT_BROKEN_PIPE = 141
BUG_HINT = (
    "this is a bug in checker; please report it with the command line and the input files"
    " (CHECKER_DEBUG=1 prints a traceback)"
)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {shown_value(text)}") from None


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {shown_value(text)}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a whole number >= 1: {shown_value(text)}")
    return int(text)


def _format_spec(text: str) -> Output:
    from checker.render.output import parse_spec

    try:
        return parse_spec(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(exc.lines[0]) from None


# ---------------------------------------------------------------- audit, report
def _in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _settings(args: argparse.Namespace, paths: Sequence[Path]) -> Settings:
    return _configured(args, paths)[1]


def _configured(args: argparse.Namespace, paths: Sequence[Path]) -> tuple[Config, Settings]:
    """The config file's settings, and those with the command line applied."""
    from checker.decide.config import find_config

    config_file = args.config or find_config(paths)
    # Absolute, so `checker diff` reads the same config from inside the base tree.
    return _configured_from(args, config_file.resolve() if config_file else None)


def _configured_from(args: argparse.Namespace, config_file: Path | None) -> tuple[Config, Settings]:
    """That config file's settings (None: the defaults), and those with the command line applied."""
    from checker.decide.config import load_config, settings

    config, config_path = load_config(config_file)
    return config, settings(
        config,
        config_path,
        select=args.select,
        ignore=args.ignore,
        fail_on=args.fail_on,
        rule_dirs=args.rules,
        max_per_rule=args.max_per_rule,
        group_findings=False if args.no_group else None,
    )


def _read_options(args: argparse.Namespace) -> ReadOptions:
    """--cache-dir, else $CHECKER_CACHE_DIR or the user's cache folder, unless --no-cache
    or $CHECKER_NO_CACHE; --jobs, else the CPUs this process may use.

    Under CI ($CI set, as GitHub Actions, GitLab CI and most others do) only a
    folder named by --cache-dir or $CHECKER_CACHE_DIR is used: a fresh runner
    would write entries nobody reads back, ~10 % of a cold audit."""
    from checker.load import cache
    from checker.load.reading import ReadOptions, default_jobs

    cache_dir: Path | None = args.cache_dir
    wanted = not args.no_cache and not os.environ.get("CHECKER_NO_CACHE")
    if cache_dir is None and wanted and (os.environ.get("CHECKER_CACHE_DIR") or not os.environ.get("CI")):
        cache_dir = cache.default_dir()
    return ReadOptions(jobs=args.jobs or default_jobs(), cache_dir=cache_dir, carried=args.carried)


def _protected(cfg: Settings) -> list[Path]:
    """What a run reads besides the inventories: no output may replace it."""
    return [*([cfg.config_file] if cfg.config_file else []), *cfg.rule_dirs]


def _audit(
    args: argparse.Namespace,
    outputs: Sequence[Output],
    env: os._Environ[str] | None = None,
    quiet: bool = False,
) -> tuple[AuditResult, Settings]:
    from checker.audit import run_audit
    from checker.render.output import check_writable

    paths = args.paths or [DEFAULT_PATH]
    cfg = _settings(args, paths)
    check_writable(outputs, paths, _protected(cfg), env)
    options = _read_options(args)
    # A progress line while it runs (on a terminal), unless only the summary is wanted.
    with progress.shown(sys.stderr) if not quiet else contextlib.nullcontext():
        result = run_audit(paths, cfg, args.as_of or dt.date.today(), options=options)
    keep(result)
    return result, cfg


def cmd_audit(args: argparse.Namespace) -> int:
    from checker.render.output import Output, emit

    default = Output("github" if _in_github_actions() else "text", None)
    outputs = args.format or [default]
    env = os.environ if _in_github_actions() else None
    result, cfg = _audit(args, outputs, env, quiet=args.quiet)
    color = _color(sys.stdout, args.color)
    emit(result, outputs, color=color, max_per_rule=cfg.max_per_rule, group=cfg.group_findings, env=env,
         summary_only=args.quiet)
    result.keep_for_next_run()  # messages and positions worked out (checker.evaluate.memo, load.validated)
    return result.exit_code


def cmd_report(args: argparse.Namespace) -> int:
    """The readiness report; written even when the rollout is blocked (exit 1)."""
    from checker.render.context import RenderContext
    from checker.render.output import (
        Output,
        destination,
        emit,
        link_base,
        pictures_folder,
        write_output,
        write_pictures,
    )
    from checker.render.pictures import markdown_with_pictures

    out = Output(args.report_format, destination(args.output))
    result, cfg = _audit(args, [out])
    if out.format == "markdown" and out.file is not None:
        # The pictures are SVG files beside the report (HTML has them inline).
        folder = pictures_folder(out.file)
        ctx = RenderContext(link_base(out.file), max_per_rule=cfg.max_per_rule, group=cfg.group_findings)
        text, files = markdown_with_pictures(result, ctx, folder.name)
        write_pictures(folder, files)
        write_output(out, text)
    else:
        emit(result, [out], max_per_rule=cfg.max_per_rule, group=cfg.group_findings)
    result.keep_for_next_run()
    return result.exit_code


def _in_repo(folders: Sequence[Path], *tops: Path) -> list[str]:
    """Each folder by its path below the first of `tops` that holds it (as posix
    text), else by its absolute path: folders named two ways compare equal."""
    named = []
    for folder in folders:
        where = folder.resolve()
        top = next((t.resolve() for t in tops if where.is_relative_to(t.resolve())), None)
        named.append(where.relative_to(top).as_posix() if top is not None else str(where))
    return named


def cmd_diff(args: argparse.Namespace) -> int:
    """New, worsened and resolved findings and capacity changes against the same
    paths at a git ref. Paths are named from the repository's root, so links
    are too: from --link-base, else (under GitHub Actions) the pull request's
    head commit on GitHub, else relative to where each output is read."""
    from checker.audit import run_audit
    from checker.core.findings import Finding
    from checker.decide.weakened import knowledge_changed, rules_changed, weakened
    from checker.diff import base_config, base_rules, diff
    from checker.evaluate.rulebook import Rulebook, is_builtin, load_rulebook
    from checker.gitref import repo_root
    from checker.render.context import RenderContext
    from checker.render.output import (
        Output,
        append_step_summary,
        check_writable,
        github_commit_base,
        root_link_base,
        write_outputs,
    )

    paths = args.paths or [DEFAULT_PATH]
    outputs = args.format or [Output("text", None)]
    env = os.environ if _in_github_actions() else None
    config, cfg = _configured(args, paths)
    check_writable(outputs, paths, _protected(cfg), env)
    options = _read_options(args)
    book = load_rulebook(cfg.rule_dirs, cache_dir=options.cache_dir, carried=options.carried)
    as_of = args.as_of or dt.date.today()
    root = repo_root(Path.cwd())

    def settings_change(commit: str) -> list[Finding]:
        """What the change's settings turn off against those the base would have used,
        and what it does to the team's own rules."""
        with tempfile.TemporaryDirectory(prefix="checker-base-config-") as tmp:
            name = ""
            try:  # the search itself can fail at the base (two configs, a pyproject.toml not TOML)
                found, name = base_config(root, commit, paths, args.config, Path(tmp))
                _, base = _configured_from(args, found)
            except UserError:  # the base's own config was broken: compare with the defaults
                name = f"{name or 'config'} (not valid there, so its defaults)"
                _, base = _configured_from(args, None)
            # The team's rule folders by their names in the repository: each config
            # names them relative to its own folder, and the base's lies under `tmp`.
            read = (_in_repo(base.rule_dirs, Path(tmp), root), _in_repo(cfg.rule_dirs, root))
        own = [r for r in book.rules if not is_builtin(Path(r.file))]  # the team's, as the change has them
        known = [k for k in book.knowledge if not is_builtin(Path(k[0]))]
        with tempfile.TemporaryDirectory(prefix="checker-base-rules-") as tmp:
            try:  # the same folders as of the base (a folder the base lacks: no rules)
                folders = base_rules(root, commit, cfg.rule_dirs, Path(tmp))
                earlier = load_rulebook(folders, builtin=False)
            except UserError:  # broken at the base: every rule of the head's is new
                earlier = Rulebook(())
        return [*weakened(base, name, config, cfg, book.metadata(), read),
                *rules_changed(earlier.rules, own, config, cfg.config_file),
                *knowledge_changed(earlier.knowledge, known, config, cfg.config_file)]

    with progress.shown(sys.stderr):
        result = diff(
            args.base,
            paths,
            lambda p: run_audit(p, cfg, as_of, book, options),
            fail_on=cfg.fail_on,
            fail_on_new=args.fail_on_new,
            settings_change=settings_change,
        )
    keep(result)
    shared = args.link_base.rstrip("/") + "/" if args.link_base else ""
    shared = shared or (github_commit_base(env) if env is not None else "")
    per_rule, alike = cfg.max_per_rule, cfg.group_findings
    ctxs = [
        RenderContext(shared or root_link_base(root, o.file), max_per_rule=per_rule, group=alike)
        for o in outputs
    ]
    texts = [FORMATS[out.format].diff(result, ctx) for out, ctx in zip(outputs, ctxs, strict=True)]
    summary = env.get("GITHUB_STEP_SUMMARY") if env is not None else None
    comment = None
    if summary:  # the comment, in the job's summary page (where it still is when no comment can be posted)
        comment = FORMATS["markdown"].diff(result, RenderContext(shared, max_per_rule=per_rule, group=alike))
    write_outputs(list(zip(outputs, texts, strict=True)))
    if summary and comment is not None:
        append_step_summary(summary, escape_lines(comment))
    return result.exit_code


def cmd_config(args: argparse.Namespace) -> int:
    """The settings an audit of these paths runs with, as checker.yaml lines, each
    with where it came from: the config file's line, an option, or the default."""
    from checker.decide.config import CONFIG_NAMES, PYPROJECT, check_selection, in_force
    from checker.evaluate.rulebook import load_rulebook
    from checker.source.reader import display_path

    paths = args.paths or [DEFAULT_PATH]
    config, cfg = _configured(args, paths)
    # As the audit would: a glob that matches no rule, or a rule folder that fails, is an error.
    check_selection(cfg, [m.id for m in load_rulebook(cfg.rule_dirs).metadata()])
    # Unset: None, [] or False (a flag not given); 0 is a value (--max-per-rule 0).
    given = [name for name, option in CONFIG_OPTIONS.items()
             if getattr(args, option) is not None and getattr(args, option) is not False
             and getattr(args, option) != []]
    if cfg.config_file is None:
        names = ", ".join(CONFIG_NAMES)
        lines = [f"# config file: none found ({names} or [tool.checker] in {PYPROJECT}, from the"
                 " inventories' folder up to the repository root): defaults"]
    else:
        how = "--config" if args.config else "the nearest one"
        lines = [f"# config file: {display_path(cfg.config_file)} ({how})"]
    rows = [(f"{name}: {json.dumps(value, sort_keys=True)}", where)
            for name, value, where in in_force(config, cfg, given)]
    width = max(len(text) for text, _ in rows)
    lines += [f"{text:<{width}}  # {where}" for text, where in rows]
    _print_lines(lines)
    return 0


# The settings the command line sets: the setting, and its option's argparse name.
CONFIG_OPTIONS = {"select": "select", "ignore": "ignore", "fail_on": "fail_on", "rules": "rules",
                  "max_per_rule": "max_per_rule", "group_findings": "no_group"}


def cmd_cache_info(args: argparse.Namespace) -> int:
    from checker.load import cache

    found = cache.info(args.cache_dir or cache.default_dir())
    lines = [
        f"cache folder: {found.folder}",
        f"entries: {found.entries} ({found.size / 1e6:.1f} MB)",
        f"in use: no ({found.problem})" if found.problem else "in use: yes",
        f"entries unused for {cache.MAX_AGE_DAYS} days are removed by the next audit",
    ]
    _print_lines(lines)
    return 0


def cmd_cache_clean(args: argparse.Namespace) -> int:
    from checker.load import cache

    folder = args.cache_dir or cache.default_dir()
    _print_lines([f"removed {cache.clean(folder)} entries from {folder}"])
    return 0


def cmd_resident_start(args: argparse.Namespace) -> int:
    from checker import resident

    try:
        status, started = resident.start()
    except resident.Unavailable as exc:
        raise UserError(f"no resident process: {exc}") from None
    if status == resident.BUSY:
        _print_lines(["a resident process is already running (busy with a command)"])
        return 0
    said = "started" if started else "already running"
    _print_lines([f"resident process {status[0]} {said}: `checker` commands of this installation run in it",
                  f"it ends with `checker resident stop`, after {resident.IDLE_SECONDS // 60} minutes unused,"
                  " or when checker's code changes"])
    return 0


def cmd_resident_stop(args: argparse.Namespace) -> int:
    from checker import resident

    # It answers once the command it runs ends (it serves one at a time).
    answer = resident.ask("stop", timeout=resident.STOP_SECONDS)
    if answer == resident.BUSY:
        raise UserError(f"the resident process did not stop within {resident.STOP_SECONDS:g} s"
                        " (busy with a command)")
    _print_lines([f"resident process {answer[0]} stopped" if answer else "no resident process is running"])
    return 0


def cmd_resident_status(args: argparse.Namespace) -> int:
    from checker import resident

    answer = resident.ask("status")
    if answer == resident.BUSY:
        _print_lines(["a resident process is running a command: it did not answer within 5 s"])
        return 0
    if answer is None or len(answer) != 4:
        _print_lines(["no resident process is running: each command runs in its own process"])
        return 0
    pid, stamp, served, rss = answer
    current = "yes" if stamp == resident.stamp() else "no (the code changed: the next command ends it)"
    _print_lines([
        f"resident process {pid}: {served} commands served",
        f"memory: {int(rss) / 2**20:.0f} MiB (it ends itself above {resident.MAX_RSS / 2**30:g} GiB)",
        f"current code: {current}",
    ])
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from checker.scaffold import init

    written = [f"wrote {path}" for path in init(args.dir)]
    _print_lines([*written, f"next: cd {args.dir} && checker audit"])
    return 0


def _import_command(importer: Importer) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        code, lines = importer.run(args)
        _print_lines(lines)
        return code

    return run


COLOR_CHOICES = ("auto", "always", "never")


def _color(stream: TextIO, choice: str = "auto") -> bool:
    """--color always or never decides. auto: a non-empty NO_COLOR turns colour off
    (https://no-color.org: an empty one is as if unset), else a non-empty
    FORCE_COLOR turns it on (https://force-color.org), else colour is for a
    person at a terminal, not a `dumb` one. NO_COLOR before FORCE_COLOR, as
    CPython 3.13's own colour choice (Lib/_colorize.py) does."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


# ---------------------------------------------------------------- rules, explain, facts
def _metadata(args: argparse.Namespace) -> tuple[RuleMeta, ...]:
    from checker.evaluate.rulebook import load_rulebook

    return load_rulebook(args.rules).metadata()


def cmd_rules_list(args: argparse.Namespace) -> int:
    metas = _metadata(args)
    width = max(len(m.id) for m in metas)
    _print_lines(f"{m.id:<{width}}  {m.severity:<7}  {m.category:<13}  {m.title}" for m in metas)
    return 0


def _describe_rule(m: RuleMeta, full: bool, config: Config | None = None) -> list[str]:
    from checker.decide.config import Config, policy_in

    lines = [f"{m.id}: {m.title}", f"  severity: {m.severity}", f"  category: {m.category}"]
    if m.on is not None:
        lines += [f"  on: {m.on}", f"  when: {m.when}"]
    for name, value, where in policy_in(m.when, config or Config()):
        origin = f"default; set {name} in checker.yaml" if where == "default" else where
        shown = f"{value:g}" if isinstance(value, float) else value
        lines.append(f"  setting: {name} = {shown} ({origin})")
    lines.append(f"  defined in: {m.origin}")
    if m.rationale:
        lines.append(f"  rationale: {' '.join(m.rationale.split())}")
    lines.append(f"  remediation: {' '.join(m.remediation.split())}")
    if m.references:
        lines.append(f"  references: {'; '.join(m.references)}")
    if full:
        for label, examples in (("fails on", m.fail_examples), ("passes on", m.pass_examples)):
            lines += [f"  {label}: {json.dumps(e, sort_keys=True, default=str)}" for e in examples]
    return lines


def _show(args: argparse.Namespace, full: bool) -> int:
    from checker.decide.config import find_config, load_config

    metas = _metadata(args)
    meta = next((m for m in metas if m.id == args.id), None)
    if meta is None:
        hint = did_you_mean(args.id, [m.id for m in metas])
        raise UserError(f"unknown rule '{clip(args.id)}'{hint}; see `checker rules list`")
    # The policy thresholds the rule reads, as the audit of the default inventories would see them.
    config_file = getattr(args, "config", None) or find_config([Path("inventories")])
    config, _ = load_config(config_file)
    _print_lines(_describe_rule(meta, full, config))
    return 0


def cmd_rules_show(args: argparse.Namespace) -> int:
    return _show(args, full=False)


def cmd_explain(args: argparse.Namespace) -> int:
    return _show(args, full=True)


def cmd_rules_test(args: argparse.Namespace) -> int:
    from checker.evaluate.rulebook import load_rulebook
    from checker.evaluate.ruletest import run_rule_tests

    extra = [args.dir] if args.dir else []
    book = load_rulebook([*args.rules, *extra], builtin=args.dir is None)
    report, ok = run_rule_tests(book.rules)
    _print_lines(report.splitlines())
    return 0 if ok else 1


def cmd_rules_doc(args: argparse.Namespace) -> int:
    """Markdown reference of every rule, generated from the rules' own metadata."""
    from checker.render.output import Output, check_target, destination, write_output
    from checker.render.templating import environment

    out = Output("markdown", destination(args.output))
    if out.file is not None:
        check_target(out.file, "the rule reference", protected=args.rules)
    template = environment().get_template("rules.md.j2")
    text = template.render(rules=_metadata(args), folders=[p.as_posix() for p in args.rules])
    write_output(out, text)
    return 0


def _print_lines(lines: Iterable[str]) -> None:
    """Lines for a human: a newline inside one (a rule title, say) is escaped, not obeyed."""
    sys.stdout.write("".join(escape(line) + "\n" for line in lines))


def cmd_facts(args: argparse.Namespace) -> int:
    from checker.derive.facts import REGISTRY, fact_kind

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
    from checker.derive.knowledge import table_models
    from checker.load.schema import inventory_schema

    print(json.dumps(inventory_schema(table_models()), indent=2, sort_keys=True))
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


def _add_audit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="inventory files or folders")
    p.add_argument("--fail-on", choices=SEVERITIES, help="lowest failing severity (default error)")
    p.add_argument("--select", action="append", default=[], metavar="ID", help="rule id glob to run")
    p.add_argument("--ignore", action="append", default=[], metavar="ID", help="rule id glob to skip")
    p.add_argument(
        "--max-per-rule",
        type=_count,
        default=None,
        metavar="N",
        help=f"{capped_names()} show N findings per rule, then a count (default 100; 0 shows all);"
        " the other formats and the verdict have every finding",
    )
    p.add_argument(
        "--no-group",
        action="store_true",
        help="text, markdown and the pull-request comment show a line per finding, not findings alike"
        " (same rule and message but for the entity's name) once with their count and names",
    )
    p.add_argument("--as-of", type=_date, metavar="YYYY-MM-DD", help="evaluate dates as of this day")
    p.add_argument("--config", type=Path, metavar="FILE", help="config file (default: checker.yaml)")
    p.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        default=None,
        metavar="N",
        help="parse files in up to N processes (default: the CPUs available; 1: no pool)",
    )
    caching = p.add_mutually_exclusive_group()
    _add_cache_dir_option(caching)
    caching.add_argument(
        "--no-cache",
        action="store_true",
        help="parse every file; read and write no cache (also: CHECKER_NO_CACHE=1)",
    )
    _add_rules_option(p)


def _add_cache_dir_option(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="what earlier audits worked out is kept here: parsed and validated files, positions, "
        "rule outcomes, messages (default: $CHECKER_CACHE_DIR, else $XDG_CACHE_HOME/checker, else "
        "~/.cache/checker)",
    )


# Words over twice what a message quotes: what clip() leaves is never that long.
_LONG_WORD = re.compile(rf"\S{{{2 * MAX_SHOWN + 1},}}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # The message quotes the command line: a newline in an argument must not
        # start a line, and a huge argument is clipped as any quoted input is
        # (argparse quotes it whole: `invalid choice: '...'`, `unrecognized arguments: ...`).
        super().error(escape(_LONG_WORD.sub(lambda word: clip(word[0]), message)))


class _Sources(argparse._SubParsersAction):  # type: ignore[type-arg]
    """`checker import`'s sources, each given its arguments when it is the one
    chosen: only then is its importer's module imported."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pending: dict[str, Importer] = {}

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        importer = self.pending.pop(values[0], None)  # a valid name: argparse checked the choice
        if importer is not None:
            importer.add_arguments(self._name_parser_map[values[0]])
        super().__call__(parser, namespace, values, option_string)


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
    _add_audit_options(audit)
    audit.add_argument(
        "--format",
        action="append",
        type=_format_spec,
        metavar="FMT[:FILE]",
        help=f"output format, optionally to a file (repeatable; one to standard output). {formats_help()}",
    )
    audit.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the text format's severities: auto (default) at a terminal, unless NO_COLOR"
        " is set; FORCE_COLOR forces it",
    )
    audit.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="the text format prints its summary line only (the counts and the verdict); no progress line",
    )
    report = _sub(subs, "report", cmd_report, "write the rollout readiness report (Markdown or HTML)")
    _add_audit_options(report)
    report.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    report.add_argument(
        "--format",
        dest="report_format",
        choices=("markdown", "html"),
        default="markdown",
        help="markdown (default) or html: one self-contained file, printable to PDF",
    )

    diff_ = _sub(
        subs, "diff", cmd_diff, "new, worsened and resolved findings and capacity changes against a git ref"
    )
    _add_audit_options(diff_)
    diff_.add_argument("--base", required=True, metavar="REF", help="git branch, tag or commit to compare")
    diff_.add_argument(
        "--fail-on-new",
        action="store_true",
        help="fail only on new and worsened findings (adopt with existing debt)",
    )
    diff_.add_argument(
        "--link-base",
        metavar="URL",
        help="prefix of the comment's links to files, named from the repository root (e.g. "
        "https://github.com/OWNER/REPO/blob/SHA/); default under GitHub Actions: the pull request's "
        "head commit",
    )
    diff_.add_argument(
        "--format",
        action="append",
        type=_format_spec,
        metavar="FMT[:FILE]",
        help=f"output format, optionally to a file (repeatable). {diff_formats_help()}",
    )

    config_ = _sub(subs, "config", cmd_config, "the settings in force for an audit, and where each came from")
    _add_audit_options(config_)

    init_ = _sub(subs, "init", cmd_init, "scaffold an inventory repository whose audit passes")
    init_.add_argument("dir", nargs="?", type=Path, default=Path(), metavar="DIR", help="default: here")

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
    explain.add_argument(
        "--config", type=Path, metavar="FILE", help="config whose settings to show (default: checker.yaml)"
    )
    facts = _sub(subs, "facts", cmd_facts, "fact kinds and fields that rules can use")
    facts.add_argument("kind", nargs="?")
    _sub(subs, "schema", cmd_schema, "JSON Schema of the inventory kinds (for editors)")
    import_ = subs.add_parser("import", help="inventory YAML from NetBox, its device-type library or CSV")
    import_subs = import_.add_subparsers(
        dest="import_command", required=True, metavar="SOURCE", action=_Sources
    )
    for importer in IMPORTERS:
        _sub(import_subs, importer.name, _import_command(importer), importer.help)
        cast(_Sources, import_subs).pending[importer.name] = importer
    cache_ = subs.add_parser("cache", help="show or empty the cache of parsed files")
    cache_subs = cache_.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    _add_cache_dir_option(_sub(cache_subs, "info", cmd_cache_info, "where the cache is, and its size"))
    _add_cache_dir_option(_sub(cache_subs, "clean", cmd_cache_clean, "remove every cache entry"))
    resident_ = subs.add_parser("resident", help="keep one checker process running, for repeated commands")
    resident_subs = resident_.add_subparsers(dest="resident_command", required=True, metavar="ACTION")
    _sub(resident_subs, "start", cmd_resident_start, "start it: later commands run in it, without start-up")
    _sub(resident_subs, "stop", cmd_resident_stop, "stop it")
    _sub(resident_subs, "status", cmd_resident_status, "whether it runs, and what it holds")
    return parser


def main(argv: Sequence[str] | None = None, *, carried: Carried | None = None) -> int:
    """The command line. `carried`: given by the resident process alone, what it
    carries from one command to the next (checker.core.carried)."""
    # Every byte for a human goes through one escaping stream (checker.core.terminal).
    out, err = sys.stdout, sys.stderr
    # A closed standard output or error (`checker audit >&-`): Python has None there.
    # Nothing can be shown; the exit code still tells (2 for a closed stdout).
    closed = out is None
    out = out if out is not None else open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    err = err if err is not None else open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    for stream in (out, err):
        # A terminal that cannot show a name (an ASCII-only CI log) gets `\xe9`, not a crash.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    whole_out, whole_err = whole_writes(out), whole_writes(err)
    sys.stdout, sys.stderr = SafeStream(whole_out), SafeStream(whole_err, "standard error", MAX_LINE)
    try:
        if closed:
            print("checker: standard output is closed; nothing can be written", file=sys.stderr)
            return 2
        with signals.handled():
            return _run(argv, carried)
    except signals.Interrupted as exc:  # a signal between _run's handlers
        return exc.exit_code
    except BrokenPipeError:
        return _broken_pipe(out)
    except StreamError as exc:  # standard output failed (a full disk): say so once, on stderr
        _broken_pipe(out)
        with contextlib.suppress(StreamError, OSError):
            print(f"checker: {exc}", file=sys.stderr)
        return 2
    finally:
        for whole, stream in ((whole_out, out), (whole_err, err)):
            if whole is not stream:  # what it still holds, and nothing more once its reader left
                with contextlib.suppress(OSError, ValueError):
                    whole.flush()
        sys.stdout, sys.stderr = out, err


def _run(argv: Sequence[str] | None, carried: Carried | None = None) -> int:
    # Paused from the start: the imports (the commands import the stages they
    # run) build most of a small audit's objects, and a pass of the collector
    # over them or the run's data finds nothing to free (checker.core.perf).
    with gc_paused():
        try:
            return _command(argv, carried)
        except ImportError as exc:  # compiled code a stage needs does not load (checker/__main__.py)
            from checker.core.install import broken

            print(broken(exc), file=sys.stderr)
            return 3


def _command(argv: Sequence[str] | None, carried: Carried | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (argparse exits 2)
        return exc.code if isinstance(exc.code, int) else 2
    args.carried = carried  # not an option: the process's, read by _read_options
    try:
        _check_where(args)
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except StreamError:
        raise
    except UserError as exc:
        lines = list(exc.lines)
        for line in lines[:MAX_LISTED]:
            print(escape(line), file=sys.stderr)
        if len(lines) > MAX_LISTED:
            print(f"checker: {len(lines) - MAX_LISTED:,} more problems not listed", file=sys.stderr)
        return 2
    except signals.Interrupted as exc:  # Ctrl-C 130, SIGTERM 143, SIGHUP 129
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            return _internal_error(exc)
        # A name too long for the file system, wherever it is met (a folder a config
        # names, a file an output's name makes): the user's to shorten, not a bug.
        print(escape(f"{clip(str(exc.filename))}: {exc.strerror}"), file=sys.stderr)
        return 2
    except ImportError:
        raise  # a broken install (_run), not a bug
    except Exception as exc:
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    if os.environ.get("CHECKER_DEBUG"):
        traceback.print_exc(file=sys.stderr)
    what = escape(clip(str(exc), 1000))
    print(f"checker: internal error ({type(exc).__name__}: {what}): {BUG_HINT}", file=sys.stderr)
    return 3


def _check_where(args: argparse.Namespace) -> None:
    """The current folder exists, and every path given can be looked up at all (a
    name too long for the file system is a user's mistake, not an internal error)."""
    try:
        os.getcwd()
    except OSError:
        raise UserError("the current folder no longer exists (deleted?); cd to an existing one") from None
    given = [*getattr(args, "paths", []), *getattr(args, "rules", [])]
    given += [p for p in (getattr(args, n, None) for n in ("config", "cache_dir", "output", "dir")) if p]
    given += [o.file for o in getattr(args, "format", None) or [] if o.file is not None]
    for path in given:
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # the rest: each command says what it makes of it
                raise UserError(f"{clip(str(path))}: {exc.strerror}") from None
        except ValueError as exc:  # an embedded NUL
            raise UserError(f"{clip(str(path))}: {exc}") from None


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


def run() -> NoReturn:
    """The `checker` command (and `python -m checker`): main(), then the process
    ends without tearing the interpreter down. Everything a run writes is closed
    by then (outputs and cache entries by `with`, the workers joined), so what
    is left is freeing every object and module one by one: 15 % of a small
    audit's CPU (as mypy's command line, which exits the same way). The same
    goes for the run's own data: the collector is not resumed for a last pass
    and the audit's result is not freed (checker.core.perf.ending_process), 6 %
    of a 10,000-server audit's."""
    ending_process()
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # gone or closed: the exit status Python would give
            code = code or 120
    os._exit(code)


if __name__ == "__main__":
    run()
