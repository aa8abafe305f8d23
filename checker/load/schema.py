"""JSON Schema of the inventory kinds, for editors (yaml-language-server) and validators.

A typo must give one error that names it. A plain union of the kinds
(`oneOf`) makes a validator try every kind and report why the document is
none of them: one misspelt rack field becomes a dozen errors about Servers,
Waivers and the rest. So the kinds are told apart by `kind` with if/then
(JSON Schema 2020-12, section 10.2.2: understood by validators and by
yaml-language-server alike): only the document's own kind is checked. Unions
inside a kind (a field that may be null, a count or a list) are told apart by
the value's JSON type the same way, so an error inside one comes from the
branch of that type alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, TypeAdapter

from checker.load import models as m
from checker.load.build import KINDS
from checker.load.fielddocs import describe

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def inventory_schema(tables: Sequence[type[BaseModel]] = ()) -> dict[str, Any]:
    """`tables`: the knowledge tables' models (checker.derive.knowledge.table_models()),
    whose documents inventories may hold too (docs/knowledge.md)."""
    models = (*(kind.model for kind in KINDS.values()), *tables)
    # All kinds' definitions at once (the union is only the way to get them together).
    union: Any = Union[models]  # noqa: UP007
    generated = TypeAdapter(Annotated[union, Field(discriminator="kind")]).json_schema()
    defs: dict[str, Any] = generated["$defs"]
    # Servers are validated after merging defaults and a catalog model, so in
    # the file every field but the name may be left to those.
    server = {**TypeAdapter(m.Server).json_schema(), "required": ["name"]}
    defs.update(server.pop("$defs", {}))
    defs["ServersDoc"]["properties"]["servers"] = {"type": "array", "items": server}
    defs["ServersDoc"]["properties"]["defaults"] = {**server, "required": []}
    # Top-level `x-` keys hold YAML anchors and are ignored (as in Docker Compose).
    for model in models:
        defs[model.__name__]["patternProperties"] = {"^x-": {}}
    refs: dict[str, str] = generated["discriminator"]["mapping"]
    schema = {
        "$schema": DRAFT,
        "title": "checker inventory document",
        "type": "object",
        "required": ["kind"],
        "properties": {
            "kind": {"enum": list(refs), "description": "what the document holds (inventories/README.md)"}
        },
        "allOf": [
            {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": ref}}
            for kind, ref in refs.items()
        ],
        "$defs": defs,
    }
    table_defs = _reachable({t.__name__ for t in tables}, defs)
    described: dict[str, Any] = _described(_by_type(schema, defs), table_defs)
    return described


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        return own.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node))
    return set()


def _reachable(names: set[str], defs: dict[str, Any]) -> frozenset[str]:
    """The definitions `names` refer to, at any depth, and themselves."""
    seen, todo = set(names), list(names)
    while todo:
        for ref in _refs(defs.get(todo.pop(), {})) - seen:
            seen.add(ref)
            todo.append(ref)
    return frozenset(seen)


def _described(node: Any, tables: frozenset[str], model: str | None = None) -> Any:
    """Every property with what it means and its unit (checker/load/fielddocs.py);
    a model's schema carries its name as `title`; `tables`: the models of
    knowledge tables, whose fields are described as table rows."""
    if isinstance(node, list):
        return [_described(item, tables, model) for item in node]
    if not isinstance(node, dict):
        return node
    model = node.get("title", model) if "properties" in node else model
    out = {key: _described(value, tables, model) for key, value in node.items()}
    for name, prop in out.get("properties", {}).items():
        text = describe(model, name, table=model in tables)
        if text is not None and isinstance(prop, dict):
            prop.setdefault("description", text)
    return out


def _json_type(alternative: dict[str, Any], defs: dict[str, Any]) -> str | None:
    if set(alternative) == {"$ref"}:
        alternative = defs[alternative["$ref"].rsplit("/", 1)[-1]]
    found = alternative.get("type")
    return found if isinstance(found, str) else None


def _by_type(node: Any, defs: dict[str, Any]) -> Any:
    """Every anyOf/oneOf whose branches have distinct JSON types, as `type` plus an
    if/then per type; other unions are left as they are."""
    if isinstance(node, list):
        return [_by_type(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _by_type(value, defs) for key, value in node.items()}
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if not isinstance(branches, list):
            continue
        types = [_json_type(b, defs) for b in branches]
        # integer is also a number: those two cannot be told apart by type.
        if None in types or len(set(types)) != len(types) or {"integer", "number"} <= set(types):
            continue
        del node[keyword]
        node["type"] = types
        checks = [
            {"if": {"type": t}, "then": b} for t, b in zip(types, branches, strict=True) if set(b) != {"type"}
        ]
        if checks:
            node["allOf"] = [*node.get("allOf", []), *checks]
    return node
