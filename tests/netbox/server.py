"""A local HTTP server that answers like NetBox from a recording (tests/netbox/record.py).

It checks `Authorization: Token ...` (403 otherwise, as NetBox 4.6 does), pages
lists by `limit`/`offset` with `next` links (at most `max_page` a page, as
NetBox's MAX_PAGE_SIZE), and logs every request so tests can count them.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.netbox.record import PLACEHOLDER, key

RECORDINGS = Path(__file__).parent / "recordings"
VERSION = "4.6.8"
TOKEN = "0123456789abcdef0123456789abcdef01234567"


def recording(version: str = VERSION) -> dict[str, Any]:
    text = (RECORDINGS / f"netbox-{version}.json").read_text(encoding="utf-8")
    return dict(json.loads(text))


@dataclass
class FakeNetBox:
    data: dict[str, Any]
    token: str = TOKEN
    max_page: int = 1000
    default_page: int = 50
    url: str = ""
    requests: list[str] = field(default_factory=list)
    # Answer this many requests 429 (Retry-After: 0) first, as NetBox behind a rate limit.
    throttle: int = 0

    def lists(self) -> dict[str, list[dict[str, Any]]]:
        return dict(self.data["lists"])

    def paths(self) -> list[str]:
        """The paths requested, without the query."""
        return [r.split("?")[0] for r in self.requests]


def _handler(nb: FakeNetBox) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, body: Any) -> None:
            data = json.dumps(body).replace(PLACEHOLDER, nb.url).encode()
            self.send_response(code)
            if code == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("API-Version", ".".join(nb.data["status"]["netbox-version"].split(".")[:2]))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            nb.requests.append(self.path)
            if nb.throttle > 0:
                nb.throttle -= 1
                self._send(429, {"detail": "Request was throttled."})
                return
            if self.headers.get("Authorization") != f"Token {nb.token}":
                self._send(403, {"detail": "Invalid v1 token"})
                return
            parts = urlsplit(self.path)
            path = parts.path.removeprefix("/api/").strip("/")
            params = parse_qs(parts.query)
            if path == "status":
                self._send(200, nb.data["status"])
                return
            found = nb.data["lists"].get(key(path, params))
            if found is None:
                self._send(404, {"detail": f"not recorded: {key(path, params)}"})
                return
            limit = int(params.get("limit", [nb.default_page])[0]) or nb.max_page
            limit = min(limit, nb.max_page)
            offset = int(params.get("offset", ["0"])[0])
            page = found[offset : offset + limit]
            following = None
            if offset + limit < len(found):
                query = {k: v for k, v in params.items() if k not in ("limit", "offset")}
                query.update(limit=[str(limit)], offset=[str(offset + limit)])
                following = f"{nb.url}{parts.path}?{urlencode(query, doseq=True)}"
            previous = None if offset == 0 else f"{nb.url}{parts.path}"
            self._send(200, {"count": len(found), "next": following, "previous": previous, "results": page})

    return Handler


@contextmanager
def serve(data: dict[str, Any] | None = None, **options: Any) -> Iterator[FakeNetBox]:
    nb = FakeNetBox(copy.deepcopy(data if data is not None else recording()), **options)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(nb))
    nb.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield nb
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
