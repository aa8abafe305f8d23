"""Entity ids (a contract, docs/architecture.md "Entity ids"): one helper spells them all.

Every id is the entity's kind and the inventory's own key for it: a facility
or server name, (facility, rack), (facility, rack, feed). Which kinds there are,
and the names of their keys, is the table `checker.load.build.ENTITIES`.
"""

from __future__ import annotations


def entity_id(kind: str, key: str | tuple[str, ...]) -> str:
    """`rack`, ("sh1", "A07") -> "rack/sh1/A07"."""
    parts = (key,) if isinstance(key, str) else key
    if not parts:
        raise ValueError(f"an entity id of kind {kind!r} needs a key")  # a bug, not input
    return "/".join((kind, *parts))
