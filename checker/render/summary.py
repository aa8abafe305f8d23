"""The key figures and the per-rack feed figures the readiness reports show first.

Plain data for the templates (Markdown and HTML): numbers stay numbers and
user-supplied strings stay raw, so each template formats and escapes them its
own way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from checker.core.findings import Finding


class Extended(Mapping[str, Any]):
    """A fact row with a few figures computed for the report on top of its fields."""

    __slots__ = ("_extra", "_row")

    def __init__(self, row: Mapping[str, Any], extra: Mapping[str, Any]) -> None:
        self._row = row
        self._extra = extra

    def __getitem__(self, key: str) -> Any:
        if key in self._extra:
            return self._extra[key]
        return self._row[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._extra
        yield from (k for k in self._row if k not in self._extra)

    def __len__(self) -> int:
        return len(self._extra) + sum(1 for k in self._row if k not in self._extra)


def _feeds_text(feeds: Sequence[Mapping[str, Any]]) -> str:
    """`A 1 x 16.59 kW, B 1 x 16.59 kW`: the feeds of one rack, counted by side and rating."""
    by_side: dict[str, Counter[float]] = defaultdict(Counter)
    for f in feeds:
        by_side[str(f.get("side") or "")][round(float(f.get("capacity_kw", 0.0)), 2)] += 1
    parts = []
    for side in sorted(by_side):
        ratings = " + ".join(f"{n} x {_num(kw)} kW" for kw, n in sorted(by_side[side].items(), reverse=True))
        parts.append(f"{side} {ratings}" if side else ratings)
    return ", ".join(parts)


def _num(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 1000 else f"{value:,.0f}"


def racks_with_feeds(
    rows: Sequence[Mapping[str, Any]], feeds: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """Rack rows with `feeds_text` (count x rating per side) and `feed_failover_kw`
    (the highest load one of its feeds carries after a failure the rack is designed for)."""
    per_rack: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for f in feeds:
        per_rack[(f.get("facility", ""), f.get("rack", ""))].append(f)
    out: list[Mapping[str, Any]] = []
    for r in rows:
        mine = per_rack.get((r.get("facility", ""), r.get("name", "")), [])
        extra: dict[str, Any] = {}
        if mine:
            extra["feeds_text"] = _feeds_text(mine)
            loads = [f["failover_load_kw"] for f in mine if f.get("failover_load_kw") is not None]
            if loads:
                extra["feed_failover_kw"] = max(loads)
        out.append(Extended(r, extra))
    return out


def risks(groups: Sequence[Any], result_findings: Any, limit: int = 3) -> list[dict[str, Any]]:
    """The top open findings in words: the first of each of the worst rules, with how many more."""
    picked: list[tuple[Finding, int]] = []
    for g in groups:
        if g.open:
            picked.append((g.open[0], len(g.open) - 1))
        if len(picked) == limit:
            break
    shown = result_findings([f for f, _ in picked])
    return [
        {"severity": f.severity, "rule": f.rule, "message": f.message, "file": f.file, "line": f.line,
         "more": more}
        for f, (_, more) in zip(shown, picked, strict=True)
    ]


def _gpus(servers: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    n: Counter[str] = Counter()
    for s in servers:
        if s.get("gpu.model") and s.get("gpu.count"):
            n[s["gpu.model"]] += int(s["gpu.count"]) * int(s.get("trays") or 1)
    return sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))


def key_figures(
    facilities: Sequence[Mapping[str, Any]],
    racks: Sequence[Mapping[str, Any]],
    servers: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The fleet's totals and one row of headline figures per facility."""
    typical: dict[str, float] = defaultdict(float)
    untyped: Counter[str] = Counter()
    dates: dict[str, set[str]] = defaultdict(set)
    for s in servers:
        fac = s.get("facility", "")
        t = s.get("power_w.typical")
        if t is None:
            untyped[fac] += 1
            t = s.get("peak_w") or 0
        typical[fac] += float(t) / 1000
        if s.get("rollout_date"):
            dates[fac].add(str(s["rollout_date"]))
    floor: dict[str, float] = {}
    for r in racks:
        load, limit = r.get("floor_load_kg_per_m2"), r.get("floor_max_kg_per_m2")
        if load is not None and limit:
            fac = r.get("facility", "")
            floor[fac] = max(floor.get(fac, 0.0), float(load) / float(limit) * 100)
    rows = []
    for f in facilities:
        name = f.get("name", "")
        rows.append({
            "name": name,
            "file": f["file"],
            "line": f["line"],
            "servers": f.get("server_count", 0),
            "racks": f.get("rack_count", 0),
            "peak_it_kw": f.get("peak_it_kw"),
            "typical_it_kw": typical.get(name, 0.0),
            "typical_assumed": untyped.get(name, 0),
            "ups_pct": f.get("ups_utilization_pct"),
            "ups_kw": f.get("it_capacity_kw"),
            "cooling_pct": f.get("cooling_utilization_pct"),
            "cooling_kw": f.get("cooling_usable_kw"),
            "cooling_redundancy": f.get("cooling.redundancy"),
            "floor_pct": floor.get(name),
            "floor_limit": f.get("floor_max_kg_per_m2"),
            "pue": f.get("projected_pue"),
            "pue_target": f.get("pue_target"),
            "energy_mwh": f.get("energy_mwh_per_year"),
            "energy_cost": f.get("energy_cost_per_year"),
            "currency": f.get("currency"),
            "it_load_basis": f.get("it_load_basis"),
            "rollout": sorted(dates.get(name, ())),
        })
    rollout = sorted({d for ds in dates.values() for d in ds})
    gpus = _gpus(servers)
    return {
        "facilities": rows,
        "servers": len(servers),
        "racks": len(racks),
        "gpus": gpus,
        "gpu_total": sum(n for _, n in gpus),
        "rollout": rollout,
    }
