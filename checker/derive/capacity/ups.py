"""UPS blocks: what each block carries, with every block up and after each
single-block failure the facility's UPS is designed for.

The topologies are those of Schneider Electric White Paper 75 ("Comparing UPS
System Design Configurations"):

- N: one system, or blocks that each carry their own racks; no failure is
  designed for, so a block is checked in normal operation only.
- N+1: modules in parallel on one bus, sharing the load by rating; any one
  module may fail, so the bus keeps the total less that module (the largest,
  at worst), and each remaining module carries the load in proportion.
- 2N (system plus system) and distributed (block redundant, "3-make-2"): each
  feed says which block it is on (`feeds[].ups`); when a block fails, every
  rack with a feed on it loses those feeds, and its servers' PSUs on the
  other feeds carry their whole draw (feeds.py), which lands on the blocks
  those feeds are on. Only a map from rack sides to blocks finds the block
  that two others both lean on.
- catcher (isolated redundant): a reserve block takes over a failed block
  through static switches: the reserve carries the largest primary's load.

Loads are at peak draw, as the UPS is checked (facilities.py), plus the
cooling that rides on each block (`mechanical_kw`: CDU and chilled-water
pumps, which liquid-cooled racks need within seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.feeds import FeedArrays, Pairs, Rows, Scenarios, group_failures
from checker.derive.capacity.servers import F64, IDX, NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.load.build import Inventory, placed_fields

UPS_COLUMNS = (
    Column("capacity_kw", "kW", "the block's output rating (power.ups.blocks[].capacity_kw)"),
    Column(
        "redundancy", "", "its facility's power.ups.redundancy: N, N+1, 2N, distributed, catcher", "string"
    ),
    Column(
        "it_load_kw",
        "kW",
        "peak IT draw on it with every block up: what the feeds named to it carry (2N, distributed,"
        " catcher, N with blocks), else the facility's peak_it_kw shared by rating",
    ),
    Column("load_kw", "kW", "it_load_kw + mechanical_kw (the cooling that rides on it)"),
    Column("utilization_pct", "%", "load_kw / capacity_kw x 100"),
    Column(
        "failover_load_kw",
        "kW",
        "its largest load after one other block fails (N+1: the module's share of the bus without"
        " it; 2N, distributed: the racks of the failed block move to their other feeds; catcher:"
        " the reserve takes the largest primary); none in N",
    ),
    Column("failover_utilization_pct", "%", "failover_load_kw / capacity_kw x 100"),
    Column("failover_case", "", "the failure behind failover_load_kw: block NAME", "string"),
    Column(
        "mechanical_stops_kw",
        "kW",
        "2N, distributed: the cooling on it (mechanical_kw) that stops when it fails, neither moved to"
        " another block (mechanical_transfer_to) nor backed by other pumps (mechanical_redundant); else 0",
    ),
)

RACK_COLUMNS = (
    Column("ups_blocks", "", "UPS blocks its feeds are on (facilities whose feeds name their block)"),
    Column(
        "ups_failover_short_servers",
        "",
        "in a 2N or distributed UPS: its servers whose live PSUs deliver less than their peak draw"
        " (none live included) after the worst single-block failure",
    ),
    Column(
        "ups_failover_case", "", "the block failure behind ups_failover_short_servers: block NAME", "string"
    ),
)

FACILITY_CAPACITY_DOC = (
    "power.it_capacity_kw; with power.ups, its blocks' capacity for the designed failure: N the sum;"
    " N+1 and distributed the sum less the largest block; 2N the smaller block; catcher the primaries'"
    " sum"
)


@dataclass(frozen=True)
class Blocks:
    facility: IDX
    kw: F64
    reserve: npt.NDArray[np.bool_]
    mechanical: F64
    redundancy: npt.NDArray[Any]
    name: npt.NDArray[Any]
    transfer: IDX  # the block its mechanical load moves to when it fails (-1: none)
    backed: npt.NDArray[np.bool_]  # other pumps carry the flow without its own (mechanical_redundant)


def block_arrays(inv: Inventory) -> Blocks:
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    blocks = [p.value for p in inv.ups_blocks.values()]
    redundancy = {
        name: p.value.power.ups.redundancy
        for name, p in inv.facilities.items()
        if p.value.power is not None and p.value.power.ups is not None
    }
    index = {key: i for i, key in enumerate(inv.ups_blocks)}
    transfer = [
        index.get((fac, b.mechanical_transfer_to), -1) if b.mechanical_transfer_to else -1
        for (fac, _), b in zip(inv.ups_blocks, blocks, strict=True)
    ]
    return Blocks(
        np.asarray([fac_index[fac] for fac, _ in inv.ups_blocks], dtype=np.intp),
        np.asarray([b.capacity_kw for b in blocks], dtype=np.float64),
        np.asarray([b.reserve for b in blocks], dtype=bool),
        np.asarray([b.mechanical_kw for b in blocks], dtype=np.float64),
        np.asarray([redundancy[fac] for fac, _ in inv.ups_blocks], dtype=object),
        np.asarray([name for _, name in inv.ups_blocks], dtype=object),
        np.asarray(transfer, dtype=np.intp),
        np.asarray([b.mechanical_redundant for b in blocks], dtype=bool),
    )


def facility_capacity(inv: Inventory, b: Blocks) -> tuple[F64, F64]:
    """Each facility's UPS capacity for its designed failure, and the mechanical
    load its blocks carry (0 without blocks)."""
    n = len(inv.facilities)
    declared = [p.value.power.it_capacity_kw if p.value.power else None for p in inv.facilities.values()]
    capacity = np.asarray([NAN if v is None else v for v in declared], dtype=np.float64)
    mechanical = np.bincount(b.facility, weights=b.mechanical, minlength=n).astype(np.float64)
    for i in np.unique(b.facility).tolist():
        mine = b.facility == i
        kw, redundancy = b.kw[mine], str(b.redundancy[mine][0])
        capacity[i] = {
            "N": kw.sum(),
            "N+1": kw.sum() - kw.max(),
            "distributed": kw.sum() - kw.max(),
            "2N": kw.min(),
            "catcher": kw[~b.reserve[mine]].sum(),
        }[redundancy]
    return capacity, mechanical


def feed_blocks(inv: Inventory, b: Blocks) -> IDX:
    """The block each feed is on: the one it names, else the one its panel is fed
    from, else its facility's only block (-1: none, or modules of an N+1 bus,
    which no feed names)."""
    index = {key: i for i, key in enumerate(inv.ups_blocks)}
    only = {fac: i for (fac, _), i in index.items() if int(np.sum(b.facility == b.facility[i])) == 1}
    out = []
    on_panels, on_blocks = placed_fields(list(inv.feeds.values()), "panel", "ups")
    for (fac, _, _), on_panel, on_block in zip(inv.feeds, on_panels, on_blocks, strict=True):
        panel = inv.panels.get((fac, on_panel)) if on_panel is not None else None
        named = on_block if on_block is not None else panel.value.ups if panel is not None else None
        out.append(index.get((fac, named), -1) if named is not None else only.get(fac, -1))
    return np.asarray(out, dtype=np.intp)


def ups_table(
    inv: Inventory,
    f: FeedArrays,
    p: Pairs,
    s: ServerArrays,
    feed_load_kw: F64,
) -> tuple[Table[tuple[str, str]], dict[str, npt.NDArray[Any]], tuple[F64, F64]]:
    """The block table, the RACK_COLUMNS, and each facility's UPS capacity and
    mechanical load (facility_capacity)."""
    b = block_arrays(inv)
    n = len(inv.facilities)
    facility_peak_kw = np.bincount(s.facility, weights=s.peak_w / 1000.0, minlength=n).astype(np.float64)
    n_blocks, n_racks = len(b.kw), len(inv.racks)
    on = feed_blocks(inv, b)
    fed = on >= 0
    mapped_it = np.bincount(on[fed], weights=np.nan_to_num(feed_load_kw[fed]), minlength=n_blocks)
    # N+1 modules share the bus by rating; so does a facility's only block, which
    # carries every server of the facility, on a feed or not.
    per_facility = np.bincount(b.facility, weights=b.kw, minlength=len(facility_peak_kw))
    blocks_of = np.bincount(b.facility, minlength=len(facility_peak_kw))
    bus = (b.redundancy == "N+1") | (blocks_of[b.facility] == 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        shared = facility_peak_kw[b.facility] * b.kw / per_facility[b.facility]
    it = np.where(bus, shared, mapped_it).astype(np.float64)
    load = it + b.mechanical
    failover, case, racks = _failovers(inv, f, p, s, b, on, feed_load_kw, load, n_racks)
    moving = np.isin(b.redundancy, ("2N", "distributed"))
    stops = np.where(moving & (b.transfer < 0) & ~b.backed, b.mechanical, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns: dict[str, npt.NDArray[Any]] = {
            "capacity_kw": b.kw,
            "redundancy": b.redundancy,
            "it_load_kw": it,
            "load_kw": load,
            "utilization_pct": 100.0 * load / b.kw,
            "failover_load_kw": failover,
            "failover_utilization_pct": 100.0 * failover / b.kw,
            "failover_case": case,
            "mechanical_stops_kw": stops,
        }
    return Table(list(inv.ups_blocks), UPS_COLUMNS, columns), racks, facility_capacity(inv, b)


def _failovers(
    inv: Inventory,
    f: FeedArrays,
    p: Pairs,
    s: ServerArrays,
    b: Blocks,
    on: IDX,
    feed_load_kw: F64,
    load: F64,
    n_racks: int,
) -> tuple[F64, npt.NDArray[Any], dict[str, npt.NDArray[Any]]]:
    n_blocks = len(b.kw)
    failover, case = np.full(n_blocks, NAN), np.full(n_blocks, None, dtype=object)
    # N+1: module i without module j carries the bus's load x kw_i / (sum - kw_j).
    for i in np.flatnonzero(b.redundancy == "N+1").tolist():
        peers = np.flatnonzero((b.facility == b.facility[i]) & (np.arange(n_blocks) != i))
        total, bus_kw = load[b.facility == b.facility[i]].sum(), b.kw[b.facility == b.facility[i]].sum()
        shares = total * b.kw[i] / (bus_kw - b.kw[peers])
        j = int(np.argmax(shares))
        failover[i], case[i] = shares[j], f"block {b.name[peers[j]]}"
    # Catcher: a reserve takes the largest primary of its facility as well.
    for i in np.flatnonzero(b.reserve).tolist():
        primaries = np.flatnonzero((b.facility == b.facility[i]) & ~b.reserve)
        j = primaries[int(np.argmax(load[primaries]))]
        failover[i], case[i] = load[i] + load[j], f"block {b.name[j]}"
    racks: dict[str, npt.NDArray[Any]] = {
        "ups_blocks": groups_per_rack(f, on, n_racks, n_blocks),
        "ups_failover_short_servers": np.full(n_racks, NAN),
        "ups_failover_case": np.full(n_racks, None, dtype=object),
    }
    # 2N and distributed: each block's failure, rack by rack, through the feeds,
    # and the cooling a failed block's transfer switch moves to another block.
    if not n_blocks:
        return failover, case, racks
    moved = np.zeros(n_blocks * n_blocks)
    sent = np.flatnonzero(b.transfer >= 0)
    np.add.at(moved, sent * n_blocks + b.transfer[sent], b.mechanical[sent])
    moving = (on >= 0) & np.isin(b.redundancy[np.maximum(on, 0)], ("2N", "distributed"))
    if moving.any():
        racks |= _moved_it(p, f, s, b, on, n_racks, moved)
    after = load[None, :] + moved.reshape(n_blocks, n_blocks)  # [failed X, block Y]
    same = b.facility[:, None] == b.facility[None, :]
    designed = np.isin(b.redundancy, ("2N", "distributed"))
    valid = same & designed[:, None] & ~np.eye(n_blocks, dtype=bool)
    after = np.where(valid, after, -np.inf)
    worst = np.argmax(after, axis=0)
    has = valid.any(axis=0)
    failover[has] = after[worst[has], np.flatnonzero(has)]
    case[has] = [f"block {name}" for name in b.name[worst[has]].tolist()]
    return failover, case, racks


def _moved_it(
    p: Pairs, f: FeedArrays, s: ServerArrays, b: Blocks, on: IDX, n_racks: int, moved: F64
) -> dict[str, npt.NDArray[Any]]:
    """Adds to `moved` ([failed X x block Y], flat) the IT load each block failure
    moves onto each other block through the racks' feeds; the racks' short servers."""
    moving = (on >= 0) & np.isin(b.redundancy[np.maximum(on, 0)], ("2N", "distributed"))
    cases = np.asarray([f"block {name}" for name in b.name.tolist()], dtype=object)
    kw, sc, rows = group_failures(p, f, s, np.where(moving, on, -1), cases, on, len(b.kw), n_racks)
    moved += kw.reshape(-1)
    short, cases = short_servers(s, sc, rows, n_racks)
    return {"ups_failover_short_servers": short, "ups_failover_case": cases}


def groups_per_rack(f: FeedArrays, on: IDX, n_racks: int, n_blocks: int) -> F64:
    """How many groups (UPS blocks, panels) each rack's feeds are on (`on[feed]`,
    -1: none); NaN for a rack none of whose feeds is on one."""
    fed = on >= 0
    pairs = np.unique(f.rack[fed].astype(np.int64) * max(n_blocks, 1) + on[fed])
    count = np.bincount((pairs // max(n_blocks, 1)).astype(np.intp), minlength=n_racks).astype(np.float64)
    has_feeds = np.bincount(f.rack[fed], minlength=n_racks) > 0
    return np.where(has_feeds, count, NAN)


def short_servers(
    s: ServerArrays, sc: Scenarios, rows: Rows, n_racks: int
) -> tuple[F64, npt.NDArray[Any]]:
    """Per rack, the most servers left short of their peak draw by one group's
    failure (a UPS block, a panel): live PSUs x rating below peak (no PSU live:
    short, whatever the rating), and that failure's case."""
    n_servers = len(s.rack)
    server = rows.groups % max(n_servers, 1)
    scenario = rows.groups // max(n_servers, 1)
    rating = np.asarray([q.rating_w if q and q.rating_w else NAN for q in s.psu_parts], dtype=np.float64)
    kept = rows.live_psus * rating[s.psu[server]]
    short = (rows.live_psus == 0) | (kept < s.peak_w[server])
    per_scenario = np.bincount(scenario, weights=short, minlength=len(sc.rack))
    out = np.full(n_racks, NAN)
    cases = np.full(n_racks, None, dtype=object)
    order = np.lexsort((np.arange(len(sc.rack)), -per_scenario, sc.rack))
    first = np.concatenate(([True], sc.rack[order][1:] != sc.rack[order][:-1])) if len(order) else order
    pick = order[first.astype(bool)] if len(order) else order
    out[sc.rack[pick]] = per_scenario[pick]
    picked = zip(sc.case[pick].tolist(), per_scenario[pick].tolist(), strict=True)
    cases[sc.rack[pick]] = [c if n > 0 else None for c, n in picked]
    return out, cases


