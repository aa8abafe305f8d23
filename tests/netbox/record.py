"""Record the API answers `checker import netbox` reads, for the tests to replay.

    NETBOX_URL=http://127.0.0.1:8000 NETBOX_TOKEN=... python -m tests.netbox.record

Run from the repository root against a NetBox populated by tests/netbox/populate.py.
It makes the requests the importer makes (checker.importers.netbox.queries) for each
site selection the tests use, follows every page, and writes
tests/netbox/recordings/netbox-<version>.json: NetBox's status and, per request
(path and filters, without paging), the whole list. URLs inside the answers are
rewritten to http://netbox.invalid so the file names no machine. docs/netbox.md says more.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import requests

from checker.importers.netbox import PAGE, queries

SELECTIONS: tuple[tuple[str, ...], ...] = ((), ("fra1",), ("ber1", "fra1"))
PLACEHOLDER = "http://netbox.invalid"
OUT = Path(__file__).parent / "recordings"


def key(path: str, params: dict[str, list[str]]) -> str:
    """The recording's key of a request: its path and filters, sorted, without paging."""
    pairs = sorted((k, v) for k, values in params.items() for v in values if k not in ("limit", "offset"))
    return path.strip("/") + ("?" + "&".join(f"{k}={v}" for k, v in pairs) if pairs else "")


def main() -> None:
    url = os.environ["NETBOX_URL"].rstrip("/")
    session = requests.Session()
    token = os.environ["NETBOX_TOKEN"]
    session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})

    def get(path: str, params: dict[str, Any]) -> Any:
        answer = session.get(f"{url}/api/{path}/", params=params, timeout=30)
        answer.raise_for_status()
        return answer.json()

    status = get("status", {})
    status.pop("hostname", None)  # names the machine it was recorded on
    lists: dict[str, list[Any]] = {}
    for sites in SELECTIONS:
        for path, params in queries(sites):
            results: list[Any] = []
            page = get(path, {**params, "limit": PAGE})
            results += page["results"]
            while page["next"]:
                answer = session.get(page["next"], timeout=30)
                answer.raise_for_status()
                page = answer.json()
                results += page["results"]
            lists[key(path, params)] = results
    version = status["netbox-version"]
    text = json.dumps({"status": status, "lists": lists}, indent=1, sort_keys=True) + "\n"
    text = text.replace(url, PLACEHOLDER)
    OUT.mkdir(exist_ok=True)
    out = OUT / f"netbox-{version}.json"
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(lists)} lists)", file=sys.stderr)


if __name__ == "__main__":
    main()
