"""Panels, hand-computed: the distribution many racks' feeds share (a busway
whose tap-offs are the feeds), with every feed up and after the worst single
panel or UPS block failure.

Racks are 2N, each with one 415 V 125 A three-phase feed a side (415 x 125 x
1.732 x 0.8 / 1000 = 71.9 kW), and 4 servers of 15 kW, 60 kW a rack, each
with 4 PSUs of 8 kW, two a side: a side alone carries a server whole. A
busway of 415 V 400 A three-phase at 80 % is 415 x 400 x 1.732 x 0.8 / 1000
= 230.0 kW. With both sides up a rack puts 30 kW on each side's busway; when
the other side fails, 60 kW on this one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.load.build import load
from tests.conftest import AS_OF, CliRunner, summary
from tests.derive.capacity.test_capacity import Auditor, audit, rulebook

__all__ = ["audit", "rulebook"]  # fixtures, used by name

ROOT = Path(__file__).resolve().parents[3]
FEED = "voltage: 415, amps: 125, phase: 3"
PANEL = "voltage: 415, amps: 400"  # three-phase and 80 %: the defaults
TWO_N = "ups: {redundancy: 2N, blocks: [{name: UPS-A, capacity_kw: 1000}, {name: UPS-B, capacity_kw: 1000}]}"


def facility(panels: list[str], racks: list[tuple[str, str]], power: str = "it_capacity_kw: 2000") -> str:
    """A facility `f` with `panels` (flow mappings) and one 2N rack per (A feed's, B feed's) extra fields."""
    lines = ["kind: Facility", "name: f", "power:", f"  {power}", "  panels:"]
    lines += [f"    - {{{p}}}" for p in panels]
    lines.append("racks:" if racks else "racks: []")
    for i, (a, b) in enumerate(racks, 1):
        lines += [
            f"  - name: R{i}",
            "    redundancy: 2N",
            "    feeds:",
            f"      - {{name: A, side: A, {FEED}, {a}}}",
            f"      - {{name: B, side: B, {FEED}, {b}}}",
        ]
    return "\n".join(lines) + "\n"


def servers(racks: int) -> str:
    rows = [
        f"  - {{name: s{r}{k}, rack: R{r}, position: {4 * k - 3}, u_height: 4, power_w: {{max: 15000}},"
        " psu: {count: 4, rating_w: 8000, redundant: 2}}"
        for r in range(1, racks + 1)
        for k in range(1, 5)
    ]
    return "kind: Servers\nfacility: f\nservers:\n" + "\n".join(rows) + "\n"


BUSWAYS = [f"name: BW-A, {PANEL}", f"name: BW-B, {PANEL}"]
ON_BUSWAYS = ("panel: BW-A", "panel: BW-B")
# The B sides on two smaller busways fed from UPS-B: losing one of them moves
# two racks onto BW-A, losing UPS-B moves all four.
SPLIT_B = [
    f"name: BW-A, {PANEL}, ups: UPS-A",
    "name: BW-B1, voltage: 415, amps: 250, ups: UPS-B",  # 143.8 kW
    "name: BW-B2, voltage: 415, amps: 250, ups: UPS-B",
]
SPLIT_RACKS = [("panel: BW-A", "panel: BW-B1")] * 2 + [("panel: BW-A", "panel: BW-B2")] * 2


@pytest.mark.parametrize(
    ("panels", "racks", "power", "load_kw", "failover_kw", "pct", "case", "fires"),
    [
        # Four racks: 4 x 30 = 120 kW (52.2 %) on BW-A; BW-B fails: 4 x 60 = 240 kW, 104.3 %.
        (BUSWAYS, [ON_BUSWAYS] * 4, "it_capacity_kw: 2000", 120, 240, 104.34, "panel BW-B", True),
        # Three racks: 3 x 60 = 180 kW, 78.3 % after BW-B fails: within the rating.
        (BUSWAYS, [ON_BUSWAYS] * 3, "it_capacity_kw: 2000", 90, 180, 78.26, "panel BW-B", False),
        # The same four racks on a 2N UPS whose blocks the busways are fed from: BW-B's
        # failure and UPS-B's move the same 240 kW (a tie: the panel, listed first).
        (
            [f"{BUSWAYS[0]}, ups: UPS-A", f"{BUSWAYS[1]}, ups: UPS-B"],
            [ON_BUSWAYS] * 4, TWO_N, 120, 240, 104.34, "panel BW-B", True,
        ),
        # B sides split over BW-B1 and BW-B2: either fails, 2 x 60 + 2 x 30 = 180 kW on
        # BW-A; UPS-B fails, both do: 240 kW, the worst case.
        (SPLIT_B, SPLIT_RACKS, TWO_N, 120, 240, 104.34, "UPS block UPS-B", True),
        # The feeds, not the panels, say the block (feeds' ups): the same.
        (
            SPLIT_B[:1] + [p.replace(", ups: UPS-B", "") for p in SPLIT_B[1:]],
            [(f"{a}, ups: UPS-A", f"{b}, ups: UPS-B") for a, b in SPLIT_RACKS],
            TWO_N, 120, 240, 104.34, "UPS block UPS-B", True,
        ),
        # An N UPS designs no block failure: the worst is a panel's, 180 kW.
        (
            [p.replace(", ups: UPS-A", "").replace(", ups: UPS-B", "") for p in SPLIT_B],
            SPLIT_RACKS, "it_capacity_kw: 2000", 120, 180, 78.26, "panel BW-B1", False,
        ),
    ],
)
def test_a_busway_carries_every_rack_on_it_when_the_other_side_fails(
    audit: Auditor,
    panels: list[str],
    racks: list[tuple[str, str]],
    power: str,
    load_kw: float,
    failover_kw: float,
    pct: float,
    case: str,
    fires: bool,
) -> None:
    run = audit(facility(panels, racks, power), servers(len(racks)))
    bw = run.capacity.panels.row(("f", "BW-A"))
    assert (bw["capacity_kw"], bw["feed_count"], bw["rack_count"]) == (230.016, len(racks), len(racks))
    assert (bw["load_kw"], bw["failover_load_kw"], bw["failover_case"]) == (load_kw, failover_kw, case)
    assert bw["failover_utilization_pct"] == pytest.approx(pct, abs=0.01)
    assert ("power.panel-failover" in run.fired("panel/f/BW-A")) == fires
    assert "power.panel-capacity" not in run.fired("panel/f/BW-A")
    # Each rack alone passes: 60 of 71.9 kW a side.
    rack = run.capacity.racks.row(("f", "R1"))
    assert (rack["load_kw"], round(rack["capacity_kw"], 1)) == (60, 71.9)
    others = {f.rule for f in run.findings if f.category == "power" and not f.entity.startswith("panel/")}
    assert others == set()


def test_the_failover_message_names_the_failure(audit: Auditor) -> None:
    run = audit(facility(SPLIT_B, SPLIT_RACKS, TWO_N), servers(4))
    assert run.finding("power.panel-failover", "panel/f/BW-A").message == (
        "when UPS block UPS-B fails, panel f/BW-A carries 240 kW, 104 % of its 230.0 kW (4 feeds of 4 racks):"
        " its breaker trips and those racks lose this side too"
    )
    # BW-B1 carries its two racks whole when BW-A (or UPS-A) fails: 120 of 143.8 kW.
    b1 = run.capacity.panels.row(("f", "BW-B1"))
    assert (b1["load_kw"], b1["failover_load_kw"], b1["failover_case"]) == (60, 120, "panel BW-A")
    assert not run.fired("panel/f/BW-B1")
    # The feeds name no block: each is on its panel's, so UPS-A carries the four A sides, 4 x 30 kW,
    # and all 240 kW when UPS-B fails.
    ups_a = run.capacity.ups_blocks.row(("f", "UPS-A"))
    assert (ups_a["load_kw"], ups_a["failover_load_kw"], ups_a["failover_case"]) == (120, 240, "block UPS-B")


def test_a_panel_over_with_everything_up(audit: Auditor) -> None:
    # Eight racks: 8 x 30 = 240 kW on BW-A with both sides up, 104.3 %: the capacity rule,
    # not the failover one (480 kW, 208.7 %).
    run = audit(facility(BUSWAYS, [ON_BUSWAYS] * 8), servers(8))
    bw = run.capacity.panels.row(("f", "BW-A"))
    assert (bw["load_kw"], bw["failover_load_kw"]) == (240, 480)
    assert run.fired("panel/f/BW-A") == {"power.panel-capacity"}
    assert run.finding("power.panel-capacity", "panel/f/BW-A").message == (
        "panel f/BW-A carries 240 kW at peak with every feed up (8 feeds of 8 racks), 104 % of its 230.0 kW:"
        " its breaker trips in normal operation"
    )


def test_a_lone_panel_carries_the_side_a_rack_loses(audit: Auditor) -> None:
    """The designed failure of a 2N rack is its side's: the B sides are on no panel,
    and when R1's B side fails its A feed on BW-A carries all its 60 kW. This was
    a pass with no failure figure at all, however far over the panel went."""
    run = audit(facility([f"name: BW-A, {PANEL}"], [("panel: BW-A", "power_factor: 1.0")] * 2), servers(2))
    bw = run.capacity.panels.row(("f", "BW-A"))
    # 2 x 30 kW with both sides up; R1's B side lost: 30 + 60 = 90 kW, 90 / 230.016 = 39.13 %.
    assert (bw["load_kw"], bw["feed_count"], bw["failover_load_kw"]) == (60, 2, 90)
    assert (bw["failover_utilization_pct"], bw["failover_case"]) == (39.128, "rack R1 side B")


def test_the_side_a_rack_loses_trips_a_panel(audit: Auditor) -> None:
    """Four 2N racks of 60 kW, their B sides on BW-B alone and their A sides on no
    panel: 120 kW with every feed up, 150 kW when one rack's A side fails, over
    the 250 A busway's rating: it trips and the rack goes dark."""
    small = "name: BW-B, voltage: 415, amps: 250"
    run = audit(facility([small], [("power_factor: 1.0", "panel: BW-B")] * 4), servers(4))
    bw = run.capacity.panels.row(("f", "BW-B"))
    # 415 x 250 x 0.8 x sqrt 3 / 1000 = 143.76 kW; 120 / 143.76 = 83.47 %, 150 / 143.76 = 104.34 %.
    assert (bw["load_kw"], bw["failover_load_kw"], bw["failover_case"]) == (120, 150, "rack R1 side A")
    figures = (bw["capacity_kw"], bw["utilization_pct"], bw["failover_utilization_pct"])
    assert figures == (143.76, 83.472, 104.34)
    assert run.fired("panel/f/BW-B") == {"power.panel-failover"}


def test_an_n_rack_puts_nothing_on_the_other_panel(audit: Auditor) -> None:
    """An N rack is designed to lose nothing: when one of its panels fails its
    servers go down with it, and the other panel carries what it carried."""
    text = facility(BUSWAYS, [ON_BUSWAYS] * 4).replace("redundancy: 2N", "redundancy: N")
    run = audit(text, servers(4))
    bw = run.capacity.panels.row(("f", "BW-A"))
    assert (bw["load_kw"], bw["failover_load_kw"]) == (120, 120)
    assert "power.panel-failover" not in run.fired("panel/f/BW-A")


@pytest.mark.parametrize(
    ("panels", "racks", "power", "where", "message"),
    [
        (BUSWAYS, [("panel: BW-A", "panel: BW-BB")], "it_capacity_kw: 2000", (13, 70),
         "feed B of rack R1: facility f has no panel 'BW-BB' (did you mean 'BW-B'?)"),
        ([f"{BUSWAYS[0]}, ups: UPS-A", f"{BUSWAYS[1]}, ups: UPS-B"],
         [("panel: BW-A", "panel: BW-A, ups: UPS-B")], TWO_N, (13, 81),
         "feed B of rack R1 is on UPS block UPS-B, but its panel BW-A is fed from UPS-A"),
        ([BUSWAYS[0], BUSWAYS[0]], [], "it_capacity_kw: 2000", (7, 14), "duplicate panel name 'BW-A'"),
        ([f"{BUSWAYS[0]}, ups: UPS-C"], [], TWO_N, (6, 50),
         "panel BW-A: facility f has no UPS block 'UPS-C' (did you mean 'UPS-B'?)"),
        ([f"{BUSWAYS[0]}, ups: UPS-A"], [], "it_capacity_kw: 2000", (6, 45),
         "panel BW-A: facility f has no UPS blocks (power.ups)"),
        # A feed on a panel that names no block says how it could name one.
        ([f"{BUSWAYS[0]}, ups: UPS-A", BUSWAYS[1]], [("panel: BW-A", "panel: BW-B")], TWO_N, (13, 9),
         "feed B of rack R1: say which UPS block feeds it (ups: NAME, or a panel whose ups names it)"),
    ],
)
def test_panel_inputs_that_cannot_be_checked_are_located_errors(
    tmp_path: Path,
    panels: list[str],
    racks: list[tuple[str, str]],
    power: str,
    where: tuple[int, int],
    message: str,
) -> None:
    (tmp_path / "facility.yaml").write_text(facility(panels, racks, power))
    _, problems = load([tmp_path])
    assert [(Path(p.file).name, p.line, p.column) for p in problems] == [("facility.yaml", *where)]
    assert message in problems[0].message


def test_cli_a_feed_on_a_panel_of_another_block_exits_2(tmp_path: Path, cli: CliRunner) -> None:
    panels = [f"{BUSWAYS[0]}, ups: UPS-A", f"{BUSWAYS[1]}, ups: UPS-B"]
    racks = [("panel: BW-A", "panel: BW-A, ups: UPS-B")]
    (tmp_path / "facility.yaml").write_text(facility(panels, racks, TWO_N))
    run = cli("audit", str(tmp_path), *AS_OF)
    assert (run.code, run.err) == (2, "")
    assert run.lines == [
        f"{tmp_path / 'facility.yaml'}:13:81: error schema.reference feed B of rack R1 is on UPS block UPS-B,"
        " but its panel BW-A is fed from UPS-A",
        summary(error=1),
    ]


def test_cli_finds_the_busway_over_when_the_other_fails(
    monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("audit", "panels", "--select", "power.*", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "panels/facility.yaml:15:7: error power.panel-failover when UPS block UPS-B fails, panel dc1/BW-LA"
        " carries 240 kW, 104 % of its 230.0 kW (4 feeds of 4 racks): its breaker trips and those racks"
        " lose this side too",
        summary(error=1),
    ]


def test_the_report_has_a_row_per_panel(monkeypatch: pytest.MonkeyPatch, cli: CliRunner) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("report", "panels", *AS_OF)
    assert run.code == 1
    assert (
        "| [BW-LA](panels/facility.yaml#L15) | dc1 | UPS-A | 4 | 4 | 230.02 kW | 120 kW | 52.17 %"
        " | UPS block UPS-B | 240 kW | 104.34 % | UPS block UPS-B | 82.5 kW | 107.6 % |"
    ) in run.lines
    html = cli("report", "panels", "--format", "html", *AS_OF)
    assert "<h3>Panels (panelboards, floor PDUs, busways)</h3>" in html.lines
    assert (
        '<tr><td><a href="panels/facility.yaml#L16">BW-LB1</a></td><td>dc1</td><td>UPS-B</td>'
        '<td class="n">2</td><td class="n">2</td><td class="n">143.76 kW</td><td class="n">60 kW</td>'
        '<td class="n">41.74 %</td>'
        '<td>panel BW-LA</td><td class="n">120 kW</td><td class="n">83.47 %</td>'
        '<td>panel BW-LA</td><td class="n">45 kW</td><td class="n">93.91 %</td></tr>'
    ) in html.lines


def test_the_schema_gives_panels_and_a_feeds_panel(cli: CliRunner) -> None:
    run = cli("schema")
    defs = json.loads(run.out)["$defs"]
    assert defs["FacilityPower"]["properties"]["panels"]["items"] == {"$ref": "#/$defs/Panel"}
    assert sorted(defs["Panel"]["properties"]) == [
        "amps", "max_utilization", "name", "phase", "power_factor", "ups", "voltage"
    ]
    assert (defs["Panel"]["properties"]["phase"]["default"], defs["Panel"]["required"]) == (
        3, ["name", "voltage", "amps"]
    )
    assert defs["Feed"]["properties"]["panel"]["type"] == ["string", "null"]


@pytest.mark.parametrize(
    ("feeds", "redundancy", "point"),
    [
        # 2N: both sides behind BW-A: one breaker takes the whole rack.
        ([("A", "BW-A"), ("B", "BW-A")], "2N", "BW-A"),
        ([("A", "BW-A"), ("B", "BW-B")], "2N", None),
        ([("A", "BW-A"), ("A", "BW-A"), ("B", "BW-B")], "2N", None),  # two feeds of a side: as designed
        ([("A", "BW-A"), ("B", None)], "2N", None),  # B on no panel of the inventory
        # N+1: any one feed may fail; two on one panel is two at once.
        ([("", "BW-A"), ("", "BW-A"), ("", "BW-B")], "N+1", "BW-A"),
        ([("", "BW-A"), ("", "BW-B"), ("", None)], "N+1", None),
        # N: nothing is designed to be lost.
        ([("", "BW-A"), ("", "BW-A")], "N", None),
    ],
)
def test_a_panel_holding_more_of_a_rack_than_it_may_lose_is_a_single_point(
    audit: Auditor, feeds: list[tuple[str, str | None]], redundancy: str, point: str | None
) -> None:
    written = [
        f"      - {{name: F{i}, {FEED}" + (f", side: {side}" if side else "")
        + (f", panel: {panel}" if panel else "") + "}"
        for i, (side, panel) in enumerate(feeds, 1)
    ]
    text = "\n".join([
        "kind: Facility", "name: f", "power:", "  it_capacity_kw: 2000", "  panels:",
        *(f"    - {{{p}}}" for p in BUSWAYS), "racks:", "  - name: R1", f"    redundancy: {redundancy}",
        "    feeds:", *written,
    ]) + "\n"
    run = audit(text, "kind: Servers\nfacility: f\nservers: []\n")
    rack = run.capacity.racks.row(("f", "R1"))
    assert rack.get("panel_single_point") == point
    assert ("power.rack-panel-loss" in run.fired("rack/f/R1")) is (point is not None)


def test_cli_a_2n_rack_with_both_sides_on_one_busway(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("audit", "panel-single-point", *AS_OF, "--no-cache", "--select", "power.rack-panel-loss")
    assert run.lines == [
        "panel-single-point/facility.yaml:12:5: error power.rack-panel-loss 2N rack f/R1 has feeds of both "
        "sides on panel BW-1: when that panel's breaker opens the rack loses both sides",
        summary(error=1),
    ]


# ---------------------------------------------------------------- the lines of a three-phase panel
def single_feeds(panel: str, feeds: list[tuple[str, int]], psus: int = 2) -> tuple[str, str]:
    """A facility whose N racks each have one feed (`spec`) on panel RPP-1 and one
    server drawing `watts` at peak through `psus` single-phase PSUs on it (on a
    three-phase feed they are dealt over its lines: 3 make a balanced load)."""
    lines = ["kind: Facility", "name: f", "power:", "  it_capacity_kw: 2000", "  panels:",
             f"    - {{name: RPP-1, {panel}}}", "racks:"]
    rows = []
    for i, (spec, watts) in enumerate(feeds, 1):
        feed = f"{{name: A, {spec}, panel: RPP-1}}"
        lines += [f"  - name: R{i}", "    redundancy: N", f"    feeds: [{feed}]"]
        rows.append(f"  - {{name: s{i}, rack: R{i}, position: 1, u_height: 4, power_w: {{max: {watts}}},"
                    f" psu: {{count: {psus}, rating_w: 12000}}}}")
    return "\n".join(lines) + "\n", "kind: Servers\nfacility: f\nservers:\n" + "\n".join(rows) + "\n"


LN_240 = "voltage: 240, amps: 32"  # single-phase, 240 x 32 x 0.8 = 6.144 kW
LN_240_63 = "voltage: 240, amps: 63"  # 12.096 kW
LL_208 = "voltage: 208, amps: 125"  # single-phase across two lines, 20.8 kW
THREE_63 = "voltage: 415, amps: 63, phase: 3"  # 36.2 kW


@pytest.mark.parametrize(
    ("panel", "feeds", "line_kw", "worst_kw", "pct", "fires"),
    [
        # 415 V 50 A: 415 x 50 x 0.8 x sqrt 3 = 28.752 kW, 9.584 a line. Four 5.5 kW feeds
        # line to neutral: some line holds two, 11 kW (114.8 %), the panel 22 kW (76.5 %).
        ("voltage: 415, amps: 50", [(LN_240, 5500)] * 4, 9.584, 11, 114.77, True),
        # Three: one a line, 5.5 kW (57.4 %).
        ("voltage: 415, amps: 50", [(LN_240, 5500)] * 3, 9.584, 5.5, 57.39, False),
        # Five, one of them 2 kW: of the four 5.5 kW feeds a line holds two, 11 kW. (The two
        # smallest of the five on a line, 7.5 kW (78.3 %), passed it: a false pass.)
        ("voltage: 415, amps: 50", [(LN_240, 2000)] + [(LN_240, 5500)] * 4, 9.584, 11, 114.77, True),
        # 415 V 100 A, 19.168 kW a line: four 10 kW feeds and two of 1 kW. Of the four a line
        # holds two, 20 kW (104.3 %); a third of the 42 kW is 14, the largest 10 (the panel 73 %).
        ("voltage: 415, amps: 100", [(LN_240_63, 10000)] * 4 + [(LN_240_63, 1000)] * 2, 19.168, 20, 104.34,
         True),
        # Three 10 kW feeds and three of 1 kW: one 10 a line, and the 1s beside them: 11 kW.
        ("voltage: 415, amps: 100", [(LN_240_63, 10000)] * 3 + [(LN_240_63, 1000)] * 3, 19.168, 11, 57.39,
         False),
        # 208 V 100 A: 28.82 kW, 9.607 a line. One 18 kW feed line to line draws
        # 18000 / 208 = 86.5 A on two lines: 18 / sqrt 3 = 10.392 kW of a line (108.2 %),
        # the panel 62.5 %.
        ("voltage: 208, amps: 100", [(LL_208, 18000)], 9.607, 10.392, 108.18, True),
        # Two 9 kW feeds line to line: each on its own pair, 5.196 kW.
        ("voltage: 208, amps: 100", [(LL_208, 9000)] * 2, 9.607, 5.196, 54.09, False),
        # 415 V 100 A, 57.504 kW, 19.168 a line: two 24 kW three-phase feeds of 3 PSUs put 8 kW
        # on each line each, one 5.5 kW single-phase feed 5.5 more on its line: 21.5 kW,
        # 112.2 % (the panel 93 %).
        ("voltage: 415, amps: 100", [(THREE_63, 24000)] * 2 + [(LN_240, 5500)], 19.168, 21.5, 112.17, True),
    ],
)
def test_single_phase_feeds_load_a_line_of_a_three_phase_panel(
    audit: Auditor, panel: str, feeds: list[tuple[str, int]], line_kw: float, worst_kw: float, pct: float,
    fires: bool,
) -> None:
    run = audit(*single_feeds(panel, feeds, psus=3))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert rpp["phase_capacity_kw"] == pytest.approx(line_kw, abs=0.001)
    assert rpp["worst_phase_load_kw"] == pytest.approx(worst_kw, abs=0.001)
    assert rpp["worst_phase_pct"] == pytest.approx(pct, abs=0.01)
    assert rpp["utilization_pct"] <= 100
    assert ("power.panel-phase-overload" in run.fired("panel/f/RPP-1")) == fires


def test_the_line_message_says_no_wiring_keeps_it_in(audit: Auditor) -> None:
    run = audit(*single_feeds("voltage: 415, amps: 50", [(LN_240, 5500)] * 4))
    assert run.finding("power.panel-phase-overload", "panel/f/RPP-1").message == (
        "with every feed up, a line of panel f/RPP-1 carries at least 11 kW however its 4 feeds are wired to"
        " its lines, 115 % of its 9.58 kW a line, though the panel as a whole is within its 28.8 kW:"
        " that pole of its breaker trips"
    )


def test_a_single_phase_panel_has_no_lines_to_check(audit: Auditor) -> None:
    run = audit(*single_feeds("voltage: 240, amps: 100, phase: 1", [(LN_240, 5500)] * 3))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert "worst_phase_load_kw" not in rpp and "power.panel-phase-overload" not in run.fired("panel/f/RPP-1")


def test_a_line_carries_the_2n_racks_whole_when_the_other_panel_fails(audit: Auditor) -> None:
    """Four 2N racks of one 5.5 kW server, a 240 V 32 A single-phase feed a side, the
    A sides on RPP-A and the B sides on RPP-B, both 415 V 40 A: 415 x 40 x 0.8 x
    sqrt 3 = 23.002 kW, 7.667 a line. Every feed up: 2.75 kW a feed, the panel
    11 kW (47.8 %), a line at least 5.5 (71.7 %). RPP-B fails: each A feed 5.5 kW,
    the panel 22 kW (95.6 %, within), a line at least two of them, 11 kW (143.5 %)."""
    lines = ["kind: Facility", "name: f", "power:", "  it_capacity_kw: 2000", "  panels:",
             "    - {name: RPP-A, voltage: 415, amps: 40}", "    - {name: RPP-B, voltage: 415, amps: 40}",
             "racks:"]
    for i in range(1, 5):
        lines += [f"  - name: R{i}", "    redundancy: 2N", "    feeds:",
                  f"      - {{name: A, side: A, {LN_240}, panel: RPP-A}}",
                  f"      - {{name: B, side: B, {LN_240}, panel: RPP-B}}"]
    rows = [f"  - {{name: s{i}, rack: R{i}, position: 1, u_height: 4, power_w: {{max: 5500}},"
            " psu: {count: 2, rating_w: 6000, redundant: 1}}" for i in range(1, 5)]
    run = audit("\n".join(lines) + "\n", "kind: Servers\nfacility: f\nservers:\n" + "\n".join(rows) + "\n")
    rpp = run.capacity.panels.row(("f", "RPP-A"))
    assert (rpp["load_kw"], rpp["failover_load_kw"], rpp["failover_case"]) == (11, 22, "panel RPP-B")
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (11, "panel RPP-B")
    assert rpp["worst_phase_pct"] == pytest.approx(143.47, abs=0.01)
    assert run.fired("panel/f/RPP-A") == {"power.panel-phase-overload"}
    assert run.finding("power.panel-phase-overload", "panel/f/RPP-A").message == (
        "when panel RPP-B fails, a line of panel f/RPP-A carries at least 11 kW however its 4 feeds are wired"
        " to its lines, 143 % of its 7.67 kW a line, though the panel as a whole is within its 23.0 kW:"
        " that pole of its breaker trips"
    )


def test_an_n_racks_feeds_go_dark_with_their_ups_block(audit: Auditor) -> None:
    """Panel X (415 V 250 A, 143.76 kW) holds the B sides of two 2N racks of 60 kW,
    on UPS-B, and the one feed of an N rack of 48 kW, on UPS-A; the 2N racks' A
    sides are on UPS-A and no panel. Every feed up: 30 + 30 + 48 = 108 kW (75.1 %).
    UPS-A fails: the B sides carry 60 + 60, and the N rack goes down with its
    block: 120 kW (83.5 %). Counting the dark rack's 48 kW as still drawn gave
    168 kW (116.9 %), a false alarm. R1's own side A lost: 30 + 60 + 48 = 138 kW."""
    lines = ["kind: Facility", "name: f", "power:", f"  {TWO_N}", "  panels:",
             "    - {name: X, voltage: 415, amps: 250}", "racks:"]
    for i in (1, 2):
        lines += [f"  - name: R{i}", "    redundancy: 2N", "    feeds:",
                  f"      - {{name: A, side: A, {FEED}, ups: UPS-A}}",
                  f"      - {{name: B, side: B, {FEED}, ups: UPS-B, panel: X}}"]
    feed = f"{{name: A, side: A, {FEED}, ups: UPS-A, panel: X}}"
    lines += ["  - name: R3", "    redundancy: N", f"    feeds: [{feed}]"]
    rows = [f"  - {{name: s{r}{k}, rack: R{r}, position: {4 * k - 3}, u_height: 4, power_w: {{max: 15000}},"
            " psu: {count: 4, rating_w: 8000, redundant: 2}}" for r in (1, 2) for k in range(1, 5)]
    rows += [f"  - {{name: s3{k}, rack: R3, position: {4 * k - 3}, u_height: 4, power_w: {{max: 12000}},"
             " psu: {count: 2, rating_w: 8000, redundant: 1}}" for k in range(1, 5)]
    run = audit("\n".join(lines) + "\n", "kind: Servers\nfacility: f\nservers:\n" + "\n".join(rows) + "\n")
    x = run.capacity.panels.row(("f", "X"))
    assert (x["load_kw"], x["failover_load_kw"], x["failover_case"]) == (108, 138, "rack R1 side A")
    assert "power.panel-failover" not in run.fired("panel/f/X")


def test_an_unbalanced_three_phase_feed_is_counted_by_its_lightest_line(audit: Auditor) -> None:
    """A three-phase feed whose one server's one PSU puts 9 kW on one line (9, 0, 0), and
    a 7 kW single-phase feed, on a 415 V 50 A panel (9.584 kW a line): wired onto an
    empty line the single feed leaves every line within (9 kW at most, 93.9 %). Taking
    the three-phase feed as a third a line would read 3 + 7 = 10 kW (104 %), a false alarm;
    its lightest line is 0 and its heaviest 9: the floor is 9 kW, which that wiring meets."""
    feeds = [("voltage: 415, amps: 32, phase: 3", 9000), ("voltage: 240, amps: 40", 7000)]
    facility, servers = single_feeds("voltage: 415, amps: 50", feeds, psus=1)
    run = audit(facility, servers)
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert rpp["worst_phase_load_kw"] == 9
    assert rpp["worst_phase_pct"] == pytest.approx(93.91, abs=0.01)
    assert "power.panel-phase-overload" not in run.fired("panel/f/RPP-1")


def test_a_busway_of_three_phase_feeds_has_its_lines_floored_too(audit: Auditor) -> None:
    """BW-A (230.016 kW, 76.672 a line) holds four A feeds. Each feed's 4 servers put
    2 of their 4 PSUs on it: 8 PSUs dealt over 3 lines, 3, 3 and 2, of 3.75 kW each
    (every feed up): lines of 11.25, 11.25 and 7.5 kW. Rotated as best they can be,
    four such feeds put 41.25 kW on some line (the floor: 4 x 7.5 on every line, and
    eight 3.75s to deal, three on some line). BW-B fails: each PSU 7.5 kW, lines of
    22.5, 22.5 and 15: 60 + 22.5 = 82.5 kW (107.6 %), beside the busway's own 104.3 %
    (power.panel-failover, not the line check, says so)."""
    run = audit(facility(BUSWAYS, [ON_BUSWAYS] * 4), servers(4))
    bw = run.capacity.panels.row(("f", "BW-A"))
    assert (bw["failover_load_kw"], bw["phase_capacity_kw"]) == (240, 76.672)
    assert (bw["worst_phase_load_kw"], bw["worst_phase_case"]) == (82.5, "panel BW-B")
    assert bw["worst_phase_pct"] == pytest.approx(107.60, abs=0.01)
    assert run.fired("panel/f/BW-A") == {"power.panel-failover"}


def test_three_phase_feeds_alone_overload_a_line(audit: Auditor) -> None:
    """The two (0, 12, 12) feeds without the 1 kW single-phase one: some line carries
    24 kW (125.2 %) all the same, the panel 48 of its 57.5 kW. Showing line figures
    only beside a single-phase feed passed it: a false pass."""
    run = audit(*single_feeds("voltage: 415, amps: 100", [(THREE_63, 24000)] * 2))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (24, "every feed up")
    assert run.fired("panel/f/RPP-1") == {"power.panel-phase-overload"}


def test_the_panel_line_check_from_the_command_line(monkeypatch: pytest.MonkeyPatch, cli: CliRunner) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("audit", "panel-lines", "--select", "power.*", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "panel-lines/facility.yaml:20:7: error power.panel-phase-overload with every feed up, a line of"
        " panel f/RPP-1 carries at least 11 kW however its 4 feeds are wired to its lines, 115 % of its"
        " 9.58 kW a line, though the panel as a whole is within its 28.8 kW: that pole of its breaker trips",
        "panel-lines/facility.yaml:21:7: error power.panel-phase-overload when rack R5 feed a fails, a line"
        " of panel f/RPP-2 carries at least 9 kW however its 3 feeds are wired to its lines, 117 % of its"
        " 7.67 kW a line, though the panel as a whole is within its 23.0 kW: that pole of its breaker trips",
        "panel-lines/facility.yaml:22:7: error power.panel-phase-overload with every feed up, a line of"
        " panel f/RPP-3 carries 11 kW as its 3 feeds are wired, 115 % of its 9.58 kW a line, though the"
        " panel as a whole is within its 28.8 kW: that pole of its breaker trips",
        "panel-lines/facility.yaml:36:5: error power.rack-panel-loss N+1 rack f/R5 has two or more of its"
        " feeds on panel RPP-2: when that panel's breaker opens the rack loses more feeds than it is sized to"
        " lose",
        summary(error=4),
    ]


def test_two_three_phase_feeds_on_two_lines_each_overload_one_whatever_the_rotation(audit: Auditor) -> None:
    """Two 415 V 63 A three-phase feeds, each with a 24 kW server of 2 single-phase PSUs
    (12 kW on two lines, none on the third), and a 1 kW single-phase feed on a 415 V 100 A
    panel (19.168 kW a line): four 12 kW loads on three lines, so some line carries two,
    24 kW (125.2 %), though the panel carries 49 of its 57.5 kW. Counting each three-phase
    feed by its lightest line alone (0) left 1 kW: a false pass."""
    run = audit(*single_feeds("voltage: 415, amps: 100", [(THREE_63, 24000)] * 2 + [(LN_240, 1000)]))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (24, "every feed up")
    assert rpp["worst_phase_pct"] == pytest.approx(125.21, abs=0.01)
    assert run.fired("panel/f/RPP-1") == {"power.panel-phase-overload"}


def two_panel_facility(
    racks: list[str], servers: list[str], rpp_a: str = "voltage: 415, amps: 80"
) -> tuple[str, str]:
    """A facility `f` with panels RPP-A and RPP-B (415 V 80 A), and `racks`, `servers` (YAML lines)."""
    lines = ["kind: Facility", "name: f", "power:", "  it_capacity_kw: 2000", "  panels:",
             f"    - {{name: RPP-A, {rpp_a}}}", "    - {name: RPP-B, voltage: 415, amps: 80}", "racks:",
             *racks]
    return "\n".join(lines) + "\n", "kind: Servers\nfacility: f\nservers:\n" + "\n".join(servers) + "\n"


def test_a_three_phase_feed_doubles_on_its_lines_when_the_other_panel_fails(audit: Auditor) -> None:
    """RPP-A, 415 V 80 A: 415 x 80 x 0.8 x sqrt 3 = 46.003 kW, 15.334 a line. A 2N rack's
    415 V 63 A three-phase feeds, A on RPP-A and B on RPP-B, carry an 18 kW server of 6
    PSUs (3 a side): 9 kW a feed, 3 a line. An N rack's 12 kW on a 240 V 63 A single-phase
    feed on RPP-A. Every feed up: 3 + 12 = 15 kW on a line (97.8 %). RPP-B fails: the A
    feed carries 18 kW, 6 a line: 6 + 12 = 18 kW (117.4 %), the panel 30 kW (65.2 %).
    Counting the A feed by its lines with every feed up read 15 kW: a false pass."""
    facility, servers = two_panel_facility(
        ["  - name: R1", "    redundancy: 2N", "    feeds:",
         f"      - {{name: A, side: A, {THREE_63}, panel: RPP-A}}",
         f"      - {{name: B, side: B, {THREE_63}, panel: RPP-B}}",
         "  - name: R2", "    redundancy: N", f"    feeds: [{{name: A, {LN_240_63}, panel: RPP-A}}]"],
        ["  - {name: s1, rack: R1, position: 1, u_height: 4, power_w: {max: 18000},"
         " psu: {count: 6, rating_w: 6000, redundant: 3}}",
         "  - {name: s2, rack: R2, position: 1, u_height: 4, power_w: {max: 12000},"
         " psu: {count: 2, rating_w: 12000}}"],
    )
    run = audit(facility, servers)
    rpp = run.capacity.panels.row(("f", "RPP-A"))
    assert (rpp["load_kw"], rpp["failover_load_kw"]) == (21, 30)
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (18, "panel RPP-B")
    assert rpp["worst_phase_pct"] == pytest.approx(117.39, abs=0.01)
    assert run.fired("panel/f/RPP-A") == {"power.panel-phase-overload"}


def n_plus_1_on_one_panel() -> tuple[str, str]:
    """An N+1 rack's three 240 V 63 A feeds all on RPP-A (415 V 40 A), and an 18 kW
    server of 3 PSUs on them."""
    feeds = ", ".join(f"{{name: {x}, {LN_240_63}, panel: RPP-A}}" for x in "abc")
    return two_panel_facility(
        ["  - name: R1", "    redundancy: N+1", f"    feeds: [{feeds}]"],
        ["  - {name: s1, rack: R1, position: 1, u_height: 4, power_w: {max: 18000},"
         " psu: {count: 3, rating_w: 12000, redundant: 1}}"],
        rpp_a="voltage: 415, amps: 40",
    )


def test_an_n_plus_1_racks_lost_feed_loads_a_line_with_the_others(audit: Auditor) -> None:
    """An N+1 rack's three 240 V 63 A feeds (12.096 kW each) all on RPP-A, 415 V 40 A
    (23.002 kW, 7.667 a line), carry an 18 kW server of 3 PSUs: 6 kW a feed, one a line
    (78.3 %). The rack loses feed a, as it is designed to: 9 kW on each of two feeds,
    9 kW on a line (117.4 %), the panel still 18 kW (78.3 %). Only the panels' and UPS
    blocks' failures were counted: 6 kW, a false pass."""
    facility, servers = n_plus_1_on_one_panel()
    run = audit(facility, servers)
    rpp = run.capacity.panels.row(("f", "RPP-A"))
    assert (rpp["load_kw"], rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (18, 9, "rack R1 feed a")
    assert rpp["worst_phase_pct"] == pytest.approx(117.39, abs=0.01)
    assert run.fired("panel/f/RPP-A") == {"power.panel-phase-overload"}


# ---------------------------------------------------------------- the line floor itself
NAN3 = [float("nan")] * 3


@pytest.mark.parametrize(
    ("rows", "floor"),
    [
        # (kind, load, phases): loads dealt whole over three lines.
        ([("ln", 5, NAN3)] * 3, 5),  # one a line
        ([("ln", 5, NAN3)] * 4, 10),  # two share a line
        ([("ln", 10, NAN3)] * 4 + [("ln", 1, NAN3)] * 2, 20),
        ([("ln", 10, NAN3), ("ln", 9, NAN3), ("ln", 8, NAN3)], 10),  # the largest
        ([("ln", 3, NAN3)] * 7, 9),  # 7 on 3 lines: three share one
        ([("ln", 4, NAN3), ("ln", 4, NAN3), ("ln", 4, NAN3), ("ln", 3, NAN3), ("ln", 3, NAN3)], 7),
        # A three-phase feed (2, 5, 8): 2 on every line, 3 and 6 to deal; with a 6 kW single
        # feed, 6 and 6 on two lines at best: 2 + 6 = 8.
        ([("three", 15, [2, 5, 8]), ("ln", 6, NAN3)], 8),
        # Two (0, 12, 12): four 12s on three lines, 24.
        ([("three", 24, [0, 12, 12])] * 2, 24),
        # Balanced three-phase feeds add their lightest line to every line.
        ([("three", 24, [8, 8, 8])] * 2 + [("ln", 5.5, NAN3)], 21.5),
        # Line to line: 18 kW on a pair is 18 / sqrt 3 of a line.
        ([("ll", 18, NAN3)], 18 / 3**0.5),
        ([("ll", 9, NAN3)] * 4, 18 / 3**0.5),
        # Feeds that name their line load it: as wired, no floor to guess.
        ([("ln:L1", 5, NAN3), ("ln:L1", 5, NAN3), ("ln:L2", 5, NAN3)], 10),
        # L1 and L2 carry 8 as wired, L3 2; a 7 kW feed to deal: onto L3 at best, 9.
        ([("ln:L1", 8, NAN3), ("ln:L2", 8, NAN3), ("ln:L3", 2, NAN3), ("ln", 7, NAN3)], 9),
        # L1 and L2 at 8, L3 empty, an 8 kW feed to deal: 8 everywhere at best.
        ([("ln:L1", 8, NAN3), ("ln:L2", 8, NAN3), ("ln", 8, NAN3)], 8),
        # (2, 5, 8) rotated beside 6 kW on L1: its 2 on L1 at best, 8.
        ([("three", 15, [2, 5, 8]), ("ln:L1", 6, NAN3)], 8),
        # 9 kW on L1-L2 and 9 on L3-L1: L1 carries both pairs' currents, 9 kW of a line
        # (dealt anyhow they read 9 / sqrt 3 = 5.196).
        ([("ll:L1-L2", 9, NAN3), ("ll:L3-L1", 9, NAN3)], 9),
        ([("ll", 9, NAN3)] * 2, 9 / 3**0.5),
        # 6 kW on L1 and 8 kW on L1-L2 (a 415 V single-phase feed off 415 V): L1 carries both,
        # the pair's 8 / sqrt 3 at 30 degrees: |6 + 4 + j 8 / (2 sqrt 3)| = sqrt(100 + 64 / 12)
        # = 10.263 kW. The larger part alone, 6, missed it.
        ([("ln:L1", 6, NAN3), ("ll:L1-L2", 8, NAN3)], (100 + 64 / 12) ** 0.5),
        # The same pair on L2-L3: L1 carries 6 alone, L2 |4 + j 2.309| = 4.619.
        ([("ln:L1", 6, NAN3), ("ll:L2-L3", 8, NAN3)], 6),
    ],
)
def test_the_heaviest_lines_floor(rows: list[tuple[str, float, list[float]]], floor: float) -> None:
    import numpy as np

    from checker.derive.capacity import panels

    kinds = {"ln": panels.LINE_NEUTRAL, "ll": panels.LINE_LINE, "three": panels.THREE}
    kind = np.asarray([kinds[k.split(":")[0]] for k, _, _ in rows], dtype=np.intp)
    named = np.asarray([panels._LINES[k.split(":")[1]] if ":" in k else -1 for k, _, _ in rows],
                       dtype=np.intp)
    load = np.asarray([x for _, x, _ in rows], dtype=np.float64)
    lines = np.asarray([p for _, _, p in rows], dtype=np.float64)
    # The same rows twice, as two states, in a shuffled order: each state on its own.
    state = np.repeat([0, 1], len(rows))
    order = np.random.default_rng(7).permutation(2 * len(rows))
    got = panels._floors(state[order], np.tile(kind, 2)[order], np.tile(load, 2)[order],
                         np.tile(lines, (2, 1))[order], 2, np.tile(named, 2)[order])
    assert got.tolist() == pytest.approx([floor, floor], abs=1e-9)


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "past PANEL_ROWS"])
def test_a_dark_feed_is_off_its_panels_lines_after_the_failure(
    monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    """A panel with a 2N rack's 1 kW B feed and an N rack's 30 kW feed; a UPS block's
    failure doubles the B feed and takes the N rack dark: 2 kW on a line. Past
    PANEL_ROWS the floor is the larger of a third of 31 + 1 - 30 and the changed feed's
    2 kW; leaving the dark feed in would read (31 + 1) / 3 = 10.7 kW, a false alarm."""
    import numpy as np

    from checker.derive.capacity import panels
    from checker.derive.capacity.feeds import Moves

    if not exact:
        monkeypatch.setattr(panels, "PANEL_ROWS", 0)
    monkeypatch.setattr(panels, "CHUNK_ROWS", 1)
    w = panels.Wiring(np.asarray([0, 0]), np.asarray([panels.LINE_NEUTRAL] * 2), np.asarray([1.0, 30.0]),
                      np.full((2, 3), np.nan), np.asarray([True]), np.asarray([-1, -1]))
    moves = Moves(np.asarray([0], dtype=np.int64), np.asarray([1.0]), np.full((1, 3), np.nan))
    best, which = panels._after(w, moves, np.asarray([-1, 0]), None)
    assert (best.tolist(), which.tolist()) == ([2.0], [0])


def test_past_panel_rows_the_floor_is_lower_or_equal(monkeypatch: pytest.MonkeyPatch, audit: Auditor) -> None:
    """The N+1 rack losing a feed: its two feeds of 9 kW alone say 9 kW, as exactly."""
    from checker.derive.capacity import panels

    monkeypatch.setattr(panels, "PANEL_ROWS", 0)
    facility, servers = n_plus_1_on_one_panel()
    rpp = audit(facility, servers).capacity.panels.row(("f", "RPP-A"))
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (9, "rack R1 feed a")


def test_equal_floors_keep_the_first_case_whatever_else_is_summed_beside_them(audit: Auditor) -> None:
    """RPP-2 holds a 5.3 kW feed and 0.1 kW of an N+1 rack's; when RPP-3 fails the rack's
    feed on RPP-2 carries 0.15 kW: a floor of 5.3 kW either way, so 'every feed up'
    stands. Summed in one run with RPP-1's large loads, the every-feed-up floor came
    out 5.299999999999997 and the failure's 5.3, naming the failure."""
    big = [38581, 16917, 3417, 1975, 48983]
    feed = "{name: A, voltage: 240, amps: 250, panel: RPP-1}"
    racks = [f"  - {{name: N{i}, redundancy: N, feeds: [{feed}]}}" for i in range(5)]
    racks += ["  - {name: M, redundancy: N, feeds: [{name: A, voltage: 240, amps: 32, panel: RPP-2}]}",
              "  - {name: R, redundancy: N+1, feeds: [{name: a, voltage: 240, amps: 32, panel: RPP-3},"
              " {name: b, voltage: 240, amps: 32, panel: RPP-4},"
              " {name: c, voltage: 240, amps: 32, panel: RPP-2}]}"]
    panels = ["    - {name: RPP-1, voltage: 415, amps: 400}"]
    panels += [f"    - {{name: RPP-{i}, voltage: 415, amps: 50}}" for i in (2, 3, 4)]
    fac = "\n".join(["kind: Facility", "name: f", "power:", "  it_capacity_kw: 2000", "  panels:", *panels,
                     "racks:", *racks]) + "\n"
    srv = ["kind: Servers", "facility: f", "servers:"]
    srv += [f"  - {{name: s{i}, rack: N{i}, position: 1, u_height: 4, power_w: {{max: {w}}},"
            " psu: {count: 1, rating_w: 60000}}" for i, w in enumerate(big)]
    srv += ["  - {name: m, rack: M, position: 1, u_height: 4, power_w: {max: 5300},"
            " psu: {count: 1, rating_w: 6000}}",
            "  - {name: r, rack: R, position: 1, u_height: 1, power_w: {max: 300},"
            " psu: {count: 3, rating_w: 1000, redundant: 1}}"]
    rpp = audit(fac, "\n".join(srv) + "\n").capacity.panels.row(("f", "RPP-2"))
    assert (rpp["worst_phase_load_kw"], rpp["worst_phase_case"]) == (5.3, "every feed up")


# ---------------------------------------------------------------- feeds that name their line
def test_feeds_wired_two_on_a_line_overload_it_where_the_floor_passes(audit: Auditor) -> None:
    """Three 5.5 kW feeds on a 415 V 50 A panel (9.584 kW a line): one a line would be
    5.5 kW (57.4 %), and that floor passed; wired L1, L1, L2 (feeds[].line), L1 carries
    11 kW (114.8 %)."""
    feeds = [(f"{LN_240}, line: {line}", 5500) for line in ("L1", "L1", "L2")]
    run = audit(*single_feeds("voltage: 415, amps: 50", feeds))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert (rpp["worst_phase_load_kw"], rpp["line_feed_count"]) == (11, 3)
    assert run.finding("power.panel-phase-overload", "panel/f/RPP-1").message == (
        "with every feed up, a line of panel f/RPP-1 carries 11 kW as its 3 feeds are wired, 115 % of its"
        " 9.58 kW a line, though the panel as a whole is within its 28.8 kW: that pole of its breaker trips"
    )


def test_a_feed_without_a_line_is_dealt_beside_those_with_one(audit: Auditor) -> None:
    """L1 and L2 carry 5.5 kW as wired, and a 2 kW feed names no line: on L3 at best,
    so the floor is 5.5 kW (57.4 %), no finding."""
    feeds = [(f"{LN_240}, line: L1", 5500), (f"{LN_240}, line: L2", 5500), (LN_240, 2000)]
    run = audit(*single_feeds("voltage: 415, amps: 50", feeds))
    rpp = run.capacity.panels.row(("f", "RPP-1"))
    assert (rpp["worst_phase_load_kw"], rpp["line_feed_count"]) == (5.5, 2)
    assert "power.panel-phase-overload" not in run.fired("panel/f/RPP-1")


@pytest.mark.parametrize(
    ("panel", "spec", "column", "message"),
    [
        ("voltage: 415, amps: 50", "voltage: 240, amps: 32, line: L1-L2", 53,
         "feed A of rack R1 at 240 V off the 415 V panel RPP-1 is wired line to neutral: its line is one of"
         " L1, L2, L3, not L1-L2"),
        ("voltage: 208, amps: 100", "voltage: 208, amps: 32, line: L2", 53,
         "feed A of rack R1 at 208 V off the 208 V panel RPP-1 is wired line to line: its line is one of"
         " L1-L2, L2-L3, L3-L1, not L2"),
        ("voltage: 240, amps: 100, phase: 1", "voltage: 240, amps: 32, line: L1", 53,
         "feed A of rack R1 names a line of panel RPP-1, which is single-phase"),
        ("voltage: 415, amps: 100", "voltage: 415, amps: 32, phase: 3, line: L1", 63,
         "feed A of rack R1 is three-phase: it is on every line of its panel, and names none"),
        ("voltage: 240, amps: 100, phase: 1", "voltage: 415, amps: 32, phase: 3", 64,
         "feed A of rack R1 is three-phase, but its panel RPP-1 is single-phase: a three-phase feed is a"
         " circuit of a three-phase panel"),
    ],
)
def test_a_line_the_feed_cannot_be_on_is_a_located_error(
    tmp_path: Path, panel: str, spec: str, column: int, message: str
) -> None:
    facility, _ = single_feeds(panel, [(spec, 1000)])
    (tmp_path / "facility.yaml").write_text(facility)
    _, problems = load([tmp_path])
    assert [(p.line, p.column, p.message) for p in problems] == [(10, column, message)]


def test_cli_a_line_without_a_panel_exits_2(tmp_path: Path, cli: CliRunner) -> None:
    (tmp_path / "facility.yaml").write_text(
        "kind: Facility\nname: f\npower: {it_capacity_kw: 100}\nracks:\n"
        "  - {name: R1, feeds: [{name: A, voltage: 240, amps: 32, line: L1}]}\n"
    )
    run = cli("audit", str(tmp_path), *AS_OF)
    assert (run.code, run.err) == (2, "")
    assert run.lines == [
        f"{tmp_path / 'facility.yaml'}:5:64: error schema.invalid feed A of rack R1 names a line but no"
        " panel: a line is one of its panel's",
        summary(error=1),
    ]
