"""Panels: the distribution many racks' feeds share between the UPS and the
racks, each behind one upstream breaker (power.panels): a panelboard or remote
power panel, a floor PDU's output, or an overhead busway whose tap-offs are the
feeds. Every feed and rack can be within its rating while the busway they all
hang from is not, most of all when the other side's busway fails and every
rack's servers draw their whole load from this side.

A panel is rated as a feed is (NetBox's formula, feeds.feed_kw). Its load is
the sum of its feeds' load at peak draw (feeds.py, as feeds are checked); its
failover load the worst after one single failure of its facility:

- each other panel failing: its feeds are lost;
- each UPS block of a 2N or distributed UPS failing: the feeds on it are lost
  (ups.py: an N+1 bus keeps its total, a catcher's reserve takes a block whole,
  N designs no failure);
- each rack's own designed failure (a side of a 2N rack, one feed of an N+1
  rack: feeds.scenarios): a panel holding the surviving side's feeds takes
  what the lost side carried, wherever that side was fed from.

Either way the racks' servers' PSUs on the surviving feeds carry their whole
draw, shared equally (feeds.group_failures, the same computation as a UPS
block's failure). Only racks designed to lose feeds (2N, N+1) move load: an N
rack's servers that lose a feed go down with it, and put nothing on the
other panels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.feeds import (
    FeedArrays,
    Pairs,
    Rows,
    Scenarios,
    feed_kw,
    group_failures,
    moved_onto,
)
from checker.derive.capacity.servers import F64, IDX, NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.derive.capacity.ups import block_arrays, feed_blocks, groups_per_rack
from checker.load.build import Inventory

PANEL_COLUMNS = (
    Column(
        "capacity_kw", "kW", "V x A x max_utilization/100 x (sqrt 3 if three-phase) x PF / 1000, as a feed"
    ),
    Column("feed_count", "", "the feeds on it (feeds[].panel)"),
    Column("rack_count", "", "the racks those feeds power"),
    Column("load_kw", "kW", "the sum of its feeds' load_kw: their servers' peak draw with every feed up"),
    Column("utilization_pct", "%", "load_kw / capacity_kw x 100"),
    Column(
        "failover_load_kw",
        "kW",
        "its largest load after one other panel of its facility fails, or one block of a 2N or"
        " distributed UPS, or one rack's designed failure (a side, an N+1 feed): the racks' servers'"
        " PSUs on the surviving feeds carry their whole draw",
    ),
    Column("failover_utilization_pct", "%", "failover_load_kw / capacity_kw x 100"),
    Column(
        "failover_case", "",
        "the failure behind failover_load_kw: panel NAME | UPS block NAME | rack NAME side A (or B)"
        " | rack NAME feed NAME",
        "string",
    ),
)

# The UPS designs whose single-block failure loses the feeds on the block (ups.py).
MOVING = ("2N", "distributed")


RACK_COLUMNS = (
    Column("panels", "", "panels its feeds are on (feeds[].panel; absent: none of them names one)"),
    Column(
        "panel_single_point",
        "",
        "the first panel whose failure takes more than the rack is designed to lose: feeds of both"
        " sides of a 2N rack, or two or more feeds of an N+1 rack",
        "string",
    ),
)


def panel_table(
    inv: Inventory,
    f: FeedArrays,
    p: Pairs,
    s: ServerArrays,
    feed_load_kw: F64,
    redundancy: npt.NDArray[Any],
    designed: tuple[Scenarios, Rows],
) -> tuple[Table[Any], dict[str, npt.NDArray[Any]]]:
    """The panel table, and the racks' RACK_COLUMNS."""
    keys = list(inv.panels)
    n, n_racks = len(keys), len(inv.racks)
    racks_out: dict[str, npt.NDArray[Any]] = {
        "panels": np.full(n_racks, NAN),
        "panel_single_point": np.full(n_racks, None, dtype=object),
    }
    if not n:
        return Table(keys, PANEL_COLUMNS, {c.name: np.zeros(0) for c in PANEL_COLUMNS}), racks_out
    panels = [placed.value for placed in inv.panels.values()]
    figures = np.asarray(
        [(x.voltage, x.amps, x.max_utilization, x.phase, x.power_factor) for x in panels], dtype=np.float64
    ).reshape(-1, 5)
    kw = feed_kw(*figures.T)
    fac_index = {name: i for i, name in enumerate(inv.facilities)}
    facility = np.asarray([fac_index[fac] for fac, _ in keys], dtype=np.intp)
    index = {key: i for i, key in enumerate(keys)}
    of = np.asarray(
        [index.get((fac, placed.value.panel or ""), -1) for (fac, _, _), placed in inv.feeds.items()],
        dtype=np.intp,
    )
    on = of >= 0
    load = np.bincount(of[on], weights=np.nan_to_num(feed_load_kw[on]), minlength=n).astype(np.float64)
    racks = np.unique(of[on].astype(np.int64) * max(n_racks, 1) + f.rack[on]) // max(n_racks, 1)
    tolerant = np.isin(redundancy, ("2N", "N+1"))[f.rack] if len(f.rack) else np.zeros(0, dtype=bool)
    failover, case = _failover(p, f, s, inv, facility, tolerant, of, load, n_racks)
    failover, case = _rack_failures(inv, p, designed, of, load, failover, case)
    racks_out["panels"] = groups_per_rack(f, of, n_racks, n)
    racks_out["panel_single_point"] = _single_points(f, of, redundancy, keys, n_racks)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns: dict[str, npt.NDArray[Any]] = {
            "capacity_kw": kw,
            "feed_count": np.bincount(of[on], minlength=n).astype(np.float64),
            "rack_count": np.bincount(racks.astype(np.intp), minlength=n).astype(np.float64),
            "load_kw": load,
            "utilization_pct": 100.0 * load / kw,
            "failover_load_kw": failover,
            "failover_utilization_pct": 100.0 * failover / kw,
            "failover_case": case,
        }
    return Table(keys, PANEL_COLUMNS, columns), racks_out


def _single_points(
    f: FeedArrays, of: IDX, redundancy: npt.NDArray[Any], keys: list[tuple[str, str]], n_racks: int
) -> npt.NDArray[Any]:
    """Per rack, the first panel (in the facility's order) whose failure is beyond its
    design: it holds feeds of both sides of a 2N rack, or two or more of an N+1
    rack's feeds, which are sized to lose one (None: no such panel)."""
    on = np.flatnonzero(of >= 0)
    pair = f.rack[on].astype(np.int64) * len(keys) + of[on]
    side_a = np.zeros(n_racks * len(keys), dtype=bool)
    side_b = np.zeros(n_racks * len(keys), dtype=bool)
    side_a[pair[f.side[on] == "A"]] = True
    side_b[pair[f.side[on] == "B"]] = True
    feeds = np.bincount(pair, minlength=n_racks * len(keys)).reshape(n_racks, len(keys))
    both = (side_a & side_b).reshape(n_racks, len(keys))
    beyond = np.where((redundancy == "2N")[:, None], both, (redundancy == "N+1")[:, None] & (feeds >= 2))
    first = np.argmax(beyond, axis=1)
    out = np.full(n_racks, None, dtype=object)
    hit = beyond.any(axis=1)
    out[hit] = [keys[i][1] for i in first[hit].tolist()]
    return out


def _failover(
    p: Pairs,
    f: FeedArrays,
    s: ServerArrays,
    inv: Inventory,
    facility: IDX,
    tolerant: npt.NDArray[np.bool_],
    of: IDX,
    load: F64,
    n_racks: int,
) -> tuple[F64, npt.NDArray[Any]]:
    """Each panel's worst load over its facility's single failures of a panel or a
    UPS block, and that failure; NaN / None where its facility designs for none (one
    panel, no 2N or distributed UPS). Only the feeds of racks designed to lose
    feeds (`tolerant`) move load when they fail. Ties go to the first failure
    listed: the panels, then the UPS blocks."""
    n = len(load)
    names = [name for _, name in inv.panels]
    after: list[F64] = []
    valid: list[npt.NDArray[np.bool_]] = []
    # Every other panel of the facility.
    cases = np.asarray([f"panel {name}" for name in names], dtype=object)
    moved = np.zeros((n, n))
    if (of >= 0).any():
        moved, _, _ = group_failures(p, f, s, np.where(tolerant, of, -1), cases, of, n, n_racks)
    after.append(load[None, :] + moved)
    valid.append((facility[:, None] == facility[None, :]) & ~np.eye(n, dtype=bool))
    # Every block of a 2N or distributed UPS.
    b = block_arrays(inv)
    on = feed_blocks(inv, b)
    dark = (on >= 0) & tolerant & (np.isin(b.redundancy[np.maximum(on, 0)], MOVING) if len(b.kw) else False)
    blocks = np.asarray([f"UPS block {name}" for name in b.name.tolist()], dtype=object)
    moved = np.zeros((len(b.kw), n))
    if dark.any():
        moved, _, _ = group_failures(p, f, s, np.where(dark, on, -1), blocks, of, n, n_racks)
    after.append(load[None, :] + moved)
    valid.append((b.facility[:, None] == facility[None, :]) & np.isin(b.redundancy, MOVING)[:, None])
    every = np.concatenate(after)
    allowed = np.concatenate(valid)
    labels = np.concatenate((cases, blocks))
    every = np.where(allowed, every, -np.inf)
    worst = np.argmax(every, axis=0)
    has = allowed.any(axis=0)
    failover, case = np.full(n, NAN), np.full(n, None, dtype=object)
    failover[has] = every[worst[has], np.flatnonzero(has)]
    case[has] = labels[worst[has]]
    return failover, case


def _rack_failures(
    inv: Inventory,
    p: Pairs,
    designed: tuple[Scenarios, Rows],
    of: IDX,
    load: F64,
    failover: F64,
    case: npt.NDArray[Any],
) -> tuple[F64, npt.NDArray[Any]]:
    """`failover` and `case` where a rack's own designed failure (feeds.scenarios)
    puts more on a panel: a 2N rack losing the side that is not on the panel puts
    that side's draw on it. Worked out over the (scenario, panel) pairs that move
    load only: a dense scenarios x panels table would be racks x panels large."""
    sc, rows = designed
    n = len(load)
    if not len(sc.rack):
        return failover, case
    key, moved = moved_onto(p, rows, rows.scen.astype(np.int64), of, n)
    if not len(key):
        return failover, case
    panel, scenario = (key % n).astype(np.intp), (key // n).astype(np.intp)
    after = load[panel] + moved
    # Each panel's worst pair: the highest load, then the first scenario listed.
    order = np.lexsort((scenario, -after, panel))
    first = np.concatenate(([True], panel[order][1:] != panel[order][:-1]))
    pick = order[first]
    better = ~(after[pick] <= failover[panel[pick]])  # NaN (no failure designed yet): this one
    worse = pick[better]
    failover, case = failover.copy(), case.copy()
    failover[panel[worse]] = after[worse]
    racks = list(inv.racks)
    lost_racks, lost_cases = sc.rack[scenario[worse]].tolist(), sc.case[scenario[worse]].tolist()
    case[panel[worse]] = [f"rack {racks[r][1]} {c}" for r, c in zip(lost_racks, lost_cases, strict=True)]
    return failover, case
