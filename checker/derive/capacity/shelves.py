"""Power shelves: each shelf of a rack-scale system, its load with every shelf
up and after the failures its rack is designed for.

A rack-scale system's PSUs are its power shelves (a GB200 NVL72 has 8 of 6 x
5.5 kW PSUs, 33 kW a shelf: NVIDIA DGX GB200 User Guide). The shelves share
the system's draw equally, as any redundant PSUs do, so a shelf carries peak_w
/ shelves live: its figures are feeds.py's, read per PSU rather than summed
per feed (the same Pairs and scenario Rows, not a second computation). A
GB300 NVL72 at 142 kW in a 2N rack cabled four shelves a side keeps 4 x 33 =
132 kW on a side loss: each shelf left carries 142 / 4 = 35.5 kW, 107.6 % of
its rating.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.feeds import AtsArrays, FeedArrays, Pairs, Rows, Scenarios, worst_of
from checker.derive.capacity.servers import NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.load.build import Inventory

SHELF_COLUMNS = (
    Column(
        "feed",
        "",
        "the feed (or ATS) it is cabled to: psu.feeds, else its rack's psu_order, else spread as evenly"
        " as whole shelves allow",
        "string",
    ),
    Column("side", "", "its feed's side (A | B), where the feed has one", "string"),
    Column("rating_w", "W", "what one shelf delivers: its system's psu.rating_w"),
    Column("phase", "", "1 | 3: its input (psu.phase; a shelf of three-phase PSUs draws from every line)"),
    Column(
        "load_w",
        "W",
        "its share of its system's peak draw with every shelf up: system_peak_w / shelves cabled"
        " (the shelves share the draw equally)",
    ),
    Column("utilization_pct", "%", "load_w / rating_w x 100"),
    Column(
        "failover_load_w",
        "W",
        "its largest share after a failure its rack is designed for that it stays up in (2N: the"
        " other side; N+1: any other feed): system_peak_w / shelves_left",
    ),
    Column("failover_utilization_pct", "%", "failover_load_w / rating_w x 100"),
    Column("failover_case", "", "the failure behind failover_load_w: side A | side B | feed NAME", "string"),
    Column("shelves_left", "", "the system's shelves still up in that failure"),
    Column("kept_w", "W", "shelves_left x rating_w: what the shelves left give"),
    Column("kept_pct", "%", "kept_w / system_peak_w x 100: the share of peak draw the shelves left carry"),
    Column("system_peak_w", "W", "its system's peak draw (power_cap_w, else power_w.max)", context=True),
    Column("rack_redundancy", "", "N | N+1 | 2N: its rack's redundancy", "string", context=True),
)


def shelf_table(
    inv: Inventory,
    f: FeedArrays,
    a: AtsArrays,
    redundancy: npt.NDArray[Any],
    s: ServerArrays,
    p: Pairs,
    scenario: tuple[Scenarios, Rows],
) -> Table[tuple[str, str, str, str]]:
    keys = list(inv.shelves)
    shelves = [placed.value for placed in inv.shelves.values()]
    server_index = {name: i for i, name in enumerate(inv.servers)}
    server = np.asarray([server_index[k[2]] for k in keys], dtype=np.intp)
    pair = _pairs_of(keys, shelves, server_index, f, a, p)
    sc, rows = scenario
    # Per connection: a PSU's share in each scenario it is live in, the largest
    # kept; only the rows of rack-scale systems (a fleet's servers need none).
    up = (rows.live > 0) & s.system[rows.server]
    with np.errstate(invalid="ignore", divide="ignore"):
        each_w = s.peak_w[rows.server[up]] / rows.live_psus[rows.at[up]]
    high, case = worst_of(rows.pair[up], each_w, sc.case[rows.scen[up]], len(p.server), high=True)
    found = pair >= 0
    on = pair[found]

    def per_shelf(values: npt.NDArray[Any], fill: Any) -> npt.NDArray[Any]:
        out = np.full(len(keys), fill, dtype=values.dtype)
        out[found] = values[on]
        return out

    # A shelf behind a transfer switch is on the ATS its cabling names.
    names = f.name[p.feed[on]].copy()
    behind = p.ats[on] >= 0
    names[behind] = a.name[p.ats[on][behind]]
    sides = np.asarray([side or None for side in f.side[p.feed[on]].tolist()], dtype=object)
    rating = np.asarray([sh.rating_w if sh.rating_w else NAN for sh in shelves], dtype=np.float64)
    peak = s.peak_w[server] if len(keys) else np.zeros(0)
    load = per_shelf(p.each_kw * 1000.0, NAN)
    failover = per_shelf(high, NAN)
    with np.errstate(invalid="ignore", divide="ignore"):
        left = np.rint(peak / failover)
        kept = left * rating
        racked = s.rack[server] if len(keys) else np.zeros(0, dtype=np.intp)
        columns: dict[str, npt.NDArray[Any]] = {
            "feed": _filled(len(keys), found, names.astype(object)),
            "side": _filled(len(keys), found, sides),
            "rating_w": rating,
            "phase": np.asarray([sh.phase for sh in shelves], dtype=np.float64),
            "load_w": load,
            "utilization_pct": 100.0 * load / rating,
            "failover_load_w": failover,
            "failover_utilization_pct": 100.0 * failover / rating,
            "failover_case": per_shelf(case, None),
            "shelves_left": left,
            "kept_w": kept,
            "kept_pct": 100.0 * kept / peak,
            "system_peak_w": peak,
            "rack_redundancy": np.asarray(
                [redundancy[r] if r >= 0 else None for r in racked.tolist()], dtype=object
            ),
        }
    return Table(keys, SHELF_COLUMNS, columns)


def _filled(n: int, found: npt.NDArray[np.bool_], values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An object column of n: `values` where `found`, else None."""
    out = np.full(n, None, dtype=object)
    out[found] = values
    return out


def _pairs_of(
    keys: list[tuple[str, str, str, str]],
    shelves: list[Any],
    server_index: dict[str, int],
    f: FeedArrays,
    a: AtsArrays,
    p: Pairs,
) -> npt.NDArray[np.intp]:
    """The PSU connection (a row of `p`) each shelf is on, -1 where none: by
    the feed the inventory names for it, else the n-th PSU of its server's
    connections in their order (the even spread feeds.py worked out)."""
    by_name: dict[tuple[int, str], int] = {}
    spread: dict[int, list[int]] = {}  # server -> its connection of each PSU, in order
    wanted = np.unique(np.asarray([server_index[k[2]] for k in keys], dtype=np.intp))
    mine = np.flatnonzero(np.isin(p.server, wanted))  # the systems' connections only
    for row, srv, feed, x, n in zip(
        mine.tolist(), p.server[mine].tolist(), p.feed[mine].tolist(), p.ats[mine].tolist(),
        p.psus[mine].tolist(), strict=True,
    ):
        by_name.setdefault((srv, str(a.name[x] if x >= 0 else f.name[feed])), row)
        spread.setdefault(srv, []).extend([row] * int(n))
    out = np.full(len(keys), -1, dtype=np.intp)
    for i, (key, shelf) in enumerate(zip(keys, shelves, strict=True)):
        srv = server_index[key[2]]
        if shelf.feed is not None:
            out[i] = by_name.get((srv, shelf.feed), -1)
        elif shelf.number <= len(spread.get(srv, [])):
            out[i] = spread[srv][shelf.number - 1]
    return out
