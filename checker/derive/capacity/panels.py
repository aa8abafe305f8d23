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
    Moves,
    Pairs,
    Rows,
    Scenarios,
    feed_kw,
    group_moves,
    moves_of,
)
from checker.derive.capacity.servers import F64, IDX, NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.derive.capacity.ups import block_arrays, feed_blocks, groups_per_rack
from checker.load.build import Inventory, placed_fields

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
        "three-phase panels: capacity_kw / 3, what one line carries",
    ),
    Column(
        "worst_phase_load_kw",
        "kW",
        "three-phase panels, with every feed up, after another panel or a UPS"
        " block fails, or after a rack's designed failure: the least its most loaded line carries"
        " whichever lines its feeds are wired to (loads dealt whole over three lines: of the 3j + 1"
        " largest some line holds j + 1, and some line a third of the sum; line-to-line feeds as the"
        " line-to-neutral kW of their current; a three-phase feed its lightest phase on each line and"
        " its two others' excess to deal)",
    ),
    Column("worst_phase_pct", "%", "worst_phase_load_kw / phase_capacity_kw x 100"),
    Column(
        "line_feed_count", "",
        "three-phase panels: its single-phase feeds that name their line (feeds[].line); where every"
        " feed on it does, worst_phase_load_kw is its lines as wired, no floor",
    ),
    Column(
        "worst_phase_case", "",
        "when: every feed up | panel NAME | UPS block NAME | rack NAME side A (or B) | rack NAME feed NAME",
        "string",
    ),
)

@dataclass(frozen=True)
class Failures:
    """Failures that each take a group of feeds down (the other panels, a UPS's blocks):
    a lost feed's load moves to its rack's other feeds (`moves`), or feed g goes dark
    in failure down[g], its servers going down with it; failure x is named cases[x],
    and can befall panel y where allowed[x, y]."""

    down: IDX  # feed g goes dark in failure down[g] with nothing moved (a rack designed to lose nothing)
    cases: npt.NDArray[Any]
    allowed: npt.NDArray[np.bool_]
    moves: Moves | None  # what each failure moves onto each feed (None: no feed is lost in any)


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
    load_kw and, three-phase, what each of its phases carries (feeds.Loads)."""
    feed_load_kw, line_kw = feed_loads
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
    (on_panels,) = placed_fields(list(inv.feeds.values()), "panel")
    of = np.asarray(
        [index.get((fac, panel or ""), -1) for (fac, _, _), panel in zip(inv.feeds, on_panels, strict=True)],
        dtype=np.intp,
    )
    on = of >= 0
    load = np.bincount(of[on], weights=np.nan_to_num(feed_load_kw[on]), minlength=n).astype(np.float64)
    racks = np.unique(of[on].astype(np.int64) * max(n_racks, 1) + f.rack[on]) // max(n_racks, 1)
    tolerant = np.isin(redundancy, ("2N", "N+1"))[f.rack] if len(f.rack) else np.zeros(0, dtype=bool)
    each = np.nan_to_num(feed_load_kw)
    failover, case, failures = _failover(p, f, s, inv, facility, tolerant, of, (load, each), n_racks)
    sc, rows = designed
    rack_moves = moves_of(p, f, s, rows, rows.scen.astype(np.int64))
    failover, case = _rack_failures(inv, (sc, rack_moves), of, load, failover, case)
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
            **_lines(inv, of, (each, line_kw), figures[:, 0], figures[:, 3], kw,
                     (f, failures, (sc, rack_moves))),
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
    panel_moves = _moves(p, f, s, np.where(tolerant, of, -1), cases, n_racks)
    after.append(load[None, :] + _by_panel(panel_moves, of, n, n))
    valid.append((facility[:, None] == facility[None, :]) & ~np.eye(n, dtype=bool))
    # Every block of a 2N or distributed UPS.
    b = block_arrays(inv)
    on = feed_blocks(inv, b)
    failing = (on >= 0) & (np.isin(b.redundancy[np.maximum(on, 0)], MOVING) if len(b.kw) else False)
    dark = failing & tolerant
    blocks = np.asarray([f"UPS block {name}" for name in b.name.tolist()], dtype=object)
    block_moves = _moves(p, f, s, np.where(dark, on, -1), blocks, n_racks)
    down = failing & ~tolerant & (of >= 0)
    lost = np.zeros((len(b.kw), n))
    np.add.at(lost, (on[down], of[down]), feed_load[down])
    after.append(load[None, :] + _by_panel(block_moves, of, len(b.kw), n) - lost)
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
    failures = [Failures(none, cases, valid[0], panel_moves),
                Failures(np.where(down, on, -1), blocks, valid[1], block_moves)]
    return failover, case, failures


def _moves(
    p: Pairs, f: FeedArrays, s: ServerArrays, fails: IDX, cases: npt.NDArray[Any], n_racks: int
) -> Moves | None:
    """feeds.group_moves of the failures that lose a feed (None: none does)."""
    return group_moves(p, f, s, fails, cases, n_racks) if (fails >= 0).any() else None


def _onto_panels(mv: Moves, of: IDX, n: int) -> tuple[npt.NDArray[np.int64], F64]:
    """What each failure moves onto each panel, sparse: its feeds' moves summed by
    the panel they are on, keys failure x n + panel (sorted) and their kW."""
    n_feeds = max(len(of), 1)
    feed = (mv.keys % n_feeds).astype(np.intp)
    on = of[feed] >= 0
    key, at = np.unique((mv.keys // n_feeds)[on] * n + of[feed[on]], return_inverse=True)
    kw: F64 = np.bincount(at.reshape(-1), weights=mv.kw[on], minlength=len(key)).astype(np.float64)
    return key.astype(np.int64), kw


def _by_panel(mv: Moves | None, of: IDX, n_failures: int, n: int) -> F64:
    """_onto_panels as a [failure, panel] table."""
    out = np.zeros(n_failures * n)
    if mv is not None:
        key, kw = _onto_panels(mv, of, n)
        out[key] = kw
    return out.reshape(n_failures, n)


def _rack_failures(
    inv: Inventory,
    designed: tuple[Scenarios, Moves],
    of: IDX,
    load: F64,
    failover: F64,
    case: npt.NDArray[Any],
) -> tuple[F64, npt.NDArray[Any]]:
    """`failover` and `case` where a rack's own designed failure (feeds.scenarios)
    puts more on a panel: a 2N rack losing the side that is not on the panel puts
    that side's draw on it. Worked out over the (scenario, panel) pairs that move
    load only: a dense scenarios x panels table would be racks x panels large."""
    sc, mv = designed
    n = len(load)
    key, moved = _onto_panels(mv, of, n)
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


# A panel's line floors after its failures are worked out over (failure, feed
# on the panel) rows, CHUNK_ROWS at a time; a panel whose failures x feeds pass
# PANEL_ROWS (some 360 2N racks' feeds on one panel, each rack's two designed
# failures touching it: no panelboard or busway has so many circuits) gets the
# floor of its changed feeds and its average line instead, which is lower or
# equal: a floor all the same, in time linear in the moves.
CHUNK_ROWS = 1 << 20
PANEL_ROWS = 1 << 18
# How a feed loads a three-phase panel's lines.
NONE, LINE_NEUTRAL, LINE_LINE, THREE = -1, 0, 1, 2
# A feed's `line`, as an index of its panel's lines or line pairs.
_LINES = {"L1": 0, "L2": 1, "L3": 2, "L1-L2": 0, "L2-L3": 1, "L3-L1": 2}


@dataclass(frozen=True)
class Wiring:
    """The feeds of the three-phase panels with a feed the floor counts (`shown`): feed
    g is on panel of[g], loading its lines as kind[g] (NONE: not on such a panel,
    or a three-phase feed wired line to line, whose currents are 30 degrees off
    the others': a floor cannot add them), with load[g] and, three-phase, what
    each of its phases carries (line_kw[g], ascending), every feed up; line[g]
    where the inventory says which line a single-phase feed is on."""

    of: IDX
    kind: IDX
    load: F64
    line_kw: F64
    shown: npt.NDArray[np.bool_]
    line: IDX  # the line (0-2: L1-L3) or pair (0-2: L1-L2, L2-L3, L3-L1) a feed names, else -1

    def members(self) -> IDX:
        """The wired feeds, panel by panel."""
        on = np.flatnonzero(self.kind != NONE)
        return on[np.argsort(self.of[on], kind="stable")]


def _heaviest(group: IDX, load: F64, n: int) -> F64:
    """Per group of loads (`group[i]`) dealt whole over three lines (or line
    pairs): the least the heaviest of the three carries, whichever way they are
    dealt. With the loads largest first x0 >= x1 >= ..., of the first 3j + 1 some
    line holds j + 1, so at least x(2j) + ... + x(3j) (j = 0: the largest); and
    some line holds a third of the sum. A floor, never an estimate: over it, no
    wiring keeps every line in."""
    out = np.zeros(n)
    if not len(group):
        return out
    order = np.lexsort((-load, group))
    g, x = group[order], load[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    counts = np.diff(np.append(starts, len(g)))
    rank = np.arange(len(g)) - np.repeat(starts, counts)
    cum = np.concatenate(([0.0], np.cumsum(x)))
    at = np.flatnonzero(rank % 3 == 0)
    start, j = np.repeat(starts, counts)[at], rank[at] // 3
    np.maximum.at(out, g[at], cum[start + 3 * j + 1] - cum[start + 2 * j])
    out = np.maximum(out, np.bincount(g, weights=x, minlength=n) / 3.0)
    return out


def _floors(state: IDX, kind: IDX, load: F64, lines: F64, n: int, line: IDX) -> F64:
    """The heaviest line's floor of each of `n` states (rows: a feed of a panel in
    state `state[row]`, loading it as `kind[row]`, on line `line[row]` where the
    inventory says, else -1). A three-phase feed puts its lightest phase on every
    line, however it is rotated, and its two others' excess over it on two lines:
    loads to deal, as a single-phase feed's that names no line. Feeds that name
    their line load it (d1, d2, d3); with loads still to deal, the heaviest line
    carries at least the most loaded of them, a third of everything, and the
    least of them plus what the dealt loads put on some line (_heaviest); with
    none, the floor is the lines as wired. The line-to-neutral and line-to-line
    floors of the loads dealt are kept apart and the larger taken, and beside them
    the lines' currents of what is wired for certain, summed as phasors
    (_as_wired): the currents on a line are within 60 degrees of each other, so
    it carries at least each part."""
    three, ln, ll = kind == THREE, kind == LINE_NEUTRAL, kind == LINE_LINE
    base: F64 = np.bincount(state[three], weights=lines[three, 0], minlength=n).astype(np.float64)
    free = line < 0
    group = np.concatenate((state[ln & free], state[three], state[three]))
    excess = lines[three, 1:] - lines[three, :1]
    dealt = np.concatenate((load[ln & free], excess[:, 0], excess[:, 1]))
    on_lines = _fixed(state, ln & ~free, line, load, n)
    ln_floor = base + _with_fixed(on_lines, group, dealt, n)
    pairs = _fixed(state, ll & ~free, line, load, n)
    ll_pairs = _with_fixed(pairs, state[ll & free], load[ll & free], n)
    out: F64 = np.maximum(np.maximum(ln_floor, ll_pairs / np.sqrt(3.0)), _as_wired(base, on_lines, pairs))
    # To the microwatt: the sums run over many states at once, and their last bits
    # would otherwise depend on the states beside them (and break ties between equal floors).
    rounded: F64 = np.round(out, 9)
    return rounded


def _as_wired(base: F64, on_lines: F64, pairs: F64) -> F64:
    """The heaviest line's current, as line-to-neutral kW, of what is wired for
    certain: `base` on every line and `on_lines` (n, 3) in phase with its voltage,
    and the line pairs' loads (n, 3: L1-L2, L2-L3, L3-L1), whose currents in a
    line lead and lag its voltage by 30 degrees, P / sqrt 3 each (resistive
    loads). Line 1: |d + p12 / sqrt 3 at +30 + p31 / sqrt 3 at -30|; every
    other current on the line is within 60 degrees of these, so the line carries
    at least this."""
    after = pairs  # the pair that leads from each line: L1-L2 from L1, L2-L3 from L2, L3-L1 from L3
    before = np.roll(pairs, 1, axis=1)  # the pair that ends on it: L3-L1 on L1, L1-L2 on L2, L2-L3 on L3
    real = base[:, None] + on_lines + (after + before) / 2.0
    imaginary = (after - before) / (2.0 * np.sqrt(3.0))
    out: F64 = np.sqrt(real**2 + imaginary**2).max(axis=1)
    return out


def _fixed(state: IDX, rows: npt.NDArray[np.bool_], line: IDX, load: F64, n: int) -> F64:
    """What the `rows` that name their line (or pair) put on each, per state: (n, 3)."""
    out = np.zeros((n, 3))
    np.add.at(out, (state[rows], line[rows]), load[rows])
    return out


def _with_fixed(fixed: F64, group: IDX, dealt: F64, n: int) -> F64:
    """The heaviest of three lines (or pairs) per state, at least: `fixed` on them
    as wired, and the `dealt` loads (by state `group`) anyhow."""
    total = fixed.sum(axis=1) + np.bincount(group, weights=dealt, minlength=n)
    least_plus = fixed.min(axis=1) + _heaviest(group, dealt, n)
    out: F64 = np.maximum.reduce([fixed.max(axis=1), total / 3.0, least_plus])
    return out


def _after(
    w: Wiring, mv: Moves, down: IDX | None, allowed: npt.NDArray[np.bool_] | None
) -> tuple[F64, IDX]:
    """Each panel's highest line floor over the failures of `mv` that change a feed
    on it (allowed[x, panel] where given; feed g dark in failure down[g] where
    given), and that failure (-inf and -1: none). Ties go to the first failure."""
    n, n_feeds = len(w.shown), max(len(w.of), 1)
    best, which = np.full(n, -np.inf), np.full(n, -1, dtype=np.intp)
    feed = (mv.keys % n_feeds).astype(np.intp)
    x = (mv.keys // n_feeds).astype(np.intp)
    hit = w.kind[feed] != NONE
    if allowed is not None:
        hit[hit] = allowed[x[hit], w.of[feed[hit]]]
    pair = np.unique(x[hit].astype(np.int64) * n + w.of[feed[hit]])
    pair_x, pair_panel = (pair // n).astype(np.intp), (pair % n).astype(np.intp)
    members = w.members()
    count = np.bincount(w.of[members], minlength=n)
    first = np.cumsum(count) - count
    exact = (np.bincount(pair_panel, minlength=n) * count <= PANEL_ROWS)[pair_panel]
    todo = np.flatnonzero(exact)
    ends = np.cumsum(count[pair_panel[todo]])
    for lo, hi in _chunks(ends):
        pp = todo[lo:hi]
        lengths = count[pair_panel[pp]]
        row_pair = np.repeat(np.arange(len(pp)), lengths)
        within = np.arange(len(row_pair)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        row_feed = members[first[pair_panel[pp]][row_pair] + within]
        row_x = pair_x[pp][row_pair]
        load, lines = _state(w, mv, down, row_x, row_feed)
        floors = _floors(row_pair, w.kind[row_feed], load, lines, len(pp), w.line[row_feed])
        _keep_worst(best, which, pair_panel[pp], floors, pair_x[pp])
    rest = np.flatnonzero(~exact)
    if len(rest):
        _keep_worst(best, which, pair_panel[rest], _coarse(w, mv, down, pair_x[rest], pair_panel[rest]),
                    pair_x[rest])
    return best, which


def _chunks(ends: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """Runs of pairs whose rows (cumulative `ends`) fit CHUNK_ROWS (one pair at least)."""
    out, lo, done = [], 0, 0
    while lo < len(ends):
        hi = max(int(np.searchsorted(ends, done + CHUNK_ROWS, side="right")), lo + 1)
        out.append((lo, hi))
        lo, done = hi, int(ends[hi - 1])
    return out


def _state(w: Wiring, mv: Moves, down: IDX | None, x: IDX, feed: IDX) -> tuple[F64, F64]:
    """Each (failure x, feed) row's load and phases in that failure."""
    key = x.astype(np.int64) * max(len(w.of), 1) + feed
    pos = np.minimum(np.searchsorted(mv.keys, key), max(len(mv.keys) - 1, 0))
    found = mv.keys[pos] == key if len(mv.keys) else np.zeros(len(key), dtype=bool)
    load = np.where(found, w.load[feed] + mv.kw[pos], w.load[feed])
    lines = np.where(found[:, None], mv.lines[pos], w.line_kw[feed])
    if down is not None:
        dark = down[feed] == x
        load[dark], lines[dark] = 0.0, 0.0
    return load, lines


def _coarse(w: Wiring, mv: Moves, down: IDX | None, x: IDX, panel: IDX) -> F64:
    """The lower floor past PANEL_ROWS: per (failure x, panel) pair (sorted), the
    larger of a third of its line-to-neutral load (every feed of the panel up, plus
    what the failure changes, less its dark feeds) and what each changed feed alone
    puts on a line (a line-to-line feed's load / sqrt 3)."""
    n, n_feeds = len(w.shown), max(len(w.of), 1)
    pair = x.astype(np.int64) * n + panel
    members = w.members()
    ln_kind = np.isin(w.kind, (LINE_NEUTRAL, THREE))
    total = np.bincount(w.of[members], weights=np.where(ln_kind[members], w.load[members], 0.0), minlength=n)
    sums = total[panel].astype(np.float64)
    key_feed = (mv.keys % n_feeds).astype(np.intp)
    changed = np.flatnonzero(w.kind[key_feed] != NONE)
    at, mine = _pair_of(pair, (mv.keys[changed] // n_feeds) * n + w.of[key_feed[changed]])
    changed = changed[mine]
    feed, fx = key_feed[changed], (mv.keys[changed] // n_feeds).astype(np.intp)
    now, lines = _state(w, mv, down, fx, feed)
    np.add.at(sums, at, np.where(ln_kind[feed], now - w.load[feed], 0.0))
    if down is not None:
        dark = np.flatnonzero((down >= 0) & ln_kind)
        dark_at, dark_mine = _pair_of(pair, down[dark].astype(np.int64) * n + w.of[dark])
        dark = dark[dark_mine]
        # A dark feed the failure also moved load off is already counted at 0 above.
        moved = np.isin(dark.astype(np.int64) + down[dark].astype(np.int64) * n_feeds, mv.keys[changed])
        np.add.at(sums, dark_at[~moved], -w.load[dark[~moved]])
    out: F64 = np.maximum(sums, 0.0) / 3.0
    by_line = np.where(w.kind[feed] == LINE_LINE, now / np.sqrt(3.0), now)
    alone = np.where(w.kind[feed] == THREE, lines[:, 2], by_line)
    np.maximum.at(out, at, alone)
    return out


def _pair_of(pair: npt.NDArray[np.int64], key: npt.NDArray[np.int64]) -> tuple[IDX, npt.NDArray[np.bool_]]:
    """Where each key is in the sorted `pair`, and which keys are there."""
    at = np.searchsorted(pair, key)
    mine = (at < len(pair)) & (pair[np.minimum(at, max(len(pair) - 1, 0))] == key) if len(pair) else at < 0
    return at[mine], mine


def _keep_worst(best: F64, which: IDX, panel: IDX, value: F64, x: IDX) -> None:
    """Raise best[panel] to each pair's value where higher (ties: the first failure)."""
    order = np.lexsort((x, -value, panel))
    first = np.concatenate(([True], panel[order][1:] != panel[order][:-1])) if len(order) else order > 0
    pick = order[first]
    higher = value[pick] > best[panel[pick]]
    best[panel[pick[higher]]] = value[pick[higher]]
    which[panel[pick[higher]]] = x[pick[higher]]


def _lines(
    inv: Inventory,
    of: IDX,
    loads: tuple[F64, F64],
    voltage: F64,
    phase: F64,
    kw: F64,
    failed: tuple[FeedArrays, list[Failures], tuple[Scenarios, Moves]],
) -> dict[str, npt.NDArray[Any]]:
    """The phase columns of each three-phase panel with a feed it counts: its
    heaviest line's floor (_floors) with every feed up, after each failure of
    another panel or a UPS block, and after each rack's designed failure (the
    feeds' loads and phases then as the failure leaves them: feeds.group_moves,
    feeds.moves_of). A single-phase feed on it is wired line to neutral where its
    voltage is nearer V / sqrt 3 than V (230 V off 400 V, 120 V off 208 V), else
    line to line (208 V off 208 V): its current then loads two lines, I = P / V
    each, which is P / sqrt 3 of line-to-neutral kW; the line a pair loads
    carries at least that pair's current (the other currents on it are within
    90 degrees). A three-phase feed is in phase with the line-to-neutral feeds
    where its PSUs are line to neutral too."""
    load, line_kw = loads
    f, failures, designed = failed
    n = len(kw)
    three = phase == 3
    voltages, phases, lines = placed_fields(list(inv.feeds.values()), "voltage", "phase", "line")
    fv = np.asarray(voltages, dtype=np.float64)
    fp = np.asarray(phases, dtype=np.float64)
    on = (of >= 0) & three[np.maximum(of, 0)] if len(of) else np.zeros(0, dtype=bool)
    v = voltage[np.maximum(of, 0)] if len(of) else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        line_to_line = np.abs(np.log(fv / v)) < np.abs(np.log(fv * np.sqrt(3.0) / v))
    single = on & (fp != 3)
    kind = np.full(len(of), NONE, dtype=np.intp)
    kind[single & ~line_to_line] = LINE_NEUTRAL
    kind[single & line_to_line] = LINE_LINE
    kind[on & (fp == 3) & f.line_to_neutral] = THREE
    # Every three-phase panel with a feed the floor can count: three-phase feeds alone
    # load a line past its third too where their PSUs load two lines of three.
    shown = three & (np.bincount(of[kind != NONE], minlength=n) > 0)
    named = np.asarray([_LINES.get(line or "", -1) for line in lines], dtype=np.intp)
    named = np.where(single, named, -1) if len(of) else named
    w = Wiring(of, kind, load, line_kw, shown, named)
    members = w.members()
    worst = _floors(of[members], kind[members], load[members], line_kw[members], n, named[members])
    case = np.full(n, "every feed up", dtype=object)
    if shown.any():
        for group in failures:
            if group.moves is None:
                continue
            after, x = _after(w, group.moves, group.down, group.allowed)
            worse = after > worst
            worst[worse], case[worse] = after[worse], group.cases[x[worse]]
        sc, rack_moves = designed
        if len(sc.rack):
            after, x = _after(w, rack_moves, None, None)
            worse = after > worst
            racks = list(inv.racks)
            worst[worse] = after[worse]
            case[worse] = [f"rack {racks[r][1]} {c}" for r, c in
                           zip(sc.rack[x[worse]].tolist(), sc.case[x[worse]].tolist(), strict=True)]
    capacity = np.where(shown, kw / 3.0, NAN)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(capacity > 0, 100.0 * worst / capacity, NAN)
    return {
        "phase_capacity_kw": capacity,
        "worst_phase_load_kw": np.where(shown, worst, NAN),
        "worst_phase_pct": np.where(shown, pct, NAN),
        "worst_phase_case": np.where(shown, case, np.full(n, None, dtype=object)),
        "line_feed_count": np.where(shown, np.bincount(of[named >= 0], minlength=n), NAN),
    }
