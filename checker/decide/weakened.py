"""What a change's checker.yaml turns off or loosens against the base's (checker diff).

`checker diff` audits the base and the head with the same settings, the
head's: that is what lets it show what the inventory change does. But a pull
request can change those settings too (or add a checker.yaml of its own
nearer the inventories, which wins), and then both trees are quiet alike.
Each way the head's settings check less than the base's is one finding
(`config.weakened`), at the line of the head's config that makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from checker.core.builtin import CONFIG_WEAKENED
from checker.core.errors import clip
from checker.core.findings import SEVERITY_RANK, Finding, Location, Severity, located
from checker.core.rulemeta import RuleMeta
from checker.decide.config import Config, Settings
from checker.derive.facts import SUPPORT_RANK
from checker.evaluate.rulebook import CompiledRule, matches
from checker.source.parse import Document
from checker.source.reader import display_path

SHOWN = 10  # rule ids a message names, then how many more

# Policy thresholds and the direction that checks less: (setting, looser(base, head)).
_LOOSER: dict[str, Callable[[object, object], bool]] = {
    "support_horizon_days": lambda base, head: float(head) < float(base),  # type: ignore[arg-type]
    "headroom_pct": lambda base, head: float(head) < float(base),  # type: ignore[arg-type]
    "large_model_params_b": lambda base, head: float(head) > float(base),  # type: ignore[arg-type]
    "support_level": lambda base, head: SUPPORT_RANK[str(head)] < SUPPORT_RANK[str(base)],
}


def _enabled(cfg: Settings, rule: str) -> bool:
    return matches(rule, cfg.select) and not matches(rule, cfg.ignore)


def _severity(cfg: Settings, meta: RuleMeta) -> Severity:
    if meta.category == "schema":  # input errors are never downgraded (verdict.override_severity)
        return meta.severity
    return next((sev for glob, sev in cfg.severity if matches(meta.id, [glob])), meta.severity)


def _named(ids: Sequence[str]) -> str:
    more = len(ids) - SHOWN
    return ", ".join(ids[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class _Where:
    """Where in the head's config a setting is written (its key), else the file's start."""

    def __init__(self, config: Config, file: Path | None) -> None:
        self.config = config
        self.file = display_path(file) if file is not None else "checker.yaml"

    def __call__(self, *names: str) -> Location:
        for name in names:
            place = self.config.place(name, key=True) if name in self.config.model_fields_set else None
            if place is not None:
                return Location(self.file, place[1], place[2])
        return Location(self.file, 1, 1)


def weakened(
    base: Settings,
    base_file: str,
    head_config: Config,
    head: Settings,
    metas: Sequence[RuleMeta],
    folders: tuple[Sequence[str], Sequence[str]],
) -> list[Finding]:
    """Each way `head` checks less than `base`, over the rules `metas` (the head's
    rulebook and the built-in checks). `base_file`: the base's config as named in
    the repository ('' for none: the defaults). `folders`: the team's rule folders
    the base and the head read, as named in the repository."""
    where = _Where(head_config, head.config_file)
    against = f"the base's {base_file}" if base_file else "the base's defaults (it had no checker.yaml)"
    found: list[Finding] = []

    def add(loc: Location, message: str) -> None:
        found.append(located(CONFIG_WEAKENED, "config", loc, f"{message}, against {against}",
                             severity="warning"))

    # Input checks report whatever is selected (checker.audit), and this check is
    # not the change's to turn off: it judges the change's own settings.
    judged = [m for m in metas if m.category != "schema" and m.id != CONFIG_WEAKENED]
    off = [m.id for m in judged if _enabled(base, m.id) and not _enabled(head, m.id)]
    if off:
        add(where("ignore", "select"), f"the change stops {len(off)} rules the base ran: {_named(off)}")
    lower = [
        f"{m.id} ({_severity(base, m)} -> {_severity(head, m)})"
        for m in judged
        if _enabled(base, m.id) and _enabled(head, m.id)
        and SEVERITY_RANK[_severity(head, m)] < SEVERITY_RANK[_severity(base, m)]
    ]
    if lower:
        add(where("severity"), f"the change lowers the severity of {len(lower)} rules: {_named(lower)}")
    if SEVERITY_RANK[head.fail_on] > SEVERITY_RANK[base.fail_on]:
        add(where("fail_on"), f"the change raises fail_on from {base.fail_on} to {head.fail_on}")
    for name, looser in _LOOSER.items():
        was, now = getattr(base, name), getattr(head, name)
        if looser(was, now):
            add(where(name), f"the change loosens {name} from {_shown(was)} to {_shown(now)}")
    # The team's own rule folders: one the base read and the head does not takes its
    # rules with it, which `off` cannot see (the head never loaded them). Compared by
    # where they are: each config names them relative to its own folder.
    kept = set(folders[1])
    dropped = [folder for folder in folders[0] if folder not in kept]
    if dropped:
        add(where("rules"), f"the change no longer reads the rule folders {', '.join(dropped)}")
    return found


def rules_changed(
    base: Sequence[CompiledRule], head: Sequence[CompiledRule], head_config: Config, head_file: Path | None
) -> list[Finding]:
    """What the change does to the team's own rules (the head's rule folders, as
    of the base and now): both trees are audited with the head's rules, so a
    rule removed or rewritten changes the base's findings as well as the head's."""
    before, after = {r.id: r for r in base}, {r.id: r for r in head}
    found: list[Finding] = []
    removed = sorted(set(before) - set(after))
    if removed:
        message = f"the change removes {len(removed)} of the team's rules: {_named(removed)}"
        found.append(located(CONFIG_WEAKENED, "config", _Where(head_config, head_file)("rules"),
                             f"{message}, which the base's rule folders hold", severity="warning"))
    for rule_id in sorted(set(before) & set(after)):
        was, now = before[rule_id], after[rule_id]
        edits = []
        if was.when.source != now.when.source:
            edits.append(f"its condition, '{clip(was.when.source)}' -> '{clip(now.when.source)}'")
        if SEVERITY_RANK[now.rule.severity] < SEVERITY_RANK[was.rule.severity]:
            edits.append(f"its severity, {was.rule.severity} -> {now.rule.severity}")
        if was.rule.on != now.rule.on:
            edits.append(f"what it checks, {was.rule.on} -> {now.rule.on}")
        if edits:
            where = Location(now.file, now.src.line, now.src.column)
            message = (f"the change edits rule {rule_id}: {'; '.join(edits)}; both trees are audited with "
                       "the new rule, so its findings at the base are the new rule's too")
            found.append(located(CONFIG_WEAKENED, "config", where, message, severity="warning"))
    return found


def knowledge_changed(
    base: Sequence[tuple[str, Document]],
    head: Sequence[tuple[str, Document]],
    head_config: Config,
    head_file: Path | None,
) -> list[Finding]:
    """What the change does to the knowledge documents of the team's rule folders
    (a catalog model's power draw, a driver table): both trees are audited with the
    head's, so an edited figure changes the base's findings as well as the head's.
    Reported at the first document of the head's that the base did not have (else
    at the config's `rules`), not judged: whether a figure checks less is not
    worked out."""
    before = [doc.value for _, doc in base]
    after = [doc.value for _, doc in head]
    if before == after:
        return []
    new = [(file, doc) for file, doc in head if doc.value not in before]
    gone = sum(1 for value in before if value not in after)
    if new:
        file, doc = new[0]
        where = Location(file, doc.src.line, doc.src.column)
    else:
        where = _Where(head_config, head_file)("rules")
    message = (f"the change edits the knowledge documents of the team's rule folders ({len(new)} new or"
               f" changed, {gone} removed): both trees are audited with the new ones, so the base's"
               " findings are the new documents' too")
    return [located(CONFIG_WEAKENED, "config", where, message, severity="warning")]
