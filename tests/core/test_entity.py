from __future__ import annotations

from pathlib import Path

import pytest

from checker.core.entity import entity_id
from checker.derive.facts import REGISTRY
from checker.load.build import ENTITIES, entity_forms, load

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_key_of_nothing_is_a_bug() -> None:
    with pytest.raises(ValueError, match="needs a key"):
        entity_id("rack", ())


def test_every_entity_id_has_its_kinds_shape() -> None:
    # The example rollout and every fixture that loads: each entity kind is among them.
    fixtures = sorted(p for p in (ROOT / "tests" / "fixtures").iterdir() if p.is_dir())
    folders = [ROOT / "inventories", *fixtures]
    kinds = []
    for folder in folders:
        inv, problems = load([folder])
        if not problems:
            kinds += [(i.split("/")[0], len(i.split("/")) - 1) for i in inv.entities()]
    assert {kind for kind, _ in kinds} == set(ENTITIES)
    assert all(parts == len(ENTITIES[kind].key) for kind, parts in kinds)


def test_every_fact_kind_has_an_entity_kind() -> None:
    # A framework, container, engine or JAX fact is about its server: its findings name the server.
    assert set(REGISTRY) - {"framework", "container", "engine", "jax"} == set(ENTITIES)


def test_the_contract_lists_every_entity_kind() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    message = f"docs/architecture.md, Entity ids: put this line in place of the list:\n{entity_forms()}"
    assert entity_forms() in doc, message
