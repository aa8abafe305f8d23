"""JSON Schema of the inventory kinds, for editors (yaml-language-server)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, TypeAdapter

from checker.load import models as m
from checker.load.build import KINDS


def inventory_schema(tables: Sequence[type[BaseModel]] = ()) -> dict[str, Any]:
    """`tables`: the knowledge tables' models (checker.derive.knowledge.table_models()),
    whose documents inventories may hold too (docs/knowledge.md)."""
    models = (*(kind.model for kind in KINDS.values()), *tables)
    # One document of any kind, told apart by `kind` (a union built from the table).
    union: Any = Union[models]  # noqa: UP007
    schema = TypeAdapter(Annotated[union, Field(discriminator="kind")]).json_schema()
    # Servers are validated after merging defaults and a catalog model, so in
    # the file every field but the name may be left to those.
    server = {**TypeAdapter(m.Server).json_schema(), "required": ["name"]}
    defs = schema.setdefault("$defs", {})
    defs.update(server.pop("$defs", {}))
    defs["ServersDoc"]["properties"]["servers"] = {"type": "array", "items": server}
    defs["ServersDoc"]["properties"]["defaults"] = {**server, "required": []}
    # Top-level `x-` keys hold YAML anchors and are ignored (as in Docker Compose).
    for model in models:
        defs[model.__name__]["patternProperties"] = {"^x-": {}}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "checker inventory document"
    return schema
