from __future__ import annotations

import pytest

from checker.core.builtin import BUILTIN_CHECKS
from checker.core.findings import CATEGORIES
from checker.evaluate.rulebook import load_rulebook


@pytest.mark.parametrize("check", BUILTIN_CHECKS, ids=lambda c: c.id)
def test_builtin_checks_have_full_metadata(check: object) -> None:
    assert [c.id for c in BUILTIN_CHECKS].count(check.id) == 1  # type: ignore[attr-defined]
    assert check.category in CATEGORIES and check.title and check.rationale and check.remediation  # type: ignore[attr-defined]


def test_builtin_ids_do_not_clash_with_rules() -> None:
    assert not {c.id for c in BUILTIN_CHECKS} & set(load_rulebook().ids())
