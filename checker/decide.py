"""Decide: waivers, severity overrides, threshold -> verdict and exit code.

Detection produced findings; this stage only re-labels them (waived,
severity) and adds waiver findings. It never re-reads inventory files.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from checker.errors import UserError, at
from checker.findings import SEVERITY_RANK, Finding, Severity, located
from checker.inventory.loader import Placed, describe_error, display_path, not_a_file
from checker.inventory.models import Waiver
from checker.inventory.source import Src, YamlProblem, read
from checker.rulebook import matches
from checker.suggest import did_you_mean

CONFIG_NAME = "checker.yaml"
EXPIRING_DAYS = 30


class Config(BaseModel):
    """`checker.yaml`: per-repository rule selection, severities and threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # An empty list would run no rule at all and pass every plan: refused.
    select: list[str] = Field(default=["*"], min_length=1, description="globs over rule ids to run")
    ignore: list[str] = Field(default=[], description="globs over rule ids to skip")
    severity: dict[str, Severity] = Field(default={}, description="rule id glob -> severity")
    fail_on: Severity = Field(default="error", description="lowest severity that fails the run")
    rules: list[str] = Field(default=[], description="extra rule folders, relative to this file")
    support_horizon_days: int = Field(
        default=365, ge=0, le=3650, description="warn when support ends within this many days of rollout"
    )
    max_per_rule: int = Field(default=100, ge=0, description="findings shown per rule, then a count (0: all)")
    # Where each value was written, so a `select:` entry that matches nothing is located.
    _where: tuple[str, Src] | None = PrivateAttr(default=None)

    def position(self, *path: str | int, key: bool = False) -> str:
        """`file:line:column` of a config value (or key), or '' for defaults."""
        if self._where is None:
            return ""
        file, src = self._where
        line, column = src.locate(path, key=key)
        return f"{file}:{line}:{column}"


@dataclass(frozen=True)
class Origin:
    """A rule id glob and where it was given: the command line, or the config file."""

    option: str
    glob: str
    where: str = ""


@dataclass(frozen=True)
class Settings:
    """Config with the command line applied on top."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]
    severity: tuple[tuple[str, Severity], ...]
    fail_on: Severity
    rule_dirs: tuple[Path, ...]
    # The config is not an inventory, even when it stands among the inventories.
    config_file: Path | None = None
    origins: tuple[Origin, ...] = ()
    # Findings shown per rule (0: all); the summary always counts every finding.
    max_per_rule: int = 100
    support_horizon_days: int = 365


def find_config(paths: Sequence[Path]) -> Path | None:
    """`checker.yaml` beside the inventories (their parent folder), inside them,
    or in the current directory, where CI runs: the first that exists."""
    for path in paths:
        base = path if path.is_dir() else path.parent
        for candidate in (base.resolve().parent / CONFIG_NAME, base / CONFIG_NAME):
            if candidate.is_file():
                return candidate
    cwd = Path(CONFIG_NAME)
    return cwd if cwd.is_file() else None


def load_config(path: Path | None) -> tuple[Config, Path | None]:
    if path is None:
        return Config(), None
    shown = display_path(path)
    try:
        mode = path.stat().st_mode
    except OSError:
        raise UserError(f"{shown}: config file not found") from None
    if not stat.S_ISREG(mode):  # a FIFO would block the run forever
        what = "a folder" if stat.S_ISDIR(mode) else not_a_file(mode).split(",")[0].removeprefix("is ")
        raise UserError(f"{shown}: is {what}, not a config file")
    try:
        docs = read(path)
    except YamlProblem as exc:
        raise UserError(at(shown, exc.line, exc.column, exc.message)) from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot read: {exc.strerror}") from None
    if not docs:
        return Config(), path
    if len(docs) > 1:
        second = docs[1].src
        raise UserError(at(shown, second.line, second.column, "a config file holds one YAML document"))
    try:
        config = Config.model_validate(docs[0].value)
        config._where = (shown, docs[0].src)
        return config, path
    except ValidationError as exc:
        lines = []
        for error in exc.errors():
            _, message, key = describe_error(error, Config)
            loc = [s for s in error["loc"] if isinstance(s, (str, int))]
            lines.append(at(shown, *docs[0].src.locate(loc, key=key), message))
        raise UserError(lines) from None


def settings(
    config: Config,
    config_path: Path | None,
    *,
    select: Sequence[str],
    ignore: Sequence[str],
    fail_on: Severity | None,
    rule_dirs: Sequence[Path],
    max_per_rule: int | None = None,
) -> Settings:
    """The command line narrows the config: --select replaces, --ignore adds."""
    base = config_path.parent if config_path else Path()
    origins = (
        *(Origin("--select", g) for g in select),
        *(Origin("--ignore", g) for g in ignore),
        *(Origin("select", g, config.position("select", i)) for i, g in enumerate(config.select)),
        *(Origin("ignore", g, config.position("ignore", i)) for i, g in enumerate(config.ignore)),
        *(Origin("severity", g, config.position("severity", g, key=True)) for g in config.severity),
    )
    return Settings(
        select=tuple(select) or tuple(config.select),
        ignore=(*config.ignore, *ignore),
        severity=tuple(config.severity.items()),
        fail_on=fail_on or config.fail_on,
        rule_dirs=(*(base / d for d in config.rules), *rule_dirs),
        config_file=config_path,
        origins=origins,
        max_per_rule=config.max_per_rule if max_per_rule is None else max_per_rule,
        support_horizon_days=config.support_horizon_days,
    )


def check_selection(cfg: Settings, known: Sequence[str]) -> None:
    """A glob that matches no rule is a typo that would check nothing: an error."""
    lines = []
    for origin in cfg.origins:
        if any(fnmatch.fnmatchcase(rule, origin.glob) for rule in known):
            continue
        message = f"{origin.option} '{origin.glob}' matches no rule{did_you_mean(origin.glob, known)}"
        lines.append(f"{origin.where}: {message}" if origin.where else f"checker: {message}")
    if lines:
        raise UserError(lines)


def override_severity(
    findings: Sequence[Finding], overrides: Sequence[tuple[str, Severity]]
) -> list[Finding]:
    """Schema findings stay errors: invalid input is never downgraded."""
    out = []
    for f in findings:
        new = next((sev for glob, sev in overrides if matches(f.rule, [glob])), None)
        out.append(f.with_severity(new) if new and f.category != "schema" else f)
    return out


def apply_waivers(
    findings: Sequence[Finding],
    waivers: Sequence[Placed[Waiver]],
    as_of: dt.date,
    selected: Sequence[str],
    known_rules: Sequence[str],
) -> list[Finding]:
    """Mark waived findings and report expired, expiring, unused and dangling waivers."""
    active = {(w.value.rule, w.value.entity): w for w in waivers if w.value.expires >= as_of}
    used: set[tuple[str, str]] = set()
    out: list[Finding] = []
    for f in findings:
        key = (f.rule, f.entity)
        if key in active and f.category != "schema":
            used.add(key)
            out.append(f.with_waived())
        else:
            out.append(f)
    for w in waivers:
        out.extend(_waiver_findings(w, as_of, used, selected, known_rules))
    return out


def _waiver_findings(
    w: Placed[Waiver],
    as_of: dt.date,
    used: set[tuple[str, str]],
    selected: Sequence[str],
    known_rules: Sequence[str],
) -> list[Finding]:
    v = w.value
    what = f"waiver for {v.rule} on {v.entity}"
    if v.rule not in known_rules:
        hint = did_you_mean(v.rule, known_rules)
        return [
            located(
                "schema.reference",
                "schema",
                w.at(["rule"], key=False),
                f"waiver names unknown rule '{v.rule}'{hint}",
                entity=v.entity,
            )
        ]
    if v.expires < as_of:
        return [
            located(
                "waiver.expired",
                "waiver",
                w.at(["expires"], key=False),
                f"{what} expired on {v.expires.isoformat()}; the finding is no longer waived",
                entity=v.entity,
                remediation="Fix the finding or renew the waiver.",
            )
        ]
    out = []
    if (v.expires - as_of).days <= EXPIRING_DAYS:
        out.append(
            located(
                "waiver.expiring",
                "waiver",
                w.at(["expires"], key=False),
                f"{what} expires on {v.expires.isoformat()}",
                severity="info",
                entity=v.entity,
                remediation="Plan the fix or renew the waiver.",
            )
        )
    if (v.rule, v.entity) not in used and v.rule in selected:
        out.append(
            located(
                "waiver.unused",
                "waiver",
                w.at(),
                f"{what} matches no finding",
                severity="warning",
                entity=v.entity,
                remediation="Remove the waiver.",
            )
        )
    return out


def cap_per_rule(findings: Sequence[Finding], limit: int) -> tuple[list[Finding], dict[str, int]]:
    """The first `limit` findings of each rule, in order, and how many of each were
    left out: a million errors make a readable log, not 150 MB (0: no limit)."""
    if limit <= 0:
        return list(findings), {}
    shown: list[Finding] = []
    seen: dict[str, int] = {}
    for f in findings:
        seen[f.rule] = seen.get(f.rule, 0) + 1
        if seen[f.rule] <= limit:
            shown.append(f)
    return shown, {rule: n - limit for rule, n in sorted(seen.items()) if n > limit}


@dataclass(frozen=True)
class Verdict:
    verdict: str
    exit_code: int
    counts: dict[str, int]


def verdict(findings: Sequence[Finding], fail_on: Severity) -> Verdict:
    counts = {"error": 0, "warning": 0, "info": 0, "waived": 0}
    for f in findings:
        counts["waived" if f.waived else f.severity] += 1
    threshold = SEVERITY_RANK[fail_on]
    failing = any(not f.waived and SEVERITY_RANK[f.severity] >= threshold for f in findings)
    invalid = any(f.category == "schema" for f in findings)
    code = 2 if invalid else 1 if failing else 0
    return Verdict("fail" if failing else "pass", code, counts)
