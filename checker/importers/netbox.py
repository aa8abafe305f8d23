"""`checker import netbox`: sites, racks, power feeds, devices and device types from
NetBox's REST API (through pynetbox) as inventory YAML.

Every endpoint in QUERIES is read as a whole list, all pages, filtered by site
where the endpoint takes it, and joined here: an import costs a fixed number of
requests per endpoint (one per 1,000 objects), never one per object.
docs/netbox.md says what maps to what, and what NetBox has no field for.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

import checker.importers.emit as emit
from checker.core.errors import UserError, at
from checker.decide.config import find_config, load_config
from checker.importers.drift import compare
from checker.importers.output import is_generated, marker, write_files
from checker.load import models as m
from checker.load.models import LINE_TO_NEUTRAL, LINE_TO_NEUTRAL_MIN_V
from checker.source.parse import YamlProblem
from checker.source.reader import describe_error, display_path, parse_text

SOURCE = "netbox"
KNOWN_MAJOR = 4  # NetBox 4.x; recorded against 4.6 (docs/netbox.md)
PAGE = 1000  # NetBox's default MAX_PAGE_SIZE
BACKOFF = 0.5  # seconds, doubled each retry, where a 429 or 503 gives no Retry-After
MODELS_FILE = "netbox-models.yaml"
# Devices in these states are not in the plan unless --all-statuses is given.
EXCLUDED_STATUSES = ("offline", "decommissioning")
_KG = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "oz": 0.028349523125}
_SIDES = {"primary": "A", "redundant": "B"}
_UNSAFE = re.compile(r"[\s/]+")
# Fields NetBox has no place for: given in an imported file, a re-import keeps them.
KEEP_FACILITY = ("pue_target", "design_pue", "pue_model", "power", "cooling", "floor_max_kg_per_m2",
                 "energy_price_per_kwh", "currency")
KEEP_RACK = ("footprint_m2", "cooling", "cooling_kw", "ats", "psu_order")
# A feed's (by rack and feed name): NetBox's power feeds name no UPS block, no
# panel of power.panels and no line; dropped, the panel checks would pass on less.
KEEP_FEED = ("ups", "panel", "line")
KEEP_SERVERS = ("rollout_date", "defaults")
KEEP_SERVER = ("power_cap_w", "cooling", "inlet_c", "gpu", "cpu", "memory_gb", "storage", "network",
               "software", "support", "workload")


@dataclass(frozen=True)
class Query:
    path: str  # app/endpoint, as in /api/dcim/racks/
    by_site: str | None  # the filter that selects one site's objects; None: read whole


QUERIES: tuple[Query, ...] = (
    Query("dcim/sites", "slug"),
    Query("dcim/racks", "site"),
    Query("dcim/power-panels", "site"),
    Query("dcim/power-feeds", "site"),
    Query("dcim/devices", "site"),
    Query("dcim/power-ports", "site"),
    Query("dcim/power-outlets", "site"),
    Query("dcim/device-types", None),
    Query("dcim/power-port-templates", None),
)


def queries(sites: Sequence[str]) -> list[tuple[str, dict[str, list[str]]]]:
    """The list requests an import of `sites` (all sites when empty) makes, before paging."""
    return [(q.path, {q.by_site: sorted(sites)} if sites and q.by_site else {}) for q in QUERIES]


@dataclass(frozen=True)
class Snapshot:
    """What an import read: NetBox's version and each endpoint's whole list."""

    url: str
    version: str
    lists: Mapping[str, list[dict[str, Any]]]


# ---------------------------------------------------------------- reading
def _public(url: str) -> str:
    """The URL as messages and files show it: without a user or password in it."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def check_version(url: str, version: str) -> None:
    major = version.split(".")[0]
    if not major.isdigit() or int(major) != KNOWN_MAJOR:
        raise UserError(
            f"netbox: {url}: NetBox {version or '(no version)'} is not a version this importer knows"
            f" ({KNOWN_MAJOR}.x)"
        )


def fetch(url: str, token: str, sites: Sequence[str], *, ca_bundle: Path | None, timeout: float) -> Snapshot:
    """Read everything an import needs; every failure is a one-line UserError."""
    import pynetbox
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    class _Adapter(HTTPAdapter):
        def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
            kwargs["timeout"] = timeout  # every request, pynetbox's own included
            return super().send(request, *args, **kwargs)

    api = pynetbox.api(url, token=token)
    session = requests.Session()
    session.verify = str(ca_bundle) if ca_bundle else True
    # NetBox's rate limits (and a proxy's 503s): wait as Retry-After says, a few times.
    # Only answers are retried: a refused connection or a timeout is reported at once.
    # (connect=0 lets requests say ConnectionError; read=False lets it say ReadTimeout.)
    retry = Retry(total=4, connect=0, read=False, other=0, status_forcelist=(429, 503),
                  backoff_factor=BACKOFF, allowed_methods=("GET",), respect_retry_after_header=True,
                  raise_on_status=False)
    adapter = _Adapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    api.http_session = session
    shown = _public(url.rstrip("/"))
    try:
        status = api.status()
        version = str(status.get("netbox-version", "")) if isinstance(status, dict) else ""
        check_version(shown, version)
        lists: dict[str, list[dict[str, Any]]] = {}
        for path, params in queries(sites):
            app, name = path.split("/")
            endpoint = getattr(getattr(api, app), name.replace("-", "_"))
            records = endpoint.filter(limit=PAGE, **params) if params else endpoint.all(limit=PAGE)
            lists[path] = [dict(r) for r in records]
    except pynetbox.RequestError as exc:
        code = exc.req.status_code
        if code in (401, 403):
            raise UserError(
                f"netbox: {shown}: the API token was refused (HTTP {code});"
                " check the token's value and rights"
            ) from None
        if code == 429:
            raise UserError(
                f"netbox: {shown}: still rate-limited (HTTP 429) after retrying; try again later"
            ) from None
        where = exc.req.request.path_url.split("?")[0] if exc.req.request is not None else ""
        raise UserError(f"netbox: {shown}: GET {where} answered HTTP {code}") from None
    except pynetbox.ContentError:
        raise UserError(f"netbox: {shown}: the answer is not NetBox's JSON; is this NetBox's URL?") from None
    except requests.exceptions.SSLError:
        raise UserError(f"netbox: {shown}: TLS verification failed (give the CA with --ca-bundle)") from None
    except requests.exceptions.Timeout:
        raise UserError(f"netbox: {shown}: no answer within {timeout:g} s (--timeout)") from None
    except requests.exceptions.ConnectionError:
        raise UserError(f"netbox: {shown}: cannot connect") from None
    except requests.exceptions.RequestException as exc:
        raise UserError(f"netbox: {shown}: {type(exc).__name__}") from None
    return Snapshot(shown, version, lists)


# ---------------------------------------------------------------- mapping
def _v(value: Any) -> Any:
    """A choice field's value ({value, label}) or the field itself."""
    return value.get("value") if isinstance(value, dict) and "value" in value else value


def _id(value: Any) -> int | None:
    return value.get("id") if isinstance(value, dict) else None


def _name(value: str) -> str:
    """An inventory name: NetBox allows spaces and '/', entity ids do not."""
    return _UNSAFE.sub("-", value.strip())


def _number(value: Any) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else round(number, 3)


def _kg(weight: Any, unit: Any) -> float | int | None:
    if weight is None:
        return None
    return _number(round(float(weight) * _KG.get(str(_v(unit) or "kg"), 1.0), 2))


class _Problems:
    def __init__(self, url: str) -> None:
        self.url = url

    def fail(self, message: str) -> UserError:
        return UserError(f"netbox: {self.url}: {message}")


def _power_ports(snap: Snapshot) -> tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, Any]]]:
    by_device: dict[int, list[dict[str, Any]]] = defaultdict(list)
    by_id: dict[int, dict[str, Any]] = {}
    for port in snap.lists["dcim/power-ports"]:
        by_id[port["id"]] = port
        device = _id(port.get("device"))
        if device is not None:
            by_device[device].append(port)
    return by_device, by_id


def _feed_of(port: Mapping[str, Any], ports: Mapping[int, Mapping[str, Any]],
             outlets: Mapping[int, Mapping[str, Any]]) -> tuple[int, str | None] | None:
    """The power feed a PSU's cable path ends at, and the PDU outlet's leg if through one."""
    kind = port.get("connected_endpoints_type")
    ends = port.get("connected_endpoints") or []
    if not ends or not port.get("connected_endpoints_reachable", True):
        return None
    end = _id(ends[0])
    if kind == "dcim.powerfeed" and end is not None:
        return end, None
    if kind == "dcim.poweroutlet" and end is not None and end in outlets:
        outlet = outlets[end]
        inlet = ports.get(_id(outlet.get("power_port")) or -1)
        if inlet is None:
            return None
        found = _feed_of(inlet, ports, {})
        return (found[0], _v(outlet.get("feed_leg"))) if found else None
    return None


def _plain(item: Any) -> dict[str, Any]:
    return dict(item.value if isinstance(item, emit.Commented) else item)


def _kept(entry: dict[str, Any], old: Mapping[str, Any] | None, fields: Sequence[str],
          before: str | None = None) -> dict[str, Any]:
    """`entry` with the `fields` an earlier import's file gives (`old`), ahead of `before`."""
    if not old:
        return entry
    extra = {k: old[k] for k in fields if k in old and k not in entry}
    if not extra:
        return entry
    head = {k: v for k, v in entry.items() if k != before}
    tail = {before: entry[before]} if before in entry else {}
    return {**head, **extra, **tail}


def _lost_feeds(old: Mapping[str, Mapping[str, Any]], names: set[str]) -> list[str]:
    """A comment for each feed of the earlier file that NetBox no longer has (removed, or
    renamed: kept fields are found by name) and whose kept fields are dropped with it:
    a panel that lost its feeds without a word would be checked on less."""
    out = []
    for name, feed in old.items():
        kept = {k: feed[k] for k in KEEP_FEED if k in feed}
        if name not in names and kept:
            fields = ", ".join(f"{k}: {emit.scalar(str(v))}" for k, v in kept.items())
            out.append(f"TODO feed {emit.scalar(name)} is not in NetBox any more (renamed?): its {fields}"
                       " were dropped")
    return out


def _kept_commented(item: Any, old: Mapping[str, Any] | None, fields: Sequence[str]) -> Any:
    """_kept, for an entry that may carry comments (emit.Commented)."""
    entry = _kept(_plain(item), old, fields)
    return emit.Commented(entry, item.comments) if isinstance(item, emit.Commented) else entry


def _by_name(items: Any) -> dict[str, Mapping[str, Any]]:
    return {str(i.get("name")): i for i in items or () if isinstance(i, Mapping)}


def _keep_local(
    doc: dict[str, Any], servers: list[Any], old: Sequence[Any]
) -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
    """The site's documents with what the user added to the file an earlier import wrote."""
    old_fac = next((d for d in old if isinstance(d, Mapping) and d.get("kind") == "Facility"), None)
    old_srv = next((d for d in old if isinstance(d, Mapping) and d.get("kind") == "Servers"), None)
    doc = _kept(doc, old_fac, KEEP_FACILITY, "racks")
    old_racks = _by_name(old_fac.get("racks") if old_fac else None)
    racks = []
    for r in doc["racks"]:
        old_rack = old_racks.get(_plain(r)["name"])
        rack = _kept(_plain(r), old_rack, KEEP_RACK, "feeds")
        comments = r.comments
        if old_rack:
            old_feeds = _by_name(old_rack.get("feeds"))
            feeds = rack.get("feeds", [])
            rack["feeds"] = [_kept_commented(f, old_feeds.get(_plain(f)["name"]), KEEP_FEED) for f in feeds]
            comments = (*comments, *_lost_feeds(old_feeds, {_plain(f)["name"] for f in feeds}))
        racks.append(emit.Commented(rack, comments))
    doc["racks"] = racks
    old_servers = _by_name(old_srv.get("servers") if old_srv else None)
    merged = []
    for s in servers:
        entry = _kept(_plain(s), old_servers.get(_plain(s)["name"]), KEEP_SERVER)
        merged.append(emit.Commented(entry, s.comments) if isinstance(s, emit.Commented) else entry)
    head = {k: old_srv[k] for k in KEEP_SERVERS if old_srv and k in old_srv}
    return doc, merged, head


def build(snap: Snapshot, sites: Sequence[str], *, all_statuses: bool = False,
          existing: Mapping[str, Sequence[Any]] | None = None,
          custom: Mapping[str, str] | None = None) -> dict[str, str]:
    """The files of an import: one per site (its Facility and Servers) and the models used.
    `existing`: the documents of the files an earlier import wrote, by file name, whose
    fields NetBox has no place for (KEEP_*) are kept. `custom`: device custom field ->
    the server field it fills (checker.yaml `netbox.custom_fields`)."""
    existing = existing or {}
    custom = custom or {}
    p = _Problems(snap.url)
    found_sites = {s["slug"]: s for s in snap.lists["dcim/sites"]}
    missing = sorted(set(sites) - set(found_sites))
    if missing:
        raise p.fail(f"no site with slug '{missing[0]}'")
    types = {t["id"]: t for t in snap.lists["dcim/device-types"]}
    templates: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for tpl in snap.lists["dcim/power-port-templates"]:
        dtype = _id(tpl.get("device_type"))
        if dtype is not None:
            templates[dtype].append(tpl)
    ports_of, ports = _power_ports(snap)
    outlets = {o["id"]: o for o in snap.lists["dcim/power-outlets"]}
    distribution = {_id(o.get("device")) for o in outlets.values()}
    models = _models(snap, types, templates)

    racks: dict[int, dict[str, Any]] = {r["id"]: r for r in snap.lists["dcim/racks"]}
    feeds = {f["id"]: f for f in snap.lists["dcim/power-feeds"]}
    panel_site = {panel["id"]: _id(panel.get("site")) for panel in snap.lists["dcim/power-panels"]}
    feeds_of: dict[int, list[dict[str, Any]]] = defaultdict(list)
    loose_feeds: dict[int, list[str]] = defaultdict(list)
    for feed in feeds.values():
        rack = _id(feed.get("rack"))
        if rack is None:
            site_id = panel_site.get(_id(feed.get("power_panel")) or -1)
            loose_feeds[site_id or -1].append(str(feed.get("name")))
        elif rack not in racks:
            where = feed["rack"].get("name") or f"id {rack}"
            raise p.fail(f"power feed '{feed.get('name')}' feeds rack {where}, which NetBox did not list")
        else:
            feeds_of[rack].append(feed)

    used_models: set[str] = set()
    files: dict[str, str] = {}
    header = [
        f"{marker(SOURCE)} from {snap.url} (NetBox {snap.version}).",
        "Re-run the import to update it: it keeps what you add that NetBox has no field for (docs/netbox.md)",
        "and overwrites the rest. Keep your own files (waivers, workloads) beside it.",
    ]
    devices_by_site: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for device in snap.lists["dcim/devices"]:
        devices_by_site[_id(device.get("site")) or -1].append(device)
    for slug in sorted(found_sites):
        site = found_sites[slug]
        site_racks = sorted((r for r in racks.values() if _id(r.get("site")) == site["id"]),
                            key=lambda r: str(r["name"]))
        rack_names = _unique_names(p, (str(r["name"]) for r in site_racks), f"rack of site {slug}")
        rack_name = dict(zip((r["id"] for r in site_racks), rack_names, strict=True))
        facility = _facility(p, site, site_racks, rack_name, feeds_of)
        servers, notes = _servers(
            p, devices_by_site[site["id"]], rack_name, racks, feeds, ports_of, ports, outlets,
            distribution, models, templates, all_statuses, custom,
        )
        used_models.update(str((s.value if isinstance(s, emit.Commented) else s)["model"]) for s in servers)
        if loose_feeds.get(site["id"]):
            loose = ", ".join(sorted(loose_feeds[site["id"]]))
            notes.append(f"power feeds without a rack, not imported: {loose}")
        fac_name = _name(slug)
        fac_doc, servers, head = _keep_local(facility[0], servers, existing.get(f"{fac_name}.yaml", ()))
        complete = "power" in fac_doc and "cooling" in fac_doc
        comments = [c for c in facility[1] if not (complete and c.startswith(("TODO", "Until", "(info")))]
        docs = [
            emit.document(fac_doc, comments),
            emit.document({"kind": "Servers", "facility": fac_name, **head, "servers": servers}, notes),
        ]
        files[f"{fac_name}.yaml"] = emit.stream(header, docs)
    if used_models:
        entries = [models[m][0] for m in sorted(used_models)]
        doc = emit.document({"kind": "ServerModels", "servers": entries})
        files[MODELS_FILE] = emit.stream(header, [doc])
    return files


def _unique_names(p: _Problems, names: Iterable[str], what: str) -> list[str]:
    out = [_name(n) for n in names]
    twice = sorted(n for n, c in Counter(out).items() if c > 1)
    if twice:
        raise p.fail(f"two of {what} are both named '{twice[0]}'")
    return out


def _facility(
    p: _Problems,
    site: Mapping[str, Any],
    site_racks: Sequence[Mapping[str, Any]],
    rack_name: Mapping[int, str],
    feeds_of: Mapping[int, Sequence[Mapping[str, Any]]],
) -> tuple[dict[str, Any], list[str]]:
    comments = [
        f"NetBox site {site.get('name')} (id {site['id']}, status {_v(site.get('status'))}).",
        "TODO power.it_capacity_kw (the UPS) and cooling (the room): NetBox has no field for them.",
        "Until they are given here (a re-import keeps them), the UPS and room-cooling checks are skipped",
        "(info findings say so). Rack cooling (air unless given) and cooling_kw are not in NetBox either.",
    ]
    doc: dict[str, Any] = {"kind": "Facility", "name": _name(str(site["slug"]))}
    if site.get("name"):
        doc["location"] = str(site["name"])
    rack_list = []
    for rack in site_racks:
        entry: dict[str, Any] = {"name": rack_name[rack["id"]]}
        if rack.get("u_height"):
            entry["u_height"] = int(rack["u_height"])
        unit = rack.get("weight_unit")
        for field, key in (("weight", "weight_kg"), ("max_weight", "max_weight_kg")):
            kg = _kg(rack.get(field), unit)
            if kg is not None:
                entry[key] = kg
        feeds = sorted((_feed(p, f) for f in feeds_of.get(rack["id"], ())), key=lambda f: str(f[0]["name"]))
        _unique_names(p, (str(f[0]["name"]) for f in feeds), f"the feeds of rack {entry['name']}")
        if feeds:
            two_sides = {f[0]["side"] for f in feeds} == {"A", "B"}
            entry["redundancy"] = "2N" if two_sides else "N"
            if not two_sides:  # sides mean A/B failover; a rack fed from one side has none
                for feed, _ in feeds:
                    del feed["side"]
            entry["feeds"] = [emit.Commented(f[0], f[1]) for f in feeds]
        status = _v(rack.get("status"))
        notes = [f"NetBox rack id {rack['id']}" + (f", status {status}" if status != "active" else "")]
        rack_list.append(emit.Commented(entry, tuple(notes)))
    doc["racks"] = rack_list
    return doc, comments


def _feed(p: _Problems, feed: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    name = _name(str(feed.get("name")))
    for field in ("voltage", "amperage"):
        if feed.get(field) in (None, 0):
            raise p.fail(f"power feed '{name}' has no {field}")
    supply = _v(feed.get("supply"))
    phase = 3 if _v(feed.get("phase")) == "three-phase" and supply != "dc" else 1
    volts, amps = abs(float(feed["voltage"])), float(feed["amperage"])
    util = int(feed.get("max_utilization") or 80)
    side = _SIDES.get(str(_v(feed.get("type"))), "A")
    out = {"name": name, "side": side, "voltage": _number(volts), "amps": _number(amps), "phase": phase,
           "max_utilization": util}
    kw = volts * amps * util / 100 * (math.sqrt(3) if phase == 3 else 1) / 1000
    note = f"{name}: {kw:.1f} kW available (V x A x max_utilization{' x sqrt 3' if phase == 3 else ''})"
    status = _v(feed.get("status"))
    if status != "active":
        note += f"; status {status}"
    if supply == "dc":
        note += "; DC"
    return out, (note,)


def _models(
    snap: Snapshot,
    types: Mapping[int, Mapping[str, Any]],
    templates: Mapping[int, Sequence[Mapping[str, Any]]],
) -> dict[str, tuple[dict[str, Any], int]]:
    """Every device type as a catalog entry, by its inventory model name."""
    out: dict[str, tuple[dict[str, Any], int]] = {}
    slugs = Counter(str(t["slug"]) for t in types.values())
    for dtype in sorted(types.values(), key=lambda t: t["id"]):
        maker = dtype.get("manufacturer") or {}
        slug = str(dtype["slug"])
        name = f"netbox-{slug}" if slugs[slug] == 1 else f"netbox-{maker.get('slug')}-{slug}"
        entry: dict[str, Any] = {"name": _name(name)}
        entry["description"] = f"{maker.get('name')} {dtype.get('model')}".strip()
        if maker.get("name"):
            entry["vendor"] = str(maker["name"])
        entry["source"] = f"{snap.url}/dcim/device-types/{dtype['id']}/ (NetBox {snap.version})"
        height = float(dtype.get("u_height") or 0)
        if height >= 1 and height.is_integer():
            entry["u_height"] = int(height)
        kg = _kg(dtype.get("weight"), dtype.get("weight_unit"))
        if kg is not None:
            entry["weight_kg"] = kg
        tpls = templates.get(dtype["id"], ())
        draw = _draw(tpls)
        if draw is not None:
            entry["power_w"] = draw
        if tpls:
            entry["psu"] = {"count": len(tpls)}
        out[entry["name"]] = (entry, dtype["id"])
    return out


def _draw(ports: Sequence[Mapping[str, Any]]) -> dict[str, int | float] | None:
    """Max and typical draw: the sums of the ports' maximum_draw and allocated_draw (W)."""
    if not ports or any(not port.get("maximum_draw") for port in ports):
        return None
    draw: dict[str, int | float] = {"max": _number(sum(float(port["maximum_draw"]) for port in ports))}
    if all(port.get("allocated_draw") for port in ports):
        typical = _number(sum(float(port["allocated_draw"]) for port in ports))
        if typical <= draw["max"]:
            draw["typical"] = typical
    return draw


def _servers(
    p: _Problems,
    devices: Sequence[Mapping[str, Any]],
    rack_name: Mapping[int, str],
    racks: Mapping[int, Mapping[str, Any]],
    feeds: Mapping[int, Mapping[str, Any]],
    ports_of: Mapping[int, Sequence[Mapping[str, Any]]],
    ports: Mapping[int, Mapping[str, Any]],
    outlets: Mapping[int, Mapping[str, Any]],
    distribution: set[int | None],
    models: Mapping[str, tuple[dict[str, Any], int]],
    templates: Mapping[int, Sequence[Mapping[str, Any]]],
    all_statuses: bool,
    custom: Mapping[str, str],
) -> tuple[list[Any], list[str]]:
    model_of = {dtype_id: name for name, (_, dtype_id) in models.items()}
    skipped: dict[str, list[str]] = defaultdict(list)
    servers: list[tuple[str, Any]] = []
    names: set[str] = set()
    for device in sorted(devices, key=lambda d: d["id"]):
        label = str(device.get("name") or f"(unnamed, id {device['id']})")
        status = str(_v(device.get("status")))
        rack = _id(device.get("rack"))
        if status in EXCLUDED_STATUSES and not all_statuses:
            skipped[f"status {status} (--all-statuses imports them)"].append(label)
            continue
        if not device.get("name"):
            skipped["no name"].append(label)
            continue
        if rack is None:
            skipped["not in a rack"].append(label)
            continue
        if rack not in rack_name:
            where = device["rack"].get("name") or f"id {rack}"
            raise p.fail(f"device '{label}' is in rack {where}, which NetBox did not list for its site")
        if device["id"] in distribution:
            skipped["power distribution (it has power outlets)"].append(label)
            continue
        own = ports_of.get(device["id"], ())
        if not own:
            skipped["no power ports"].append(label)
            continue
        dtype = _id(device.get("device_type"))
        model = model_of.get(dtype or -1)
        if model is None:
            raise p.fail(f"device '{label}' has device type id {dtype}, which NetBox did not list")
        entry: dict[str, Any] = {"name": _name(label), "model": model, "rack": rack_name[rack]}
        base = models[model][0]
        draw = _draw(own)
        if draw is None and "power_w" not in base:
            skipped["TODO no maximum_draw on its power ports (give power_w)"].append(label)
            continue
        if entry["name"] in names:
            raise p.fail(f"two devices are both named '{entry['name']}'")
        names.add(entry["name"])
        notes: list[str] = []
        position = device.get("position")
        if position is not None:
            entry["position"] = max(1, math.floor(float(position)))
            if not float(position).is_integer():
                notes.append(f"NetBox position {position}: U{entry['position']} here")
        if draw is not None and draw != base.get("power_w"):
            entry["power_w"] = draw
        _custom_fields(p, device, label, entry, custom)
        psu: dict[str, Any] = {}
        if len(own) != base.get("psu", {}).get("count"):
            psu["count"] = len(own)
        cabled, note = _cabling(own, ports, outlets, feeds, rack)
        if cabled:
            psu["feeds"] = cabled
        if note:
            notes.append(note)
        if psu:
            entry["psu"] = psu
        if status != "active":
            notes.insert(0, f"status {status}")
        servers.append((entry["name"], emit.Commented(entry, tuple(notes)) if notes else entry))
    comments = [f"not imported, {why}: {', '.join(sorted(who))}" for why, who in sorted(skipped.items())]
    return [s for _, s in sorted(servers, key=lambda s: s[0])], comments


def _custom_fields(
    p: _Problems, device: Mapping[str, Any], label: str, entry: dict[str, Any], custom: Mapping[str, str]
) -> None:
    """Fill the server fields checker.yaml maps device custom fields to; a value the field
    does not take is bad input, reported here rather than by the audit."""
    values = device.get("custom_fields") or {}
    filled: dict[str, str] = {}
    for field, target in custom.items():  # in checker.yaml's order
        value = values.get(field)
        if isinstance(value, dict):  # an object or a choice: its value, else its name
            value = value.get("value", value.get("name"))
        if value is None or value == "":
            continue
        if target == "support.until" and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = dt.date.fromisoformat(value)
        *steps, last = target.split(".")
        node = entry
        for step in steps:
            node = node.setdefault(step, {})
        node[last] = value
        filled[target] = field
    if not filled:
        return
    tops = {target.split(".")[0] for target in filled}
    probe = {"name": entry["name"], "rack": entry["rack"], **{k: entry[k] for k in tops}}
    try:
        m.Server.model_validate(probe)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(step) for step in error["loc"])
        field = next((f for t, f in filled.items() if loc.startswith(t)), "?")
        _, message, _ = describe_error(error, m.Server)
        raise p.fail(f"device '{label}': custom field {field}: {message}") from None


def _cabling(
    own: Sequence[Mapping[str, Any]],
    ports: Mapping[int, Mapping[str, Any]],
    outlets: Mapping[int, Mapping[str, Any]],
    feeds: Mapping[int, Mapping[str, Any]],
    rack: int,
) -> tuple[dict[str, Any] | None, str | None]:
    """psu.feeds from the cable paths, when every PSU reaches a feed of the device's rack."""
    traced = [_feed_of(port, ports, outlets) for port in own]
    reached = [(feeds[t[0]], t[1]) for t in traced if t is not None and t[0] in feeds]
    ours = [(f, leg) for f, leg in reached if _id(f.get("rack")) == rack]
    if not reached:
        return None, None
    counts = Counter(_name(str(f["name"])) for f, _ in ours)
    if len(ours) < len(own):
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        return None, (
            f"TODO {len(ours)} of {len(own)} PSUs have a cable path to a feed of this rack"
            f"{f' ({shown})' if shown else ''}; the rest are not cabled in NetBox, so the PSUs are"
            " spread over the feeds"
        )
    out: dict[str, Any] = {}
    for name in sorted(counts):
        on = [(f, leg) for f, leg in ours if _name(str(f["name"])) == name]
        feed = on[0][0]
        three = _v(feed.get("phase")) == "three-phase" and _v(feed.get("supply")) != "dc"
        line_to_neutral = abs(float(feed.get("voltage") or 0)) / math.sqrt(3) >= LINE_TO_NEUTRAL_MIN_V
        legs = [leg for _, leg in on]
        if three and line_to_neutral and all(leg in ("A", "B", "C") for leg in legs):
            by_phase = Counter(LINE_TO_NEUTRAL["ABC".index(str(leg))] for leg in legs)
            out[name] = dict(sorted(by_phase.items()))
        else:
            out[name] = len(on)
    return out, None


# ---------------------------------------------------------------- command
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", required=True, help="NetBox's URL (https://netbox.example.com)")
    p.add_argument("--site", action="append", default=[], metavar="SLUG",
                   help="import this site only (repeatable; default: every site)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                   help="folder of the imported inventory: one file per site and netbox-models.yaml")
    p.add_argument("--token-env", default="NETBOX_TOKEN", metavar="VAR",
                   help="environment variable holding the API token (default NETBOX_TOKEN)")
    p.add_argument("--ca-bundle", type=Path, metavar="FILE",
                   help="CA certificates to verify NetBox's TLS with")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="give up on a request after this long (default 30)")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="checker.yaml with a `netbox: {custom_fields: ...}` table (default: as for audit,"
                   " beside the output folder)")
    p.add_argument("--check", action="store_true",
                   help="write nothing: compare the inventory in DIR with NetBox, one line a difference"
                   " (exit 1 when they differ)")
    p.add_argument("--all-statuses", action="store_true",
                   help=f"import devices of every status, {' and '.join(EXCLUDED_STATUSES)} ones too")


def _earlier(folder: Path) -> dict[str, list[Any]]:
    """The documents of the files an earlier import wrote into `folder`, by name."""
    out: dict[str, list[Any]] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.yaml")):
        if is_generated(path, SOURCE):
            try:
                out[path.name] = [d.value for d in parse_text(path.read_text(encoding="utf-8"))]
            except YamlProblem as exc:
                raise UserError(at(display_path(path), exc.line, exc.column, exc.message)) from None
    return out


def run(args: argparse.Namespace) -> tuple[int, list[str]]:
    token = os.environ.get(args.token_env, "")
    if not token:
        raise UserError(f"netbox: no API token: set the environment variable {args.token_env}")
    if args.ca_bundle is not None and not args.ca_bundle.is_file():
        raise UserError(f"{args.ca_bundle}: no such file (--ca-bundle)")
    url = args.url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"netbox: {_public(url)}: not an http:// or https:// URL")
    if not args.timeout > 0:
        raise UserError(f"--timeout {args.timeout:g}: give a number of seconds above 0")
    sites = sorted(set(args.site))
    config, _ = load_config(args.config or find_config([args.output]))
    snap = fetch(url, token, sites, ca_bundle=args.ca_bundle, timeout=args.timeout)
    files = build(snap, sites, all_statuses=args.all_statuses, existing=_earlier(args.output),
                  custom=config.netbox.custom_fields)
    if args.check:
        drift = compare(args.output, files, SOURCE, "NetBox")
        count = f"{len(drift)} difference{'s' if len(drift) != 1 else ''}"
        verdict = f"{count}: as-built differs from the plan" if drift else "in sync"
        return (1 if drift else 0), [*drift, f"checker import netbox --check: {verdict}"]
    written = set(write_files(args.output, files, SOURCE))
    lines = [f"{'wrote' if args.output / name in written else 'unchanged'} {args.output / name}"
             for name in sorted(files)]
    return 0, [*lines, f"next: checker audit {args.output}"]
