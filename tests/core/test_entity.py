from __future__ import annotations

import pytest

from checker.core.entity import ENTITY_KINDS, entity_id


@pytest.mark.parametrize(
    ("kind", "key", "expected"),
    [
        ("facility", "sh1", "facility/sh1"),
        ("rack", ("sh1", "A07"), "rack/sh1/A07"),
        ("feed", ("sh1", "A07", "A07-A"), "feed/sh1/A07/A07-A"),
        ("server", "sh1-a07-gpu1", "server/sh1-a07-gpu1"),
        ("workload", "llm-pretrain-70b", "workload/llm-pretrain-70b"),
    ],
)
def test_entity_ids_follow_the_contract(kind: str, key: str | tuple[str, ...], expected: str) -> None:
    assert entity_id(kind, key) == expected


@pytest.mark.parametrize(
    ("kind", "key"), [("rack", "A07"), ("feed", ("sh1", "A07")), ("racks", ("sh1", "A07"))]
)
def test_a_key_of_the_wrong_shape_is_a_bug(kind: str, key: str | tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="cannot be made of"):
        entity_id(kind, key)


def test_every_fact_kind_has_an_entity_kind() -> None:
    from checker.derive.facts import REGISTRY

    # A framework fact is about its server: its findings name the server.
    assert set(REGISTRY) - {"framework"} == set(ENTITY_KINDS)
