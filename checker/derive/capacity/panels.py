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

from dataclasses import dataclass
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
    group_moves,
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
    Column(
        "phase_capacity_kw", "kW",
        "three-phase panels with single-phase feeds: capacity_kw / 3, what one line carries",
    ),
    Column(
        "worst_phase_load_kw",
        "kW",
        "three-phase panels with single-phase feeds, with every feed up or after another panel or"
        " a UPS block fails: the"
        " least its most loaded line carries whichever lines"
        " its single-phase feeds are wired to (some line holds a third of them, rounded up, and"
        " the largest; line-to-line feeds as the line-to-neutral kW of their current; a three-phase"
        " feed its own least loaded line on each)",
    ),
    Column("worst_phase_pct", "%", "worst_phase_load_kw / phase_capacity_kw x 100"),
    Column("worst_phase_case", "", "when: every feed up | panel NAME | UPS block NAME", "string"),
)

@dataclass(frozen=True)
class Failures:
    """Failures that each take a group of feeds down (the other panels, a UPS's blocks):
    feed g is lost in failure fails[g] (-1: in none), its load moving to its rack's
    other feeds, or down[g], its servers going down with it; failure x is named
    cases[x], and can befall panel y where allowed[x, y]."""

    fails: IDX
    down: IDX  # feed g goes dark in failure down[g] with nothing moved (a rack designed to lose nothing)
    cases: npt.NDArray[Any]
    allowed: npt.NDArray[np.bool_]


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
    feed_loads: tuple[F64, F64],
    redundancy: npt.NDArray[Any],
    designed: tuple[Scenarios, Rows],
) -> tuple[Table[Any], dict[str, npt.NDArray[Any]]]:
    """The panel table, and the racks' RACK_COLUMNS. `feed_loads`: each feed's
    load_kw and, three-phase, its least loaded line (feeds.Loads)."""
    feed_load_kw, lightest = feed_loads
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
    each = np.nan_to_num(feed_load_kw)
    failover, case, failures = _failover(p, f, s, inv, facility, tolerant, of, (load, each), n_racks)
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
            **_lines(inv, of, (each, lightest), figures[:, 0], figures[:, 3], kw,
                     (p, f, s, n_racks, failures)),
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
    loads: tuple[F64, F64],
    n_racks: int,
) -> tuple[F64, npt.NDArray[Any], list[Failures]]:
    """Each panel's worst load over its facility's single failures of a panel or a
    UPS block, and that failure; NaN / None where its facility designs for none (one
    panel, no 2N or distributed UPS). Only the feeds of racks designed to lose
    feeds (`tolerant`) move load when they fail; the others' feeds on a failed
    block go dark with it, and their panels carry that much less (`loads`: each
    panel's and each feed's, every feed up). Ties go to the first failure
    listed: the panels, then the UPS blocks."""
    load, feed_load = loads
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
    failing = (on >= 0) & (np.isin(b.redundancy[np.maximum(on, 0)], MOVING) if len(b.kw) else False)
    dark = failing & tolerant
    blocks = np.asarray([f"UPS block {name}" for name in b.name.tolist()], dtype=object)
    moved = np.zeros((len(b.kw), n))
    if dark.any():
        moved, _, _ = group_failures(p, f, s, np.where(dark, on, -1), blocks, of, n, n_racks)
    down = failing & ~tolerant & (of >= 0)
    lost = np.zeros((len(b.kw), n))
    np.add.at(lost, (on[down], of[down]), feed_load[down])
    after.append(load[None, :] + moved - lost)
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
    none = np.full(len(of), -1, dtype=np.intp)
    failures = [Failures(np.where(tolerant, of, -1), none, cases, valid[0]),
                Failures(np.where(dark, on, -1), np.where(down, on, -1), blocks, valid[1])]
    return failover, case, failures


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


def _least_heaviest(group: IDX, load: F64, n: int) -> F64:
    """Per group of single-phase feeds (`group[i]`, -1: none) dealt over three
    lines (or line pairs): the least load the heaviest of the three carries,
    whichever way they are dealt. Some line holds ceil(k/3) of the k feeds, so
    at least the ceil(k/3) smallest; and one holds the largest. A floor, never
    an estimate: over it, no wiring of these feeds keeps every line in."""
    keep = group >= 0
    g, x = group[keep], load[keep]
    out = np.zeros(n)
    if not len(g):
        return out
    order = np.lexsort((x, g))
    g, x = g[order], x[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    counts = np.diff(np.append(starts, len(g)))
    rank = np.arange(len(g)) - np.repeat(starts, counts)
    fewest = np.repeat(-(-counts // 3), counts)  # ceil(k / 3)
    smallest = np.bincount(g[rank < fewest], weights=x[rank < fewest], minlength=n)
    largest = np.zeros(n)
    largest[g[starts + counts - 1]] = x[starts + counts - 1]
    return np.maximum(smallest, largest)


def _lines(
    inv: Inventory,
    of: IDX,
    loads: tuple[F64, F64],
    voltage: F64,
    phase: F64,
    kw: F64,
    failed: tuple[Pairs, FeedArrays, ServerArrays, int, list[Failures]],
) -> dict[str, npt.NDArray[Any]]:
    """The phase columns of each three-phase panel: its heaviest line's floor with
    every feed up and after each failure of another panel or a UPS block (the
    feeds' loads then as the failure leaves them, feeds.group_failures). A
    single-phase feed on it is wired line to neutral where its voltage is nearer
    V / sqrt 3 than V (230 V off 400 V, 120 V off 208 V), else line to line (208 V
    off 208 V): its current then loads two lines, I = P / V each, which is P /
    sqrt 3 of line-to-neutral kW; the line a pair loads carries at least that
    pair's current (the other currents on it are within 90 degrees). A
    three-phase feed puts on each line at least its own least loaded line with
    every feed up (feeds._phases), whichever way it is rotated, in phase with
    the line-to-neutral feeds where its PSUs are line to neutral too; after a
    failure at least that much where it survives (its load only grows), none
    where it is lost; a three-phase feed wired line to line counts for none (its
    currents are 30 degrees off: a floor cannot add them to the others)."""
    load, lightest = loads
    n = len(kw)
    three = phase == 3
    feeds = [placed.value for placed in inv.feeds.values()]
    fv = np.asarray([x.voltage for x in feeds], dtype=np.float64)
    fp = np.asarray([x.phase for x in feeds], dtype=np.float64)
    on = (of >= 0) & three[np.maximum(of, 0)] if len(of) else np.zeros(0, dtype=bool)
    v = voltage[np.maximum(of, 0)] if len(of) else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        line_to_line = np.abs(np.log(fv / v)) < np.abs(np.log(fv * np.sqrt(3.0) / v))
    single = on & (fp != 3)
    ln_group = np.where(single & ~line_to_line, of, -1)
    ll_group = np.where(single & line_to_line, of, -1)
    three_feed = on & (fp == 3) & failed[1].line_to_neutral
    least = np.nan_to_num(lightest)

    def floor(feed_load: F64, line: F64, of_panel: npt.NDArray[np.bool_]) -> F64:
        """The floor of each panel, from the feeds `of_panel` selects (the others' panels: 0)."""
        three_on = three_feed & of_panel
        balanced = np.bincount(of[three_on], weights=line[three_on], minlength=n)
        ln = _least_heaviest(np.where(of_panel, ln_group, -1), feed_load, n)
        ll = _least_heaviest(np.where(of_panel, ll_group, -1), feed_load, n)
        out: F64 = np.maximum(balanced + ln, ll / np.sqrt(3.0))
        return out

    worst = floor(load, least, on)
    case = np.full(n, "every feed up", dtype=object)
    # Without single-phase feeds no failure raises the floor: a three-phase feed counts
    # its every-feed-up lightest line in every state, or nothing where it is lost.
    if single.any():
        p, f, s, n_racks, failures = failed
        n_feeds = len(of)
        for group in failures:
            if not (group.fails >= 0).any():
                continue
            keys, moves = group_moves(p, f, s, group.fails, group.cases, n_racks)
            failure, feed = keys // max(n_feeds, 1), keys % max(n_feeds, 1)
            for x in np.unique(failure).tolist():
                changed, by = feed[failure == x], moves[failure == x]
                now = load.copy()
                now[changed] += by
                dark = group.down == x
                now[dark] = 0.0
                gone = dark.copy()
                gone[changed[by < -1e-9]] = True  # lost: its load moved away
                # Only the panels the failure moved load onto can have a higher floor.
                touched = np.zeros(n, dtype=bool)
                touched[of[changed][of[changed] >= 0]] = True
                of_panel = on & touched[np.maximum(of, 0)]
                after = floor(now, np.where(gone, 0.0, least), of_panel)
                after = np.where(group.allowed[x] & touched, after, -np.inf)
                worse = after > worst
                worst, case = np.where(worse, after, worst), np.where(worse, group.cases[x], case)
    # Only single-phase feeds make a line carry more than its share: with none, the
    # floor is at most a third of the panel's own load, and the figure would say less
    # than failover_load_kw does.
    shown = three & (np.bincount(of[single], minlength=n) > 0)
    capacity = np.where(shown, kw / 3.0, NAN)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(capacity > 0, 100.0 * worst / capacity, NAN)
    return {
        "phase_capacity_kw": capacity,
        "worst_phase_load_kw": np.where(shown, worst, NAN),
        "worst_phase_pct": np.where(shown, pct, NAN),
        "worst_phase_case": np.where(shown, case, np.full(n, None, dtype=object)),
    }
