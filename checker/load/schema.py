"""JSON Schema of the inventory kinds, for editors (yaml-language-server)."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from checker.load import models as m


def inventory_schema() -> dict[str, Any]:
    kinds = Union[m.Facility, m.ServersDoc, m.WorkloadsDoc, m.WaiversDoc, m.GpuModelsDoc, m.ServerModelsDoc]  # noqa: UP007
    schema = TypeAdapter(Annotated[kinds, Field(discriminator="kind")]).json_schema()
    # Servers are validated after merging defaults and a catalog model, so in
    # the file every field but the name may be left to those.
    server = {**TypeAdapter(m.Server).json_schema(), "required": ["name"]}
    defs = schema.setdefault("$defs", {})
    defs.update(server.pop("$defs", {}))
    defs["ServersDoc"]["properties"]["servers"] = {"type": "array", "items": server}
    defs["ServersDoc"]["properties"]["defaults"] = {**server, "required": []}
    # Top-level `x-` keys hold YAML anchors and are ignored (as in Docker Compose).
    for name in ("Facility", "ServersDoc", "WorkloadsDoc", "WaiversDoc", "GpuModelsDoc", "ServerModelsDoc"):
        defs[name]["patternProperties"] = {"^x-": {}}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "checker inventory document"
    return schema
