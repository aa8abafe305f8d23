"""Feeds: each feed's own load, in normal operation and after every failure its
rack is designed for, and what each server keeps when a feed fails.

Feed capacity is NetBox's formula (netbox/dcim/models/power.py, PowerFeed.save):
kW = V x A x max_utilization/100 x (sqrt(3) for three-phase) / 1000, refined
by the power factor.

A rack's capacity (racks.py) pools its feeds; a breaker trips on its own load.
A server's redundant PSUs share its draw equally, whatever feed each is plugged
into (the current-sharing of redundant supplies), so a feed carries, of each
server on it, the share of that server's live PSUs it feeds. Which PSU goes to
which feed is `psu.feeds` where the inventory says; otherwise a side's PSUs (in
a rack without sides, all of them) are spread as evenly as whole PSUs allow,
the odd ones on the weakest feeds, and the odd PSU of an uneven 2N split on the
weaker side: the worst case of an even cabling. The failures a rack is designed
for: either side in 2N, any one feed in N+1, none in N.

Everything is computed at once with numpy over (scenario, server, feed) rows:
a scenario is one rack's normal operation or one of its designed failures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.servers import F64, IDX, NAN, ServerArrays, at, psu_map
from checker.derive.capacity.table import Column, Table
from checker.load import models as m
from checker.load.build import Inventory, placed_fields, server_fields

FEED_COLUMNS = (
    Column("capacity_kw", "kW", "V x A x max_utilization/100 x (sqrt 3 if three-phase) x PF / 1000"),
    Column("psu_count", "", "PSUs cabled to it (psu.feeds or psu_order, else spread evenly, odd ones weak)"),
    Column("load_kw", "kW", "its share of its servers' peak draw with every feed up (equal PSU sharing)"),
    Column("utilization_pct", "%", "load_kw / capacity_kw x 100"),
    Column(
        "failover_load_kw",
        "kW",
        "its largest load after a failure its rack is designed for (2N: either side; N+1: any other feed)",
    ),
    Column("failover_utilization_pct", "%", "failover_load_kw / capacity_kw x 100"),
    Column("failover_case", "", "the failure behind failover_load_kw: side A | side B | feed NAME", "string"),
    Column(
        "phase_capacity_kw",
        "kW",
        "three-phase feeds: capacity_kw / 3, what one line carries of a balanced load",
    ),
    Column(
        "worst_phase_load_kw",
        "kW",
        "the most loaded line, with every feed up or after a designed failure: single-phase PSUs"
        " on the phase psu.feeds gives, the others dealt over the three phases (line to line on"
        " 208 V systems) as evenly as whole PSUs allow, the heaviest first (a server without"
        " `psu` a balanced load)",
    ),
    Column("worst_phase_pct", "%", "worst_phase_load_kw / phase_capacity_kw x 100"),
    Column("worst_phase_case", "", "when: every feed up | side A | side B | feed NAME", "string"),
    Column(
        "psu_voltage_v",
        "V",
        "the voltage a single-phase PSU on it sees: single-phase, the feed's voltage; three-phase,"
        " line to neutral (V / sqrt 3) where that is >= 200 V (400/415 V), else line to line (208 V)",
    ),
    # So a rule can tell a feed over on its own from a rack over as a whole
    # (power.rack-capacity), which is one finding, on the rack.
    Column("rack_utilization_pct", "%", "utilization_pct of the feed's rack (after a failure)", context=True),
)

SERVER_COLUMNS = (
    Column(
        "psu_side_w",
        "W",
        "2N racks: what its PSUs still deliver when a side fails (failover_psu_w): those psu.feeds"
        " or psu_order put on its smaller side, else psu.per_side (else count // 2), x rating",
    ),
    Column(
        "psu_side_pct", "%", "psu_side_w / peak_w x 100: the share of peak draw that survives a side loss"
    ),
    Column(
        "failover_psu_w",
        "W",
        "what its PSUs still deliver after the worst failure its rack is designed for "
        "(2N: a side; N+1: any one feed): live PSUs x psu.rating_w",
    ),
    Column("failover_psu_pct", "%", "failover_psu_w / peak_w x 100: the share of peak draw that survives"),
    Column("failover_psu_case", "", "the failure behind failover_psu_w: side A | side B | feed X", "string"),
    # So a one-fact rule can hold them against psu.input_v (power.psu-input-voltage).
    Column(
        "psu_voltage_min_v",
        "V",
        "the lowest psu_voltage_v of the feeds its PSUs are on (psu.feeds where given, else every feed"
        " of its rack); three-phase PSUs (psu.phase: 3) see the feeds' line-to-line voltage",
        context=True,
    ),
    Column("psu_voltage_max_v", "V", "the highest psu_voltage_v of those feeds", context=True),
    Column(
        "psu_input_v_unverified",
        "",
        "psu.input_v is the catalog's, and the catalog marks it unverified",
        "boolean",
        context=True,
    ),
)


def feed_kw(voltage: F64, amps: F64, utilization: F64, phase: F64, power_factor: F64) -> F64:
    three_phase = np.where(phase == 3, np.sqrt(3.0), 1.0)
    kw: F64 = voltage * amps * (utilization / 100.0) * three_phase * power_factor / 1000.0
    return kw


@dataclass(frozen=True)
class FeedArrays:
    kw: F64
    rack: IDX
    side: npt.NDArray[Any]  # "A", "B" or ""
    name: npt.NDArray[Any]
    # Three-phase, with single-phase PSUs between a line and neutral (400/415 V
    # and up: 230/240 V a phase); on a 208 V feed they are wired line to line.
    line_to_neutral: npt.NDArray[np.bool_]
    # The voltage across a PSU on the feed: line to neutral where the PSUs are
    # wired so, else the feed's own voltage (single-phase, or line to line).
    psu_voltage: F64
    three_phase: npt.NDArray[np.bool_]


RATINGS = ("voltage", "amps", "max_utilization", "phase", "power_factor")  # what feed_kw reads, in order


def feed_arrays(inv: Inventory, rack_index: dict[tuple[str, str], int]) -> FeedArrays:
    *ratings, sides, feed_names = placed_fields(list(inv.feeds.values()), *RATINGS, "side", "name")
    voltage, amps, utilization, phase, power_factor = (np.asarray(c, dtype=np.float64) for c in ratings)
    kw = feed_kw(voltage, amps, utilization, phase, power_factor)
    rack = np.asarray([rack_index[(fac, r)] for fac, r, _ in inv.feeds], dtype=np.intp)
    side = np.asarray([s or "" for s in sides], dtype=object)
    line_to_neutral = (phase == 3) & (voltage / np.sqrt(3.0) >= m.LINE_TO_NEUTRAL_MIN_V)
    psu_voltage = np.where(line_to_neutral, voltage / np.sqrt(3.0), voltage)
    names = np.asarray(feed_names, dtype=object)
    return FeedArrays(kw, rack, side, names, line_to_neutral, psu_voltage, phase == 3)


@dataclass(frozen=True)
class AtsArrays:
    """Each rack's transfer switches: what they switch between, and their capacity
    (their rating on the primary feed's voltage, phases, derating and power factor)."""

    rack: IDX
    primary: IDX  # feed indices
    secondary: IDX
    kw: F64
    name: npt.NDArray[Any]


def ats_arrays(inv: Inventory, rack_index: dict[tuple[str, str], int]) -> AtsArrays:
    feed_index = {key: i for i, key in enumerate(inv.feeds)}
    rows = []
    (switches,) = placed_fields(list(inv.racks.values()), "ats")
    for key, ats in zip(inv.racks, switches, strict=True):
        for a in ats:
            ends = [(*key, a.primary), (*key, a.secondary)]
            if all(end in feed_index for end in ends):  # else a schema error says so
                rows.append((rack_index[key], feed_index[ends[0]], feed_index[ends[1]], a))
    primary = [g for _, g, _, _ in rows]
    amps = np.asarray([a.amps for *_, a in rows], dtype=np.float64)
    ratings = placed_fields(list(inv.feeds.values()), *RATINGS) if rows else [[] for _ in RATINGS]
    voltage, _, utilization, phase, power_factor = (np.asarray(c, dtype=np.float64)[primary] for c in ratings)
    kw = feed_kw(voltage, amps, utilization, phase, power_factor)
    return AtsArrays(
        np.asarray([r for r, _, _, _ in rows], dtype=np.intp),
        np.asarray([g for _, g, _, _ in rows], dtype=np.intp),
        np.asarray([g for _, _, g, _ in rows], dtype=np.intp),
        kw,
        np.asarray([a.name for _, _, _, a in rows], dtype=object),
    )


# ---------------------------------------------------------------- cabling
# A rack's feeds as the cabling sees them: (name, side, capacity kW) in rack order.
Layout = tuple[tuple[str, str, float], ...]
# A server's cabling: (connection of its rack, phase, PSUs) for each place it
# has PSUs, the connection counted over the rack's feeds and then its
# switches, the phase 0-2 where psu.feeds gives it (-1: dealt, or none).
Cabling = tuple[tuple[int, int, int], ...]
PHASE_INDEX = {p: i for names in (m.LINE_TO_NEUTRAL, m.LINE_TO_LINE) for i, p in enumerate(names)}


def cabling(layout: Layout, two_n: bool, count: int, per_side: int | None) -> tuple[int, ...]:
    """PSUs on each feed of the layout, where the inventory does not say."""
    sides = {s for _, s, _ in layout}
    if not (two_n and {"A", "B"} <= sides):
        return _spread(count, [kw for _, _, kw in layout])
    small = per_side if per_side is not None else count // 2
    side_kw = {s: sum(kw for _, side, kw in layout if side == s) for s in ("A", "B")}
    weak = min(("A", "B"), key=lambda s: (side_kw[s], s))  # the odd PSU goes to the weaker side
    counts = {s: count - small if s == weak else small for s in ("A", "B")}
    out = [0] * len(layout)
    for s in ("A", "B"):
        where = [i for i, (_, side, _) in enumerate(layout) if side == s]
        for i, n in zip(where, _spread(counts[s], [layout[i][2] for i in where]), strict=True):
            out[i] = n
    return tuple(out)


def _spread(count: int, kws: Sequence[float]) -> tuple[int, ...]:
    """`count` PSUs over feeds as evenly as whole PSUs allow, the odd ones on the weakest."""
    if not kws:
        return ()
    base, odd = divmod(count, len(kws))
    weakest = sorted(range(len(kws)), key=lambda i: (kws[i], i))[:odd]
    return tuple(base + (i in weakest) for i in range(len(kws)))


# ---------------------------------------------------------------- scenarios
@dataclass(frozen=True)
class Scenarios:
    """Every rack's designed failures: scenario s is rack `rack[s]` with the feeds
    `lost` (rows of (scenario, feed)) down; `case[s]` names it."""

    rack: IDX
    case: npt.NDArray[Any]
    lost: npt.NDArray[np.int64]  # sorted keys scenario * feeds + feed


def scenarios(redundancy: npt.NDArray[Any], f: FeedArrays) -> Scenarios:
    n_racks, n_feeds = len(redundancy), len(f.kw)
    has = {s: np.zeros(n_racks, dtype=bool) for s in ("A", "B")}
    for s in ("A", "B"):
        has[s][f.rack[f.side == s]] = True
    # 2N: either side of a rack that has both.
    sided = np.flatnonzero((redundancy == "2N") & has["A"] & has["B"])
    position = np.full(n_racks, -1, dtype=np.intp)
    position[sided] = np.arange(len(sided))
    on_side = np.flatnonzero((position[f.rack] >= 0) & ((f.side == "A") | (f.side == "B")))
    side_scenario = 2 * position[f.rack[on_side]] + (f.side[on_side] == "B")
    # N+1: any one feed of a rack with two or more.
    counts = np.bincount(f.rack, minlength=n_racks)
    single = np.flatnonzero((redundancy[f.rack] == "N+1") & (counts[f.rack] >= 2))
    rack = np.concatenate((np.repeat(sided, 2), f.rack[single])).astype(np.intp)
    case = np.asarray(
        ["side A", "side B"] * len(sided) + [f"feed {name}" for name in f.name[single].tolist()], dtype=object
    )
    scenario = np.concatenate((side_scenario, 2 * len(sided) + np.arange(len(single)))).astype(np.int64)
    lost = np.sort(scenario * n_feeds + np.concatenate((on_side, single)).astype(np.int64))
    return Scenarios(rack, case, lost)


# ---------------------------------------------------------------- loads
@dataclass(frozen=True)
class Pairs:
    """(server, feed, PSUs) for every PSU connection. A PSU behind a transfer
    switch is on the ATS's primary feed, with its secondary as `backup`."""

    server: IDX
    feed: IDX
    psus: F64
    phase: IDX  # 0-2 where psu.feeds places them, else -1
    each_kw: F64  # what one of them carries with every feed up: its server's peak / PSUs cabled
    backup: IDX  # -1: cabled to the feed itself
    ats: IDX  # -1: not behind an ATS
    mapped: npt.NDArray[np.bool_]  # per server: the inventory says where its PSUs go


def pairs(
    inv: Inventory, f: FeedArrays, a: AtsArrays, redundancy: npt.NDArray[Any], s: ServerArrays
) -> Pairs:
    n_feeds, n_racks = len(f.kw), len(redundancy)
    # Connections: the feeds, then the transfer switches (n_feeds + ATS index).
    conn_rack = np.concatenate((f.rack, a.rack)).astype(np.intp)
    by_conn_rack = np.argsort(conn_rack, kind="stable")  # a rack's feeds, then its switches
    first = np.searchsorted(conn_rack[by_conn_rack], np.arange(n_racks + 1))
    (orders,) = placed_fields(list(inv.racks.values()), "psu_order")
    kind, example = _rack_kinds(f, a, conn_rack, by_conn_rack, first, orders, redundancy)
    names, sides, kws = f.name.tolist(), f.side.tolist(), f.kw.tolist()
    switches = a.name.tolist()
    # The cabling of each server, worked out once per kind of rack and PSU part
    # (servers share one frozen part per distinct content) and once per distinct
    # layout: 25,000 racks of one design are one kind.
    fed = np.zeros(n_racks + 1, dtype=bool)  # the last: no rack (-1)
    fed[:n_racks] = np.bincount(f.rack, minlength=n_racks) > 0
    cabled_here = np.flatnonzero(fed[s.rack])
    n_parts = max(len(s.psu_parts), 1)
    keys, inverse = np.unique(
        kind[s.rack[cabled_here]].astype(np.int64) * n_parts + s.psu[cabled_here], return_inverse=True
    )
    memo: dict[tuple[Any, ...], Cabling] = {}
    cablings: list[Cabling] = []
    said: list[bool] = []
    for k, part in zip((keys // n_parts).tolist(), (keys % n_parts).tolist(), strict=True):
        r = example[k]
        conns = by_conn_rack[first[r] : first[r + 1]].tolist()
        layout = tuple((names[g], sides[g], kws[g]) for g in conns if g < n_feeds)
        extra = tuple(switches[g - n_feeds] for g in conns if g >= n_feeds)
        psu = s.psu_parts[part]
        cabled = psu_map(psu, orders[r])
        cablings.append(_cabling_of(layout, extra, redundancy[r] == "2N", psu, cabled, memo))
        said.append(cabled is not None)
    which = np.full(len(s.rack), -1, dtype=np.intp)
    which[cabled_here] = inverse.reshape(-1)
    # One row per (server, connection of its rack), expanded with numpy.
    placed = np.flatnonzero(which >= 0)
    width = np.asarray([len(c) for c in cablings], dtype=np.intp)
    flat = np.asarray([t for c in cablings for t in c], dtype=np.intp).reshape(-1, 3)
    start = np.concatenate(([0], np.cumsum(width)[:-1])).astype(np.intp)
    lengths = width[which[placed]]
    server = np.repeat(placed, lengths)
    within = np.arange(len(server)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    row = flat[start[which[server]] + within]
    conn = by_conn_rack[first[s.rack[server]] + row[:, 0]]
    phase, psus = row[:, 1], row[:, 2].astype(np.float64)
    ats = np.where(conn >= n_feeds, conn - n_feeds, -1)
    behind = ats >= 0
    feed = conn.copy()
    backup = np.full(len(conn), -1, dtype=np.intp)
    feed[behind] = a.primary[ats[behind]]
    backup[behind] = a.secondary[ats[behind]]
    mapped = np.zeros(len(s.rack), dtype=bool)
    mapped[placed] = np.asarray(said, dtype=bool)[which[placed]] if len(placed) else False
    per_server = np.bincount(server, weights=psus, minlength=len(s.rack))  # PSUs cabled
    with np.errstate(invalid="ignore", divide="ignore"):
        each_kw = s.peak_w[server] / per_server[server] / 1000.0
    return Pairs(server, feed, psus, phase, each_kw, backup, ats, mapped)


def _rack_kinds(
    f: FeedArrays,
    a: AtsArrays,
    conn_rack: IDX,
    by_conn_rack: IDX,
    first: IDX,
    orders: Sequence[Sequence[str] | None],
    redundancy: npt.NDArray[Any],
) -> tuple[IDX, list[int]]:
    """Each rack's kind, and a rack of each kind: racks are of one kind when all
    the cabling reads of them is the same (their feeds' names, sides and kW and
    their switches' names, in order; their psu_order; whether they are 2N), so
    a server's cabling is that of a server of the same PSU part in any rack of
    its kind."""
    n_racks = len(redundancy)
    if not n_racks:
        return np.zeros(0, dtype=np.intp), []
    seen: dict[Any, int] = {}
    triples = zip(f.name.tolist(), f.side.tolist(), f.kw.tolist(), strict=True)
    feeds = [seen.setdefault(t, len(seen)) for t in triples]
    ats = [seen.setdefault(("ats", name), len(seen)) for name in a.name.tolist()]
    codes = np.asarray(feeds + ats, dtype=np.int64)[by_conn_rack]
    counts = np.diff(first)
    width = int(counts.max())
    table = np.full((n_racks, width + 2), -1, dtype=np.int64)
    within = np.arange(len(codes)) - np.repeat(first[:-1], counts)
    table[conn_rack[by_conn_rack], within] = codes
    given: dict[Any, int] = {}
    table[:, width] = [given.setdefault(None if o is None else tuple(o), len(given)) for o in orders]
    table[:, width + 1] = redundancy == "2N"
    _, example, kind = np.unique(table, axis=0, return_index=True, return_inverse=True)
    return kind.reshape(-1).astype(np.intp), example.tolist()


def _cabling_of(
    layout: Layout,
    switches: tuple[str, ...],
    two_n: bool,
    psu: Any,
    cabled: dict[str, int] | None,
    memo: dict[tuple[Any, ...], Cabling],
) -> Cabling:
    """Where a server's PSUs are: on the feeds of the layout, then on the rack's
    switches (only psu.feeds or the rack's psu_order puts a PSU behind an ATS),
    on a phase where psu.feeds gives one."""
    # A server whose PSUs the inventory does not give is taken to have one on
    # each feed (its rack's pooled capacity is checked all the same); a
    # single-corded device says so with `psu: {count: 1}`.
    if cabled is not None:
        given = psu.feeds if psu is not None and psu.feeds is not None else {}
        out: list[tuple[int, int, int]] = []
        for k, name in enumerate([*(name for name, _, _ in layout), *switches]):
            by_phase = given.get(name)
            if isinstance(by_phase, dict):
                out.extend((k, PHASE_INDEX[phase], n) for phase, n in by_phase.items())
            elif cabled.get(name, 0) > 0:
                out.append((k, -1, cabled[name]))
        return tuple(out)
    count, per_side = (psu.count, psu.per_side) if psu is not None else (len(layout), None)
    key = (layout, two_n, count, per_side)
    found = memo.get(key)
    if found is None:
        found = memo[key] = tuple((k, -1, n) for k, n in enumerate(cabling(*key)) if n > 0)
    return found


def _among(keys: npt.NDArray[np.int64], sorted_keys: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """np.isin for keys against an array already sorted: one binary search each, no sort."""
    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    found: npt.NDArray[np.bool_] = sorted_keys[at] == keys
    return found


def _runs(keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], IDX]:
    """_group for keys that come sorted (checked: else _group): each run of equal keys is a group."""
    if len(keys) and not bool(np.all(keys[1:] >= keys[:-1])):
        return _group(keys)
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return keys[first], (np.cumsum(first) - 1).astype(np.intp)


def _group(keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], IDX]:
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, inverse.reshape(-1)


@dataclass(frozen=True)
class Rows:
    """Each scenario with every connection of its rack: the feed a row's PSUs
    draw from there (the secondary, behind an ATS whose primary is down), its
    live PSUs and the kW they carry, and its (scenario, server) group."""

    scen: IDX
    pair: IDX
    feed: IDX
    server: IDX
    live: F64
    carried: F64
    at: IDX  # the row's (scenario, server) group
    groups: npt.NDArray[np.int64]  # scenario * servers + server, per group
    live_psus: F64  # per group


def scenario_rows(p: Pairs, f: FeedArrays, s: ServerArrays, sc: Scenarios) -> Rows:
    """What every connection carries in every scenario: a server's peak draw
    shared equally by its PSUs that are live there."""
    n_feeds, n_servers = len(f.kw), len(s.rack)
    order = np.argsort(f.rack[p.feed], kind="stable")
    pair_rack = f.rack[p.feed][order]
    start = np.searchsorted(pair_rack, sc.rack, side="left")
    end = np.searchsorted(pair_rack, sc.rack, side="right")
    lengths = end - start
    row_scen = np.repeat(np.arange(len(sc.rack)), lengths)
    offsets = np.repeat(start - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    row_pair = order[np.arange(len(row_scen)) + offsets] if len(row_scen) else np.zeros(0, dtype=np.intp)
    row_feed, row_server = p.feed[row_pair], p.server[row_pair]
    down = _among(row_scen.astype(np.int64) * n_feeds + row_feed, sc.lost)
    # Behind an ATS, a PSU whose primary is down draws from the secondary.
    row_backup = p.backup[row_pair]
    switched = down & (row_backup >= 0)
    row_feed = np.where(switched, row_backup, row_feed)
    down[switched] = _among(row_scen[switched].astype(np.int64) * n_feeds + row_backup[switched], sc.lost)
    live = np.where(down, 0.0, p.psus[row_pair])
    # Live PSUs of each server in each scenario.
    # Rows run scenario by scenario, a rack's pairs in server order: these keys come sorted.
    groups, at = _runs(row_scen.astype(np.int64) * n_servers + row_server)
    live_psus: F64 = np.bincount(at, weights=live, minlength=len(groups)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        carried = np.where(live > 0, live * s.peak_w[row_server] / live_psus[at] / 1000.0, 0.0)
    return Rows(row_scen, row_pair, row_feed, row_server, live, carried, at, groups, live_psus)


def group_failures(
    p: Pairs,
    f: FeedArrays,
    s: ServerArrays,
    fails: IDX,
    cases: npt.NDArray[Any],
    lands: IDX,
    n_lands: int,
    n_racks: int,
) -> tuple[F64, Scenarios, Rows]:
    """Failures that each take a group of feeds down at once (a UPS block, a
    panel): feed g is lost in failure `fails[g]` (-1: in none), `cases[x]`
    names failure x. Each rack a failure touches is one scenario, its servers'
    PSUs on the surviving feeds carrying their whole draw (scenario_rows).
    Returns what each failure moves onto each group of `lands` (feed g lands
    on `lands[g]`, -1: on none) as [failure x, group y]: the rows' load where
    they now draw, less what the same PSUs drew with every feed up; and the
    scenarios with their rows."""
    sc, rows, failure = _group_scenarios(p, f, s, fails, cases, n_racks)
    keys, kw = moved_onto(p, rows, failure, lands, n_lands)
    moved = np.zeros(len(cases) * n_lands)
    moved[keys] = kw
    return moved.reshape(len(cases), n_lands), sc, rows


@dataclass(frozen=True)
class Moves:
    """What failures move onto each feed itself, sparse: `keys` failure x n_feeds +
    feed (sorted), `kw` what the feed's load changes by, and `lines` (one row per
    key, ascending) what each line of a three-phase feed carries after the
    failure (0 where none of its PSUs is live; NaN on a single-phase feed)."""

    keys: npt.NDArray[np.int64]
    kw: F64
    lines: F64


def group_moves(
    p: Pairs, f: FeedArrays, s: ServerArrays, fails: IDX, cases: npt.NDArray[Any], n_racks: int
) -> Moves:
    """What group_failures moves onto each feed itself (Moves): a failures x feeds
    table could be large."""
    _, rows, failure = _group_scenarios(p, f, s, fails, cases, n_racks)
    return moves_of(p, f, s, rows, failure)


def moves_of(p: Pairs, f: FeedArrays, s: ServerArrays, rows: Rows, failure: npt.NDArray[np.int64]) -> Moves:
    """Moves of the scenario rows `rows`, each in failure `failure[row]`: a feed
    is in one rack, so its rows in a failure are all its PSUs there."""
    n_feeds = len(f.kw)
    keys, kw = moved_onto(p, rows, failure, np.arange(n_feeds), n_feeds)
    with np.errstate(invalid="ignore", divide="ignore"):
        each = s.peak_w[rows.server] / rows.live_psus[rows.at] / 1000.0
    known = single_phase_psus(s)
    every, sums = _line_loads(f, rows.feed, rows.live, each, known[rows.server], p.phase[rows.pair], failure)
    feed = keys % max(n_feeds, 1)
    lines = np.where(f.three_phase[feed], 0.0, NAN)[:, None].repeat(3, axis=1)
    lines[np.searchsorted(keys, every)] = np.sort(sums, axis=1)
    return Moves(keys, kw, lines)


def single_phase_psus(s: ServerArrays) -> npt.NDArray[np.bool_]:
    """Per server: its PSUs are single-phase ones the inventory gives. Three-phase
    PSUs (power shelves) draw evenly from the three lines, as a server whose PSUs
    the inventory does not give."""
    return np.asarray([p is not None and p.phase == 1 for p in s.psu_parts], dtype=bool)[s.psu]


def _group_scenarios(
    p: Pairs, f: FeedArrays, s: ServerArrays, fails: IDX, cases: npt.NDArray[Any], n_racks: int
) -> tuple[Scenarios, Rows, npt.NDArray[np.int64]]:
    """group_failures' scenarios (one per failure and rack it touches), their rows,
    and each row's failure."""
    n_feeds, width = len(f.kw), max(n_racks, 1)
    lost_feed = np.flatnonzero(fails >= 0)
    pair_key = fails[lost_feed].astype(np.int64) * width + f.rack[lost_feed]
    scenario_keys, scenario_of = np.unique(pair_key, return_inverse=True)
    scenario_of = scenario_of.reshape(-1)
    failed = (scenario_keys // width).astype(np.intp)  # the failure of each scenario
    sc = Scenarios(
        (scenario_keys % width).astype(np.intp),
        np.asarray(cases, dtype=object)[failed],
        np.sort(scenario_of.astype(np.int64) * n_feeds + lost_feed),
    )
    rows = scenario_rows(p, f, s, sc)
    return sc, rows, failed[rows.scen].astype(np.int64)


def moved_onto(
    p: Pairs, rows: Rows, failure: npt.NDArray[np.int64], lands: IDX, n_lands: int
) -> tuple[npt.NDArray[np.int64], F64]:
    """What each failure (`failure[row]`, per scenario row) moves onto each group
    of `lands` (feed g lands on `lands[g]`, -1: on none): the rows' load where they
    now draw, less what the same PSUs drew with every feed up. Sparse: the keys
    failure * n_lands + group that get any, and what they get, summed in row order."""
    normal = np.nan_to_num(p.psus * p.each_kw)
    now, before = lands[rows.feed], lands[p.feed[rows.pair]]
    key = np.concatenate((failure[now >= 0] * n_lands + now[now >= 0],
                          failure[before >= 0] * n_lands + before[before >= 0]))
    weight = np.concatenate((rows.carried[now >= 0], -normal[rows.pair][before >= 0]))
    keys, at = np.unique(key, return_inverse=True)
    summed: F64 = np.bincount(at.reshape(-1), weights=weight, minlength=len(keys)).astype(np.float64)
    return keys.astype(np.int64), summed


@dataclass(frozen=True)
class Loads:
    """What feed_loads works out: the feed columns that come of the loads
    (FEED_COLUMNS but capacity and the rack's utilization), SERVER_COLUMNS,
    each ATS's highest load in % of its capacity (with every feed up or after
    a designed failure), the scenarios and their rows (for the shelves), and
    what each line of each three-phase feed carries with every feed up, ascending
    (for panels: however a feed is rotated, its lines add these to the panel's)."""

    feeds: dict[str, npt.NDArray[Any]]
    servers: dict[str, npt.NDArray[Any]]
    ats_pct: F64
    scenarios: Scenarios
    rows: Rows
    line_kw: F64  # (feeds, 3)


def feed_loads(
    inv: Inventory, f: FeedArrays, a: AtsArrays, redundancy: npt.NDArray[Any], s: ServerArrays, p: Pairs
) -> Loads:
    """Every feed, server and ATS figure that comes of the loads (Loads)."""
    n_feeds, n_servers = len(f.kw), len(s.rack)
    parts = s.psu_parts
    rating = np.asarray([p.rating_w if p and p.rating_w else NAN for p in parts], dtype=np.float64)[s.psu]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = p.psus * p.each_kw
        psu_count = np.bincount(p.feed, weights=p.psus, minlength=n_feeds)
        load = np.bincount(p.feed, weights=share, minlength=n_feeds)
        feed_cols: dict[str, npt.NDArray[Any]] = {
            "psu_count": psu_count,
            "load_kw": load,
            "utilization_pct": np.where(f.kw > 0, 100.0 * load / f.kw, NAN),
        }
    sc = scenarios(redundancy, f)
    rows = scenario_rows(p, f, s, sc)
    row_scen, row_pair, row_feed, row_server = rows.scen, rows.pair, rows.feed, rows.server
    live, carried, at, groups, live_psus = rows.live, rows.carried, rows.at, rows.groups, rows.live_psus
    feed_groups, feed_at = _group(row_scen.astype(np.int64) * n_feeds + row_feed)
    feed_load: F64 = np.bincount(feed_at, weights=carried, minlength=len(feed_groups)).astype(np.float64)
    feed_of, scen_of = feed_groups % max(n_feeds, 1), feed_groups // max(n_feeds, 1)
    up = ~_among(feed_groups, sc.lost)
    worst_load, worst_case = worst_of(feed_of[up], feed_load[up], sc.case[scen_of[up]], n_feeds, high=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        feed_cols |= {
            "failover_load_kw": worst_load,
            "failover_utilization_pct": np.where(f.kw > 0, 100.0 * worst_load / f.kw, NAN),
            "failover_case": worst_case,
        }
    # Each ATS's load, with every feed up and in each scenario it is up in.
    row_ats = p.ats[row_pair]
    normal_share = np.nan_to_num(share)
    ats_normal = np.bincount(p.ats[p.ats >= 0], weights=normal_share[p.ats >= 0], minlength=len(a.kw))
    through = row_ats >= 0
    ats_groups, ats_at = _group(row_scen[through].astype(np.int64) * max(len(a.kw), 1) + row_ats[through])
    ats_scen = np.bincount(ats_at, weights=carried[through], minlength=len(ats_groups))
    ats_load = ats_normal.astype(np.float64)
    np.maximum.at(ats_load, ats_groups % max(len(a.kw), 1), ats_scen)
    with np.errstate(invalid="ignore", divide="ignore"):
        ats_pct: F64 = np.where(a.kw > 0, 100.0 * ats_load / a.kw, NAN)
    # Phases: every PSU's load, with every feed up (case 0) and in each scenario.
    normal_each = p.each_kw
    with np.errstate(invalid="ignore", divide="ignore"):
        failed_each = s.peak_w[row_server] / live_psus[at] / 1000.0
    known = single_phase_psus(s)
    phase_cols, line_kw = _phases(
        f,
        np.concatenate((p.feed, row_feed)),
        np.concatenate((p.psus, live)),
        np.concatenate((normal_each, failed_each)),
        np.concatenate((known[p.server], known[row_server])),
        np.concatenate((p.phase, p.phase[row_pair])),
        np.concatenate((np.zeros(len(p.feed), dtype=np.intp), 1 + row_scen)),
        np.concatenate((np.asarray(["every feed up"], dtype=object), sc.case)),
    )
    feed_cols |= phase_cols
    # What each server keeps: live PSUs x rating, the lowest over its rack's scenarios.
    server_of, g_scen = groups % max(n_servers, 1), groups // max(n_servers, 1)
    kept_w: F64 = live_psus * rating[server_of]
    low, low_case = worst_of(server_of, kept_w, sc.case[g_scen], n_servers, high=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = 100.0 * low / s.peak_w
    # A 2N rack's designed failures are its sides: the side figures are the
    # failover figures there (one computation, not a second per_side sum).
    racked = s.rack >= 0
    two_n = np.zeros(n_servers, dtype=bool)
    two_n[racked] = redundancy[s.rack[racked]] == "2N"
    server_cols: dict[str, npt.NDArray[Any]] = {
        "psu_side_w": np.where(two_n, low, NAN),
        "psu_side_pct": np.where(two_n, pct, NAN),
        "failover_psu_w": low,
        "failover_psu_pct": pct,
        "failover_psu_case": low_case,
    }
    return Loads(feed_cols, server_cols | _psu_voltages(inv, f, len(redundancy), s, p), ats_pct, sc, rows,
                 line_kw)


def _psu_voltages(
    inv: Inventory, f: FeedArrays, n_racks: int, s: ServerArrays, p: Pairs
) -> dict[str, npt.NDArray[Any]]:
    """The lowest and highest voltage a server's PSUs see: over the feeds
    psu.feeds (or the rack's psu_order) cables them to, else over every feed of
    the rack (any may be used), and whether its input range is one the catalog
    marks unverified."""
    n_servers = len(s.rack)
    # A three-phase PSU (a power shelf) sees the feed's line-to-line voltage.
    three = np.asarray([p is not None and p.phase == 3 for p in s.psu_parts], dtype=bool)[s.psu]
    line_v = np.where(f.line_to_neutral, f.psu_voltage * np.sqrt(3.0), f.psu_voltage)
    figures = {}
    for name, volts in (("single", f.psu_voltage), ("three", line_v)):
        rack_low, rack_high = np.full(n_racks, NAN), np.full(n_racks, NAN)
        np.fmin.at(rack_low, f.rack, volts)  # fmin / fmax skip the NaN start
        np.fmax.at(rack_high, f.rack, volts)
        cabled_low, cabled_high = np.full(n_servers, NAN), np.full(n_servers, NAN)
        np.fmin.at(cabled_low, p.server, volts[p.feed])
        np.fmax.at(cabled_high, p.server, volts[p.feed])
        figures[name] = (
            np.where(p.mapped, cabled_low, at(rack_low, s.rack, NAN)),
            np.where(p.mapped, cabled_high, at(rack_high, s.rack, NAN)),
        )
    return {
        "psu_voltage_min_v": np.where(three, figures["three"][0], figures["single"][0]),
        "psu_voltage_max_v": np.where(three, figures["three"][1], figures["single"][1]),
        "psu_input_v_unverified": _unverified_ranges(inv, s),
    }


def _unverified_ranges(inv: Inventory, s: ServerArrays) -> F64:
    """psu_input_v_unverified: worked out only for servers whose PSUs have a range."""
    ranged = np.asarray([p is not None and p.input_v is not None for p in s.psu_parts], dtype=bool)
    out = np.full(len(s.psu), NAN)
    which = np.flatnonzero(ranged[s.psu]) if len(s.psu_parts) else np.zeros(0, dtype=np.intp)
    entries = list(inv.servers.values())
    wanted = which.tolist()
    psus, names = server_fields([entries[i] for i in wanted], "psu", "model")
    # Once per distinct PSU part and catalog model: a fleet repeats a few.
    memo: dict[tuple[int, str | None], float] = {}
    for i, psu, name in zip(wanted, psus, names, strict=True):
        key = (int(s.psu[i]), name)
        if key not in memo:
            memo[key] = _unverified(inv, psu, name)
        out[i] = memo[key]
    return out


def _unverified(inv: Inventory, psu: m.Psu | None, name: str | None) -> float:
    """1 where a server's psu.input_v is its catalog model's (`name`) and marked
    unverified there, 0 where it is not, NaN without a range."""
    own = psu.input_v if psu else None
    if own is None:
        return NAN
    placed = inv.server_models.get(name) if name else None
    model = placed.value if placed is not None else None
    catalog = model.psu.input_v if model is not None and model.psu else None
    return float(model is not None and "psu.input_v" in model.unverified and catalog == own)


def _phases(
    f: FeedArrays,
    feed: IDX,
    count: F64,
    each_kw: F64,
    known: npt.NDArray[np.bool_],
    phase: IDX,
    case: IDX,
    cases: npt.NDArray[Any],
) -> tuple[dict[str, npt.NDArray[Any]], F64]:
    """The worst phase of each three-phase feed over the cases (rows as
    _line_loads takes them), and what each of its phases carries with every feed
    up (case 0), ascending ((feeds, 3); NaN rows for a single-phase feed).

    Line to line, a line carries the currents of its two pairs 120 degrees
    apart: |I_L1| = sqrt(I_12^2 + I_31^2 + I_12 I_31), for a resistive load;
    the figure is given as the line-to-neutral kW that current would be
    (balanced pairs of P kW each give P a phase, as line to neutral)."""
    n_feeds = len(f.kw)
    every, sums = _line_loads(f, feed, count, each_kw, known, phase, case)
    of_feed, of_case = every % max(n_feeds, 1), every // max(n_feeds, 1)
    l1, l2, l3 = sums[:, 0], sums[:, 1], sums[:, 2]  # line to line: pairs 1-2, 2-3, 3-1
    pairs_on = np.stack([l1**2 + l3**2 + l1 * l3, l1**2 + l2**2 + l1 * l2, l2**2 + l3**2 + l2 * l3])
    lines = np.sqrt(pairs_on) / np.sqrt(3.0)
    heaviest = np.where(f.line_to_neutral[of_feed], sums.max(axis=1), lines.max(axis=0))
    worst, worst_case = worst_of(of_feed, heaviest, cases[of_case], n_feeds, high=True)
    # A three-phase feed with no load: 0 a phase.
    line_kw = np.where(f.three_phase, 0.0, NAN)[:, None].repeat(3, axis=1)
    up = of_case == 0
    line_kw[of_feed[up]] = np.sort(sums[up], axis=1)
    phase_kw = np.where(f.three_phase, f.kw / 3.0, NAN)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "phase_capacity_kw": phase_kw,
            "worst_phase_load_kw": worst,
            "worst_phase_pct": np.where(phase_kw > 0, 100.0 * worst / phase_kw, NAN),
            "worst_phase_case": worst_case,
        }, line_kw


def _line_loads(
    f: FeedArrays,
    feed: IDX,
    count: F64,
    each_kw: F64,
    known: npt.NDArray[np.bool_],
    phase: IDX,
    case: IDX | npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], F64]:
    """What each phase of each three-phase feed carries in each case: keys case x
    n_feeds + feed (sorted) and their (keys, 3) loads. Rows of `count` PSUs of
    `each_kw` on `feed`, in `case`: its single-phase PSUs on the phase psu.feeds
    puts them on (`phase` 0-2), the others dealt over the three phases (line to
    neutral: L1, L2, L3; line to line, on a 208 V system: L1-L2, L2-L3, L3-L1)
    in turn, heaviest first, so the counts split as evenly as whole PSUs allow
    (8 PSUs: 3, 3 and 2) and the heaviest phase gets the heaviest PSUs. A
    server whose PSUs the inventory does not give (`known` false) is taken as
    a balanced load, a third on each phase: nothing says how it is wired."""
    n_feeds = len(f.kw)
    wanted = f.three_phase[feed] & (count > 0) & ~np.isnan(each_kw)
    placed = wanted & (phase >= 0)
    dealt = wanted & known & ~placed
    group = case[dealt].astype(np.int64) * max(n_feeds, 1) + feed[dealt]
    # Rows heaviest first within each (case, feed); a row's PSUs are dealt on
    # from the phase where the one before it stopped, so phase j gets c // 3 of
    # its c PSUs, and one more if j is among the first c % 3 from its start.
    order = np.lexsort((-each_kw[dealt], group))
    group, load, n = group[order], each_kw[dealt][order], count[dealt][order].astype(np.int64)
    first = np.concatenate(([True], group[1:] != group[:-1])) if len(group) else np.zeros(0, dtype=bool)
    before = np.cumsum(n) - n
    start = (before - np.maximum.accumulate(np.where(first, before, 0))) % 3 if len(group) else n
    balanced = wanted & ~known
    spread_key = case[balanced].astype(np.int64) * max(n_feeds, 1) + feed[balanced]
    placed_key = case[placed].astype(np.int64) * max(n_feeds, 1) + feed[placed]
    every, where = _group(np.concatenate((group, spread_key, placed_key)))
    n_dealt, n_spread = len(group), len(group) + len(spread_key)
    sums = np.zeros((len(every), 3))
    for j in range(3):
        on_j = n // 3 + ((j - start) % 3 < n % 3)
        sums[:, j] = np.bincount(where[:n_dealt], weights=on_j * load, minlength=len(every))
    # Only the rows wanted: a server that lost every PSU in a case has no share (NaN).
    spread = np.bincount(where[n_dealt:n_spread], weights=count[balanced] * each_kw[balanced],
                         minlength=len(every))
    sums += (spread / 3.0)[:, None]
    np.add.at(sums, (where[n_spread:], phase[placed]), count[placed] * each_kw[placed])
    return every, sums


def feed_table(
    inv: Inventory, f: FeedArrays, loads: dict[str, npt.NDArray[Any]], rack_utilization: F64
) -> Table[tuple[str, str, str]]:
    columns = {
        "capacity_kw": f.kw,
        **loads,
        "psu_voltage_v": f.psu_voltage,
        "rack_utilization_pct": rack_utilization[f.rack],
    }
    return Table(list(inv.feeds), FEED_COLUMNS, columns)


def worst_of(
    who: IDX, value: F64, case: npt.NDArray[Any], n: int, *, high: bool
) -> tuple[F64, npt.NDArray[Any]]:
    """Per entity, the highest (or lowest) value and its case; NaN / None where none.
    Ties go to the first scenario (the order scenarios are listed in)."""
    out = np.full(n, NAN)
    cases = np.full(n, None, dtype=object)
    known = ~np.isnan(value)
    who, value, case = who[known], value[known], case[known]
    if len(who):
        index = np.arange(len(who))
        order = np.lexsort((index, -value if high else value, who))
        first = np.concatenate(([True], who[order][1:] != who[order][:-1]))
        pick = order[first]
        out[who[pick]] = value[pick]
        cases[who[pick]] = case[pick]
    return out, cases
