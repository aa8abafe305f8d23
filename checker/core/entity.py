"""Entity ids (a contract, docs/architecture.md "Entity ids"): one helper spells them all.

Every id is built from the inventory's own key for that kind of entity:
a facility or server name, (facility, rack), (facility, rack, feed).
"""

from __future__ import annotations

# Kind -> number of names in its key.
ENTITY_KINDS: dict[str, int] = {"facility": 1, "rack": 2, "feed": 3, "server": 1, "workload": 1}


def entity_id(kind: str, key: str | tuple[str, ...]) -> str:
    """`rack`, ("sh1", "A07") -> "rack/sh1/A07"."""
    parts = (key,) if isinstance(key, str) else key
    if ENTITY_KINDS.get(kind) != len(parts):
        raise ValueError(f"an entity id of kind {kind!r} cannot be made of {parts!r}")  # a bug, not input
    return "/".join((kind, *parts))
