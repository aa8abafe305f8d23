"""What an audit decided: the record every format reads."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from checker import __version__
from checker.core.findings import Finding
from checker.core.rulemeta import RuleMeta
from checker.decide.waivers import WaiverRecord
from checker.derive.capacity import Capacity
from checker.derive.facts import Fact
from checker.evaluate.engine import Messages


@dataclass(frozen=True)
class AuditResult:
    """Everything formatters may read; they never re-read files.

    `rules` are the rules and checks that ran (SARIF's driver rules, JUnit's
    test cases); `facts` are the entities the rules looked at, with every
    derived figure (empty when input errors kept the rules from running).

    `detected` is every finding, none dropped, in output order; a rule
    finding's message is rendered when a format reads it (`findings`,
    `with_messages`), so a log that shows 100 per rule renders 100.
    """

    as_of: dt.date
    verdict: str
    exit_code: int
    summary: dict[str, int]
    detected: tuple[Finding, ...]
    capacity: Capacity | None
    rules: tuple[RuleMeta, ...] = ()
    facts: tuple[Fact, ...] = ()
    messages: Messages = field(default_factory=Messages)
    version: str = __version__
    waivers: tuple[WaiverRecord, ...] = ()  # every waiver, with its state
    # The paths audited, as findings show files (relative to the current
    # folder when below it), sorted: what SARIF names its analysis after.
    paths: tuple[str, ...] = ()
    # Keeps what the run worked out of its files for the next run (the positions
    # asked of its kept files: checker.load.validated), once the formats are written.
    keep_positions: Callable[[], None] = field(default=lambda: None, repr=False, compare=False)

    def keep_for_next_run(self) -> None:
        """Keep the messages rendered and the positions worked out, once every format is written."""
        self.messages.save()
        self.keep_positions()

    @functools.cached_property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding, with its message."""
        return self.with_messages(self.detected)

    def with_messages(self, findings: Iterable[Finding]) -> tuple[Finding, ...]:
        return tuple(map(self.messages.of, findings))

    @property
    def rules_evaluated(self) -> bool:
        return self.capacity is not None
