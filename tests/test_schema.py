from __future__ import annotations

import json

from checker.schema import inventory_schema


def test_schema_covers_every_kind_and_lets_servers_lean_on_defaults() -> None:
    schema = inventory_schema()
    json.dumps(schema)  # serialisable as is
    kinds = {
        d["properties"]["kind"]["const"]
        for d in schema["$defs"].values()
        if "kind" in d.get("properties", {})
    }
    assert kinds == {"Facility", "Servers", "Workloads", "Waivers", "GpuModels", "ServerModels"}
    servers = schema["$defs"]["ServersDoc"]["properties"]["servers"]["items"]
    assert servers["required"] == ["name"] and servers["additionalProperties"] is False
