"""`checker.yaml` and the command line: which rules run, at what severity, what fails.

The config is validated with pydantic (unknown keys, wrong types: file:line:col,
exit 2). The command line narrows it: --select replaces, --ignore adds. A glob
that matches no rule is an error, since a typo would otherwise check nothing.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from checker.core.errors import UserError, at, clip
from checker.core.findings import Severity
from checker.core.suggest import did_you_mean
from checker.source.parse import Document, Src
from checker.source.pyproject import tool_table
from checker.source.reader import display_path, not_a_file, read_file, validate

CONFIG_NAME = "checker.yaml"
# The files a folder's config may be, as teams know them from other tools
# (ruff.toml / .ruff.toml / pyproject.toml [tool.ruff]): a folder with two of
# them is an error, since one would be ignored without a word.
CONFIG_NAMES = ("checker.yaml", ".checker.yaml", "checker.yml", ".checker.yml")
PYPROJECT = "pyproject.toml"


# Server fields a NetBox custom field may fill (`checker import netbox`, docs/netbox.md).
NetboxTarget = Literal[
    "gpu.model", "gpu.count", "support.vendor", "support.level", "support.until", "workload",
    "software.os", "software.driver", "software.cuda", "memory_gb", "power_cap_w", "cpu.model",
]


class NetboxImport(BaseModel):
    """`netbox:` in checker.yaml: what `checker import netbox` reads beyond NetBox's own fields."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # as checker.load.models.Model

    custom_fields: dict[str, NetboxTarget] = Field(
        default={}, description="device custom field name -> the server field it fills"
    )


class Config(BaseModel):
    """`checker.yaml`: per-repository rule selection, severities and threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # as checker.load.models.Model

    # An empty list would run no rule at all and pass every plan: refused.
    select: list[str] = Field(default=["*"], min_length=1, description="globs over rule ids to run")
    ignore: list[str] = Field(default=[], description="globs over rule ids to skip")
    severity: dict[str, Severity] = Field(default={}, description="rule id glob -> severity")
    fail_on: Severity = Field(default="error", description="lowest severity that fails the run")
    rules: list[str] = Field(default=[], description="extra rule folders, relative to this file")
    support_horizon_days: int = Field(  # strict: `true` is no number of days
        default=365, ge=0, le=3650, strict=True,
        description="warn when support ends within this many days of rollout",
    )
    max_per_rule: int = Field(default=100, ge=0, description="findings shown per rule, then a count (0: all)")
    group_findings: bool = Field(
        default=True, strict=True,
        description="text, Markdown and the pull-request comment show findings alike but for their "
        "entity's name once, with their count and names (false: a line each)",
    )
    netbox: NetboxImport = Field(default=NetboxImport(), description="`checker import netbox` settings")
    large_model_params_b: float = Field(
        default=1.0, gt=0, le=100_000, strict=True,
        description="models above this many billion parameters are large: trained on 8+ GPUs, "
        "with 512 GB of host RAM (S1 2.1: > 1B)",
    )
    headroom_pct: float = Field(
        default=10.0, ge=0, lt=100, strict=True,
        description="share of rack power and cooling, UPS, room cooling and CDU capacity to keep free",
    )
    support_level: Literal["24x7", "8x5", "nbd"] = Field(
        default="24x7", description="the support level GPU servers are expected to have (24x7 > 8x5 > nbd)"
    )
    # Where each value was written, so a `select:` entry that matches nothing is located.
    _where: tuple[str, Src] | None = PrivateAttr(default=None)

    def place(self, *path: str | int, key: bool = False) -> tuple[str, int, int] | None:
        """(file, line, column) of a config value (or key), or None for defaults."""
        if self._where is None:
            return None
        file, src = self._where
        return (file, *src.locate(path, key=key))

    def position(self, *path: str | int, key: bool = False) -> str:
        """`file:line:column` of a config value (or key), or '' for defaults."""
        place = self.place(*path, key=key)
        return "" if place is None else ":".join(map(str, place))


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
    group_findings: bool = True
    support_horizon_days: int = 365
    large_model_params_b: float = 1.0
    headroom_pct: float = 10.0
    support_level: str = "24x7"


def repository_root(folder: Path) -> Path | None:
    """The folder holding `.git` (a folder, or a file in a worktree or submodule)
    at or above `folder`, if any."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _config_in(folder: Path) -> Path | None:
    """The config file of one folder: one of CONFIG_NAMES, or a pyproject.toml
    with a [tool.checker] table."""
    found = [folder / name for name in CONFIG_NAMES if (folder / name).is_file()]
    pyproject = folder / PYPROJECT
    if pyproject.is_file() and tool_table(pyproject, display_path(pyproject)) is not None:
        found.append(pyproject)
    if len(found) > 1:
        names = " and ".join(p.name + (" [tool.checker]" if p.name == PYPROJECT else "") for p in found)
        raise UserError(f"{display_path(folder)}: {names} are both checker configs; keep one")
    return found[0] if found else None


def searched(start: Path) -> list[Path]:
    """The folders whose config applies to `start`, nearest first: `start` and
    each folder above it, up to the repository root (the folder with `.git`),
    or to the file system's root outside a repository."""
    folder = start.resolve()
    root = repository_root(folder)
    chain = [folder, *folder.parents]
    return chain[: chain.index(root) + 1] if root is not None else chain


def find_config(paths: Sequence[Path]) -> Path | None:
    """The nearest config to the inventories: in the first path's folder (a
    file's own folder) or above it, up to the repository root; if none, the
    nearest at or above the current directory. Nearest wins, as with git,
    ruff and editorconfig."""
    starts = [p if p.is_dir() else p.parent for p in paths]
    for start in [*starts, Path()]:
        for folder in searched(start):
            found = _config_in(folder)
            if found is not None:
                return found
    return None


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
    doc = _config_document(path, shown)
    if doc is None:
        return Config(), path
    config = validate(Config, doc, shown)
    config._where = (shown, doc.src)
    return config, path


def _config_document(path: Path, shown: str) -> Document | None:
    """The one document of a config file: YAML, or [tool.checker] of a pyproject.toml."""
    if path.name == PYPROJECT:
        table = tool_table(path, shown)
        if table is None:
            raise UserError(f"{shown}: has no [tool.checker] table")
        return table
    docs = read_file(path).documents
    if not docs:
        return None
    if len(docs) > 1:
        second = docs[1].src
        raise UserError(at(shown, second.line, second.column, "a config file holds one YAML document"))
    return docs[0]


def settings(
    config: Config,
    config_path: Path | None,
    *,
    select: Sequence[str],
    ignore: Sequence[str],
    fail_on: Severity | None,
    rule_dirs: Sequence[Path],
    max_per_rule: int | None = None,
    group_findings: bool | None = None,
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
        rule_dirs=(*_config_rule_dirs(config, base), *rule_dirs),
        config_file=config_path,
        origins=origins,
        max_per_rule=config.max_per_rule if max_per_rule is None else max_per_rule,
        group_findings=config.group_findings if group_findings is None else group_findings,
        support_horizon_days=config.support_horizon_days,
        large_model_params_b=config.large_model_params_b,
        headroom_pct=config.headroom_pct,
        support_level=config.support_level,
    )


# Policy thresholds: the setting, and the fact fields that carry it to the rules.
POLICY: dict[str, tuple[str, ...]] = {
    "support_horizon_days": ("support.horizon_days",),
    "large_model_params_b": ("large_model_params_b", "workload_large_model_params_b"),
    "headroom_pct": ("headroom_pct",),
    "support_level": ("support.expected_level", "support.expected_rank"),
}


def policy_in(when: str | None, config: Config) -> list[tuple[str, object, str]]:
    """The policy settings a rule's `when` reads: (setting, value, where it was set
    or 'default')."""
    words = set(re.findall(r"[A-Za-z_][\w.]*", when or ""))
    read = [name for name, fields in POLICY.items() if words & set(fields)]
    return [(name, getattr(config, name), _origin(config, name)) for name in read]


def _origin(config: Config, name: str) -> str:
    if name not in config.model_fields_set:
        return "default"
    return config.position(name, key=True) or "config"


# Settings the command line sets too: the option, and whether it replaces the
# config's value or adds to it.
COMMAND_LINE: dict[str, tuple[str, str]] = {
    "select": ("--select", "replaces"),
    "ignore": ("--ignore", "adds"),
    "fail_on": ("--fail-on", "replaces"),
    "rules": ("--rules", "adds"),
    "max_per_rule": ("--max-per-rule", "replaces"),
    "group_findings": ("--no-group", "replaces"),
}


def in_force(config: Config, cfg: Settings, given: Collection[str]) -> list[tuple[str, object, str]]:
    """Every setting of checker.yaml as the run uses it, and where it came from:
    (name, value, origin), in the order of `Config`'s fields. `given`: the
    settings the command line set (`fail_on` for --fail-on)."""
    values: dict[str, object] = {
        "select": list(cfg.select),
        "ignore": list(cfg.ignore),
        "fail_on": cfg.fail_on,
        "rules": [display_path(p) for p in cfg.rule_dirs],
        "max_per_rule": cfg.max_per_rule,
        "group_findings": cfg.group_findings,
    }
    rows = []
    for name in Config.model_fields:
        value = values.get(name, getattr(config, name))
        if isinstance(value, BaseModel):
            value = value.model_dump()
        where = [] if name not in config.model_fields_set else [config.position(name, key=True) or "config"]
        if name in given:
            option, how = COMMAND_LINE[name]
            where = [*where, option] if how == "adds" else [option]
        rows.append((name, value, " + ".join(where) or "default"))
    return rows


def check_selection(cfg: Settings, known: Sequence[str]) -> None:
    """A glob that matches no rule is a typo that would check nothing: an error."""
    lines = []
    for origin in cfg.origins:
        if any(fnmatch.fnmatchcase(rule, origin.glob) for rule in known):
            continue
        message = f"{origin.option} '{clip(origin.glob)}' matches no rule{did_you_mean(origin.glob, known)}"
        lines.append(f"{origin.where}: {message}" if origin.where else f"checker: {message}")
    if lines:
        raise UserError(lines)


def _config_rule_dirs(config: Config, base: Path) -> list[Path]:
    """The config's `rules:` folders, each inside the config's own folder: a
    checker.yaml from a pull request may not read YAML elsewhere on the runner
    (an absolute path, `..`, or a link that leads out)."""
    folders = []
    inside = base.resolve()
    for i, name in enumerate(config.rules):
        folder = base / name
        if os.path.isabs(name) or not folder.resolve().is_relative_to(inside):
            raise UserError(
                f"{config.position('rules', i)}: rule folder '{clip(name)}' is outside the config's folder;"
                " name a folder beside checker.yaml, or pass --rules on the command line"
            )
        try:
            os.stat(folder)
        except OSError as exc:  # missing or not a folder: the rulebook says so; a name too long, here
            if exc.errno == errno.ENAMETOOLONG:
                where = config.position("rules", i)
                raise UserError(f"{where}: rule folder '{clip(name)}': {exc.strerror}") from None
        folders.append(folder)
    return folders

