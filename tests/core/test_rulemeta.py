"""One rule-metadata type; every rule id the code emits is registered."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from checker.core import builtin
from checker.core.rulemeta import RuleMeta
from checker.evaluate.rulebook import load_rulebook

PACKAGE = Path(builtin.__file__).parents[1]
RULES = PACKAGE.parent / "rules" / "power.yaml"
ID_LITERAL = re.compile(r"^(schema|waiver)\.[a-z0-9-]+$")


def _literals() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and ID_LITERAL.match(value):
                found.append((path.name, node.lineno, value))
    return found


def test_every_emitted_check_id_is_registered() -> None:
    registered = {m.id for m in builtin.BUILTIN_CHECKS}
    unknown = [(f, line, v) for f, line, v in _literals() if v not in registered]
    assert not unknown, f"ids emitted but not in BUILTIN_CHECKS: {unknown}"


def test_every_id_constant_is_registered() -> None:
    constants = {v for k, v in vars(builtin).items() if k.isupper() and isinstance(v, str)}
    assert constants == {m.id for m in builtin.BUILTIN_CHECKS}


def test_yaml_rules_and_builtin_checks_share_one_type() -> None:
    metas = load_rulebook().metadata()
    assert all(isinstance(m, RuleMeta) for m in metas)
    assert [m.id for m in metas] == sorted(m.id for m in metas)
    rack = next(m for m in metas if m.id == "power.rack-capacity")
    lines = RULES.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "id: power.rack-capacity" in text)
    assert (rack.builtin, rack.on) == (False, "rack") and rack.origin.endswith(f"rules/power.yaml:{line}")
    assert next(m for m in metas if m.id == "schema.yaml").builtin


def test_check_ids_are_spelled_once_as_constants() -> None:
    # Emitters use checker.core.builtin's constants, so a renamed id cannot drift.
    elsewhere = [(f, line, v) for f, line, v in _literals() if f != "builtin.py"]
    assert elsewhere == []
