"""UPS blocks, hand-computed: each block with every block up and after each
single-block failure its topology is designed for (Schneider Electric WP 75).

Racks are one server each, 2N, with one feed a side; feeds are 415 V 300 A
three-phase (172.5 kW), sized so that only the blocks are at issue. A server's
PSUs share its draw equally, so with both sides up a rack puts half its draw
on each side's block, and all of it on the surviving side's block when the
other side's block fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.load.build import load
from tests.conftest import AS_OF, CliRunner
from tests.derive.capacity.test_capacity import Auditor, audit, rulebook

__all__ = ["audit", "rulebook"]  # fixtures, used by name

ROOT = Path(__file__).resolve().parents[3]
FEED = "voltage: 415, amps: 300, phase: 3"


def facility(ups: str, racks: list[tuple[str | None, str | None]], power: str = "") -> str:
    """A facility `f` with `ups` as its power.ups and one 2N rack per (A block, B block)."""
    given = f"  {power}\n" if power else ""
    lines = [f"kind: Facility\nname: f\npower:\n{given}  ups: {ups}\nracks:" + ("" if racks else " []")]
    for i, (a, b) in enumerate(racks, 1):
        on_a = f", ups: {a}" if a else ""
        on_b = f", ups: {b}" if b else ""
        lines.append(
            f"  - name: R{i:02d}\n    redundancy: 2N\n    feeds:\n"
            f"      - {{name: A, side: A, {FEED}{on_a}}}\n      - {{name: B, side: B, {FEED}{on_b}}}"
        )
    return "\n".join(lines) + "\n"


def servers(kw: list[float]) -> str:
    rows = [
        f"  - {{name: s{i:02d}, rack: R{i:02d}, position: 1, u_height: 4, power_w: {{max: {k * 1000:g}}},"
        f" psu: {{count: 6, rating_w: 48000, redundant: 3}}}}"
        for i, k in enumerate(kw, 1)
    ]
    return "kind: Servers\nfacility: f\nservers:\n" + "\n".join(rows) + "\n"


def blocks(*kw: float, reserve: str = "") -> str:
    return "[" + ", ".join(
        f"{{name: U{i}, capacity_kw: {k:g}{', reserve: true' if f'U{i}' == reserve else ''}}}"
        for i, k in enumerate(kw, 1)
    ) + "]"


THREE = "{redundancy: distributed, blocks: " + blocks(1250, 1250, 1250) + "}"
PAIRED = [("U1", "U2")] * 8 + [("U2", "U3")] * 4 + [("U3", "U1")] * 4


def test_a_distributed_ups_whose_racks_lean_on_one_block(audit: Auditor) -> None:
    # 16 racks of 142 kW = 2,272 kW: 91 % of the usable 3 x 1,250 - 1,250 = 2,500 kW.
    run = audit(facility(THREE, PAIRED), servers([142] * 16))
    fac = run.capacity.facilities.row("f")
    assert (fac["it_capacity_kw"], fac["ups_load_kw"]) == (2500, 2272)
    assert fac["ups_utilization_pct"] == pytest.approx(90.88, abs=0.01)
    u1, u2, u3 = (run.capacity.ups_blocks.row(("f", n)) for n in ("U1", "U2", "U3"))
    # Every block up: U1 and U2 carry 12 racks x 71 kW, U3 8 x 71 kW.
    assert (u1["load_kw"], u2["load_kw"], u3["load_kw"]) == (852, 852, 568)
    # U2 fails: the 8 U1/U2 racks put 142 kW each on U1, the 4 U3/U1 racks 71 kW.
    assert (u1["failover_load_kw"], u1["failover_case"]) == (1420, "block U2")
    assert u1["failover_utilization_pct"] == pytest.approx(113.6, abs=0.01)
    assert (u2["failover_load_kw"], u2["failover_case"]) == (1420, "block U1")
    # U1 or U2 fails: 4 racks put 142 kW on U3 and 4 racks 71 kW (a tie: the first block named).
    assert (u3["failover_load_kw"], u3["failover_case"]) == (852, "block U1")
    assert run.finding("power.ups-block-failover-overload", "ups/f/U1").message == (
        "when UPS block U2 fails, block f/U1 carries 1420 kW, 114 % of its 1250 kW (distributed UPS)"
    )
    assert "power.ups-block-failover-overload" not in run.fired("ups/f/U3")
    assert "power.facility-it-capacity" not in run.fired("facility/f")


def test_balanced_pairs_ride_through_any_block(audit: Auditor) -> None:
    # The same 2,272 kW paired evenly, U1/U2, U2/U3, U3/U1 x ~5: 16 racks as 6/5/5.
    even = [("U1", "U2")] * 6 + [("U2", "U3")] * 5 + [("U3", "U1")] * 5
    run = audit(facility(THREE, even), servers([142] * 16))
    worst = max(run.capacity.ups_blocks.row(("f", n))["failover_load_kw"] for n in ("U1", "U2", "U3"))
    # U1 when U2 fails: 6 x 142 + 5 x 71 = 1,207 kW (96.6 %); U2 when U1 fails: the same.
    assert worst == 1207
    assert not any(f.rule.startswith("power.ups-block") for f in run.findings)


def test_2n_system_plus_system_carries_everything_on_the_survivor(audit: Auditor) -> None:
    ups = "{redundancy: 2N, blocks: " + blocks(1000, 1000) + "}"
    run = audit(facility(ups, [("U1", "U2")] * 8), servers([130] * 8))
    u1 = run.capacity.ups_blocks.row(("f", "U1"))
    assert (u1["load_kw"], u1["failover_load_kw"], u1["failover_case"]) == (520, 1040, "block U2")
    assert run.capacity.facilities.row("f")["it_capacity_kw"] == 1000  # the smaller system
    assert "power.ups-block-failover-overload" in run.fired("ups/f/U1")


@pytest.mark.parametrize(
    ("kw", "shares", "fires"),
    [
        # 3 x 500 + 250 kW on one bus, usable 1,750 - 500 = 1,250 kW. 1,200 kW: a 500 kW module
        # carries 1,200 x 500 / 1,750 = 342.9 kW, and 1,200 x 500 / 1,250 = 480 kW without a 500.
        (1200, (342.857, 480.0), False),
        # 1,300 kW: 520 kW without another 500 kW module, 104 %.
        (1300, (371.429, 520.0), True),
    ],
)
def test_an_n_plus_1_bus_keeps_its_total_less_the_largest_module(
    audit: Auditor, kw: float, shares: tuple[float, float], fires: bool
) -> None:
    ups = "{redundancy: N+1, blocks: " + blocks(500, 500, 500, 250) + "}"
    run = audit(facility(ups, [(None, None)] * 10), servers([kw / 10] * 10))
    assert run.capacity.facilities.row("f")["it_capacity_kw"] == 1250
    u1 = run.capacity.ups_blocks.row(("f", "U1"))
    assert (round(u1["load_kw"], 3), round(u1["failover_load_kw"], 3)) == shares
    assert u1["failover_case"] == "block U2"
    assert ("power.ups-block-failover-overload" in run.fired("ups/f/U1")) == fires
    assert ("power.facility-it-capacity" in run.fired("facility/f")) == fires


def test_a_catchers_reserve_takes_the_largest_primary(audit: Auditor) -> None:
    # Primaries U1 (900 kW of racks) and U2 (600 kW); the 800 kW reserve U3 takes U1: 112.5 %.
    ups = "{redundancy: catcher, blocks: " + blocks(1000, 1000, 800, reserve="U3") + "}"
    racks = [("U1", "U1")] * 6 + [("U2", "U2")] * 4
    run = audit(facility(ups, racks), servers([150] * 10))
    u1, u3 = (run.capacity.ups_blocks.row(("f", n)) for n in ("U1", "U3"))
    assert (u1["load_kw"], u3["load_kw"], u3["failover_load_kw"], u3["failover_case"]) == (
        900, 0, 900, "block U1"
    )
    assert run.capacity.facilities.row("f")["it_capacity_kw"] == 2000  # the primaries
    assert "power.ups-block-failover-overload" in run.fired("ups/f/U3")
    # A catcher's racks are on one block by design: the reserve covers them.
    assert "power.rack-ups-block-loss" not in run.fired("rack/f/R01")


def test_a_rack_with_both_sides_on_one_block_goes_dark_with_it(audit: Auditor) -> None:
    racks = [("U1", "U2"), ("U1", "U1"), ("U2", "U3")]
    run = audit(facility(THREE, racks), servers([100] * 3))
    r2 = run.capacity.racks.row(("f", "R02"))
    assert (r2["ups_blocks"], r2["ups_failover_short_servers"], r2["ups_failover_case"]) == (1, 1, "block U1")
    assert run.finding("power.rack-ups-block-loss", "rack/f/R02").message == (
        "when UPS block U1 fails, 1 server of rack f/R02 keeps less than its peak draw:"
        " its feeds are on 1 UPS block"
    )
    assert run.capacity.racks.row(("f", "R01"))["ups_failover_short_servers"] == 0
    assert "power.rack-ups-block-loss" not in run.fired("rack/f/R01")


def test_cooling_on_the_ups_counts_against_it(audit: Auditor) -> None:
    ups = "{redundancy: 2N, blocks: [{name: U1, capacity_kw: 1000, mechanical_kw: 60}, {name: U2, capacity_kw: 1000, mechanical_kw: 60}]}"  # noqa: E501
    run = audit(facility(ups, [("U1", "U2")] * 7), servers([130] * 7))
    fac = run.capacity.facilities.row("f")
    # 910 kW of IT + 120 kW of pumps = 1,030 kW on the 1,000 kW of a 2N system.
    assert (fac["peak_it_kw"], fac["ups_mechanical_kw"], fac["ups_load_kw"]) == (910, 120, 1030)
    assert "power.facility-it-capacity" in run.fired("facility/f")
    # When U2 fails U1 carries all 910 kW of IT and its own 60 kW of pumps; U2's stop with it,
    # and nothing says what keeps the coolant flowing: each block's pumps stop with it.
    assert run.capacity.ups_blocks.row(("f", "U1"))["failover_load_kw"] == 970
    for name in ("U1", "U2"):
        assert run.capacity.ups_blocks.row(("f", name))["mechanical_stops_kw"] == 60
        assert "power.ups-block-cooling-stops" in run.fired(f"ups/f/{name}")
    assert run.finding("power.ups-block-cooling-stops", "ups/f/U2").message == (
        "when UPS block f/U2 fails, the 60 kW of cooling on it stops with it (2N UPS): no block takes it"
        " over and no other pumps are said to carry the flow without it"
    )


@pytest.mark.parametrize(
    ("keeps", "failover_kw", "stops_kw", "fired"),
    [
        # An STS moves U2's 60 kW of pumps to U1: 910 + 60 + 60 = 1,030 kW on 1,000 kW, 103 %.
        ("mechanical_transfer_to: U1", 1030, 0, {"power.ups-block-failover-overload"}),
        # Pumps on U1 carry the flow alone: U2's stop, U1 carries 910 + 60 = 970 kW.
        ("mechanical_redundant: true", 970, 0, set()),
        # Neither: U2's pumps stop, and so does their coolant.
        ("", 970, 60, {"power.ups-block-cooling-stops"}),
    ],
)
def test_what_keeps_a_failed_blocks_cooling_running(
    audit: Auditor, keeps: str, failover_kw: float, stops_kw: float, fired: set[str]
) -> None:
    u2 = "{name: U2, capacity_kw: 1000, mechanical_kw: 60" + (f", {keeps}" if keeps else "") + "}"
    ups = "{redundancy: 2N, blocks: [{name: U1, capacity_kw: 1000, mechanical_kw: 60, mechanical_redundant: true}, "  # noqa: E501
    run = audit(facility(ups + u2 + "]}", [("U1", "U2")] * 7), servers([130] * 7))
    u1, u2_row = run.capacity.ups_blocks.row(("f", "U1")), run.capacity.ups_blocks.row(("f", "U2"))
    assert (u1["failover_load_kw"], u2_row["mechanical_stops_kw"], u1["mechanical_stops_kw"]) == (
        failover_kw, stops_kw, 0
    )
    checked = {"power.ups-block-failover-overload", "power.ups-block-cooling-stops"}
    assert (run.fired("ups/f/U1") | run.fired("ups/f/U2")) & checked == fired


N1_BUS = "{redundancy: N+1, blocks: " + blocks(500, 500) + "}"
CATCHER = "{redundancy: catcher, blocks: " + blocks(500, 500) + "}"
TWO_N_OF_3 = "{redundancy: 2N, blocks: " + blocks(500, 500, 500) + "}"
TWICE = "{blocks: [{name: U1, capacity_kw: 500}, {name: U1, capacity_kw: 500}]}"


@pytest.mark.parametrize(
    ("ups", "racks", "power", "where", "message"),
    [
        (THREE, [("U1", None)], "", ("facility.yaml", 10, 9),
         "feed B of rack R01: say which UPS block feeds it (ups: NAME); facility f has U1, U2, U3"),
        (THREE, [("U1", "U4")], "", ("facility.yaml", 10, 68), "facility f has no UPS block 'U4'"),
        (N1_BUS, [("U1", None)], "", ("facility.yaml", 9, 63),
         "facility f's N+1 UPS is modules on one bus: its feeds name no block"),
        (THREE, [("U1", "U2")], "it_capacity_kw: 100", ("facility.yaml", 4, 3),
         "power: give it_capacity_kw or ups blocks, not both: the blocks give the capacity"),
        (CATCHER, [("U1", "U2")], "", ("facility.yaml", 4, 8),
         "a catcher UPS has reserve blocks (reserve: true) and blocks they back"),
        (TWO_N_OF_3, [("U1", "U2")], "", ("facility.yaml", 4, 8),
         "2N is two systems: give 2 blocks, not 3 (or: distributed)"),
        (TWICE, [], "", ("facility.yaml", 4, 55), "duplicate UPS block name 'U1'"),
        ("{redundancy: 2N, blocks: [{name: U1, capacity_kw: 9, mechanical_transfer_to: U3}, "
         "{name: U2, capacity_kw: 9}]}", [], "", ("facility.yaml", 4, 85),
         "facility f has no UPS block 'U3'"),
        ("{redundancy: N+1, blocks: [{name: U1, capacity_kw: 9, mechanical_redundant: true}, "
         "{name: U2, capacity_kw: 9}]}", [], "", ("facility.yaml", 4, 62),
         "UPS block U1: mechanical_redundant is for 2N and distributed UPS designs, not N+1"),
        ("{redundancy: 2N, blocks: [{name: U1, capacity_kw: 9, mechanical_transfer_to: U2, "
         "mechanical_redundant: true}, {name: U2, capacity_kw: 9}]}", [], "", ("facility.yaml", 4, 34),
         "give mechanical_transfer_to or mechanical_redundant, not both"),
        ("{redundancy: 2N, blocks: [{name: U1, capacity_kw: 9, mechanical_transfer_to: U1}, "
         "{name: U2, capacity_kw: 9}]}", [], "", ("facility.yaml", 4, 34),
         "block U1's cooling cannot transfer to the block that failed"),
    ],
)
def test_ups_inputs_that_cannot_be_checked_are_located_errors(
    tmp_path: Path,
    ups: str,
    racks: list[tuple[str | None, str | None]],
    power: str,
    where: tuple[str, int, int],
    message: str,
) -> None:
    (tmp_path / "facility.yaml").write_text(facility(ups, racks, power))
    _, problems = load([tmp_path])
    assert [(Path(p.file).name, p.line, p.column) for p in problems] == [where]
    assert message in problems[0].message


def test_cli_finds_the_block_two_others_lean_on(
    monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    selected = ("--select", "power.ups-*", "--select", "power.rack-ups-*", "--select", "power.facility-*")
    run = cli("audit", "ups-blocks", *selected, *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "ups-blocks/facility.yaml:15:3: warning power.facility-ups-headroom facility dc1 loads its UPS to"
        " 90.9 % at peak (2272 of 2500 kW)",
        "ups-blocks/facility.yaml:19:9: error power.ups-block-failover-overload when UPS block U2 fails,"
        " block dc1/U1 carries 1420 kW, 114 % of its 1250 kW (distributed UPS)",
        "ups-blocks/facility.yaml:20:9: error power.ups-block-failover-overload when UPS block U1 fails,"
        " block dc1/U2 carries 1420 kW, 114 % of its 1250 kW (distributed UPS)",
        "checker: 2 errors, 1 warning, 0 info, 0 waived: fail",
    ]


def test_cli_a_rack_with_both_sides_on_one_block(monkeypatch: pytest.MonkeyPatch, cli: CliRunner) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("audit", "ups-dark", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "ups-dark/facility.yaml:19:5: error power.rack-ups-block-loss when UPS block U1 fails, 2 servers"
        " of rack dc2/R02 keep less than their peak draw: its feeds are on 1 UPS block",
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ]


def test_the_report_has_a_row_per_block(monkeypatch: pytest.MonkeyPatch, cli: CliRunner) -> None:
    monkeypatch.chdir(ROOT / "tests" / "fixtures")
    run = cli("report", "ups-blocks", *AS_OF)
    assert run.code == 1
    assert (
        "| [U1](ups-blocks/facility.yaml#L19) | dc1 | distributed | 1,250 kW | 852 kW | 68.16 % | block U2"
        " | 1,420 kW | 113.6 % |"
    ) in run.lines


@pytest.mark.parametrize(
    ("generators", "usable", "pct", "fires"),
    [
        # 1,500 kW of peak IT x design PUE 1.3 = 1,950 kW on the design day.
        ("{count: 3, capacity_kw: 1000, redundancy: N+1}", 2000, 97.5, False),  # two of three run
        ("{count: 2, capacity_kw: 1000, redundancy: N+1}", 1000, 195, True),
        ("{count: 4, capacity_kw: 1000, redundancy: 2N}", 2000, 97.5, False),  # either half
        ("{count: 2, capacity_kw: 1000}", 2000, 97.5, False),  # N: both run
        # Sets of their own sizes: N+1 keeps the total less the largest set, 1,000 + 1,000 +
        # 500 - 1,000 = 1,500 kW; counted as three equal sets of 833 kW it would keep 1,667.
        ("{sets: [{name: G1, capacity_kw: 1000}, {name: G2, capacity_kw: 1000}, "
         "{name: G3, capacity_kw: 500}], redundancy: N+1}", 1500, 130, True),
        # 1,200 + 900 + 900 - 1,200 = 1,800 kW: short of 1,950 (as equal sets, 2,000: a pass).
        ("{sets: [{name: G1, capacity_kw: 1200}, {name: G2, capacity_kw: 900}, "
         "{name: G3, capacity_kw: 900}], redundancy: N+1}", 1800, 108.33, True),
        ("{sets: [{name: G1, capacity_kw: 1200}, {name: G2, capacity_kw: 1200}, "
         "{name: G3, capacity_kw: 900}], redundancy: N+1}", 2100, 92.86, False),
        ("{sets: [{name: G1, capacity_kw: 1000}, {name: G2, capacity_kw: 1000}], redundancy: 2N}",
         1000, 195, True),
    ],
)
def test_generators_carry_the_design_day_after_their_designed_failure(
    audit: Auditor, generators: str, usable: float, pct: float, fires: bool
) -> None:
    one_block = "{blocks: [{name: U1, capacity_kw: 2000}]}"
    text = facility(one_block, [(None, None)] * 10, f"generators: {generators}")
    run = audit(text.replace("name: f\n", "name: f\ndesign_pue: 1.3\n"), servers([150] * 10))
    fac = run.capacity.facilities.row("f")
    assert (fac["utility_demand_kw"], fac["generator_usable_kw"]) == (1950, usable)
    assert fac["generator_utilization_pct"] == pytest.approx(pct, abs=0.01)
    assert ("power.generator-capacity" in run.fired("facility/f")) == fires


@pytest.mark.parametrize(
    ("generators", "message"),
    [
        ("{count: 3, sets: [{name: G1, capacity_kw: 500}]}", "(equal sets) or sets, not both"),
        ("{redundancy: N+1}", "give count and capacity_kw (equal sets), or list the sets with capacity_kw"),
        ("{sets: [{name: G1, capacity_kw: 500}], redundancy: N+1}", "N+1 needs two or more generators"),
        ("{sets: [{name: G1, capacity_kw: 500}, {name: G1, capacity_kw: 500}]}", "set 'G1' is listed twice"),
        ("{sets: [{name: G1, capacity_kw: 500}, {name: G2, capacity_kw: 400}], redundancy: 2N}",
         "2N is two equal halves: list sets of one rating"),
    ],
)
def test_generator_sets_that_cannot_be_checked_are_located_errors(
    cli: CliRunner, tmp_path: Path, generators: str, message: str
) -> None:
    (tmp_path / "f.yaml").write_text(f"kind: Facility\nname: f\npower:\n  generators: {generators}\n")
    run = cli("audit", str(tmp_path / "f.yaml"), "--no-cache")
    assert run.code == 2 and run.err == ""
    assert run.lines[0].startswith(f"{tmp_path / 'f.yaml'}:4:") and message in run.lines[0], run.lines
