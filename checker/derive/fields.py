"""A fact field: a name rules use, its type, unit and meaning. Each is declared
beside the code that computes it (capacity columns in checker.derive.capacity,
catalog and software figures in checker.derive.software, fit figures in
checker.derive.fit, the rest in checker.derive.facts); facts.REGISTRY gathers
them per fact kind, and `checker facts` prints them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FieldType = Literal["number", "string", "boolean", "date"]


@dataclass(frozen=True, slots=True)
class FactField:
    name: str
    type: FieldType
    unit: str
    doc: str
    # Inventory path of the value, when it is read from the model (for `locate`).
    path: tuple[str, ...] | None = None


def written(name: str, type_: FieldType, unit: str, doc: str) -> FactField:
    """A field read from the model at the inventory path spelled by its name."""
    return FactField(name, type_, unit, doc, tuple(name.split(".")))


def derived(name: str, type_: FieldType, unit: str, doc: str) -> FactField:
    """A derived field (no inventory path)."""
    return FactField(name, type_, unit, doc)
