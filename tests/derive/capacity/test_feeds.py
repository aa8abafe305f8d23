"""Each feed's own load and each server's PSUs after a feed fails, with the
figures worked out by hand (415 V three-phase, 80 % continuous load:
a 16 A feed is 415 x 16 x 0.8 x 1.732 = 9.201 kW, a 63 A feed 36.228 kW).

A server's PSUs share its draw equally: a DGX H200 or H100 (10.2 kW, 6 PSUs)
puts 1.7 kW on each PSU with all up, 3.4 kW on each of 3 after a side loss.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.derive.capacity.feeds import cabling
from checker.load.build import load
from tests.conftest import AS_OF, CliRunner
from tests.derive.capacity.test_capacity import Auditor, ab, audit, rack, rulebook, servers, srv

__all__ = ["audit", "rulebook"]  # fixtures, used by name

P63 = "voltage: 415, amps: 63, phase: 3"
P16 = "voltage: 415, amps: 16, phase: 3"
DGX = "power_w: {max: 10200}, psu: {count: 6, rating_w: 3300, redundant: 2}"
B200 = "power_w: {max: 14300}, psu: {count: 6, rating_w: 3300, redundant: 1}"


def _side_63_16() -> str:
    return rack(
        f"[{{name: A63, side: A, {P63}}}, {{name: A16, side: A, {P16}}}, "
        f"{{name: B63, side: B, {P63}}}, {{name: B16, side: B, {P16}}}]"
    )


def test_a_16_a_pdu_beside_a_63_a_one_trips_after_a_side_loss(audit: Auditor) -> None:
    # Three DGX H200, cabled 2 PSUs to the 63 A and 1 to the 16 A PDU of each side.
    cabled = "psu: {count: 6, rating_w: 3300, redundant: 2, feeds: {A63: 2, A16: 1, B63: 2, B16: 1}}"
    run = audit(_side_63_16(), servers(*(srv(f"g{i}", "power_w: {max: 10200}", cabled) for i in range(3))))
    rack_row = run.capacity.racks.row(("f", "R1"))
    # The pooled side passes: 30.6 kW on 45.4 kW, 67 %.
    assert (rack_row["load_kw"], rack_row["capacity_kw"]) == (30.6, 45.428)
    a16 = run.capacity.feeds.row(("f", "R1", "A16"))
    # With both sides up: 3 PSUs x 1.7 kW; after side B fails: 3 x 3.4 kW.
    assert (a16["psu_count"], a16["load_kw"], a16["failover_load_kw"]) == (3, 5.1, 10.2)
    assert a16["failover_case"] == "side B"
    assert a16["failover_utilization_pct"] == pytest.approx(110.86, abs=0.01)
    assert run.finding("power.feed-failover-overload", "feed/f/R1/A16").message == (
        "when side B fails, feed f/R1/A16 carries 10.2 kW, 111 % of its 9.2 kW: "
        "its breaker trips and the servers lose this feed too"
    )
    assert "power.rack-capacity" not in run.fired("rack/f/R1")
    # The report's rack table shows the worst feed (B16 ties with A16; the first listed wins).
    assert (rack_row["worst_feed"], rack_row["worst_feed_pct"]) == ("A16", pytest.approx(110.86, abs=0.01))


def test_a_racks_psu_order_cables_every_server_without_its_own_map(audit: Auditor) -> None:
    # PSU 1 to A63, 2 to B63, 3 to A16, 4 to B16, 5 to A63, 6 to B63: as mapped by hand above.
    order = "psu_order: [A63, B63, A16, B16]"
    facility = _side_63_16().rstrip("\n") + f"\n    {order}\n"
    run = audit(facility, servers(*(srv(f"g{i}", DGX) for i in range(3))))
    a16 = run.capacity.feeds.row(("f", "R1", "A16"))
    assert (a16["psu_count"], a16["failover_load_kw"]) == (3, 10.2)
    assert run.capacity.servers.row("g0")["psu_side_w"] == 9900  # 3 PSUs a side


def test_without_a_map_the_odd_psu_of_a_side_goes_to_its_weakest_feed(audit: Auditor) -> None:
    run = audit(_side_63_16(), servers(*(srv(f"g{i}", DGX) for i in range(3))))
    a16, a63 = (run.capacity.feeds.row(("f", "R1", n)) for n in ("A16", "A63"))
    # 2 of each side's 3 PSUs on the 16 A PDU: 6 x 3.4 = 20.4 kW after side B fails.
    assert (a16["psu_count"], a16["failover_load_kw"], a63["psu_count"], a63["failover_load_kw"]) == (
        6, 20.4, 3, 10.2
    )


def test_a_16_a_pdu_in_an_n_plus_1_rack_is_over_in_normal_operation(audit: Auditor) -> None:
    # Four DGX H100 cabled 2/2/2 over 63/63/16 A: pooled N+1 capacity 45.4 kW for 40.8 kW.
    feeds = f"[{{name: P1, {P63}}}, {{name: P2, {P63}}}, {{name: P3, {P16}}}]"
    run = audit(rack(feeds, "N+1"), servers(*(srv(f"g{i}", DGX) for i in range(4))))
    assert run.capacity.racks.row(("f", "R1"))["utilization_pct"] == pytest.approx(89.82, abs=0.01)
    p3 = run.capacity.feeds.row(("f", "R1", "P3"))
    # 4 servers x 2 PSUs x 1.7 kW = 13.6 kW on 9.2 kW.
    assert (p3["psu_count"], p3["load_kw"]) == (8, 13.6)
    assert p3["utilization_pct"] == pytest.approx(147.82, abs=0.01)
    assert run.fired("feed/f/R1/P3") >= {"power.feed-overload"}
    assert {r for r in run.fired("rack/f/R1") if r.startswith("power.")} == set()


def test_three_dgx_b200_on_three_pdus_keep_13_2_of_14_3_kw_when_one_fails(audit: Auditor) -> None:
    feeds = f"[{{name: P1, {P63}}}, {{name: P2, {P63}}}, {{name: P3, {P63}}}]"
    run = audit(rack(feeds, "N+1"), servers(*(srv(f"b{i}", B200) for i in range(3))))
    row = run.capacity.servers.row("b0")
    # Any PDU takes 2 of the 6 PSUs: 4 x 3.3 kW left.
    assert (row["failover_psu_w"], row["failover_psu_case"]) == (13200, "feed P1")
    assert row["failover_psu_pct"] == pytest.approx(92.31, abs=0.01)
    assert run.finding("power.psu-feed-degraded", "server/b0").message == (
        "server b0 in N+1 rack R1 keeps 13200 W of PSUs when feed P1 fails, 92.3 % of its 14300 W "
        "peak draw: it runs at reduced performance until the feed is back"
    )
    # Each surviving PDU: 3 servers x 2 PSUs x 14.3 / 4 kW = 21.45 kW.
    assert run.capacity.feeds.row(("f", "R1", "P2"))["failover_load_kw"] == 21.45


def test_a_server_without_psus_is_taken_to_have_one_on_each_feed(audit: Auditor) -> None:
    feeds = f"[{{name: P1, {P63}}}, {{name: P2, {P16}}}]"
    run = audit(rack(feeds, "N"), servers(srv("kit", "power_w: {max: 9300}")))
    p2 = run.capacity.feeds.row(("f", "R1", "P2"))
    assert (p2["psu_count"], p2["load_kw"]) == (1, 4.65) and "failover_load_kw" not in p2


def test_a_rack_over_its_pooled_capacity_is_one_finding_on_the_rack(audit: Auditor) -> None:
    # 2N, one 16 A feed a side, 10.2 kW: the rack is over, and so is each feed after
    # a side loss; one finding says so, on the rack.
    feeds = f"[{{name: A, side: A, {P16}}}, {{name: B, side: B, {P16}}}]"
    run = audit(rack(feeds, "2N"), servers(srv("g", DGX)))
    a = run.capacity.feeds.row(("f", "R1", "A"))
    assert a["failover_utilization_pct"] == pytest.approx(110.86, abs=0.01)
    assert run.fired("rack/f/R1") >= {"power.rack-capacity"}
    assert run.fired("feed/f/R1/A") == run.fired("feed/f/R1/B") == set()


@pytest.mark.parametrize(
    ("layout", "two_n", "count", "per_side", "expected"),
    [
        # Even where it can be, the odd PSUs on the weakest feeds (then the first).
        ((("P1", "", 36.2), ("P2", "", 36.2), ("P3", "", 9.2)), False, 6, None, (2, 2, 2)),
        ((("P1", "", 36.2), ("P2", "", 36.2), ("P3", "", 9.2)), False, 4, None, (1, 1, 2)),
        ((("P1", "", 9.2), ("P2", "", 9.2)), False, 3, None, (2, 1)),
        # 2N: a side's PSUs over that side's feeds; the odd PSU on the weaker side.
        (
            (("A1", "A", 36.2), ("A2", "A", 9.2), ("B1", "B", 36.2), ("B2", "B", 9.2)),
            True, 6, None, (1, 2, 1, 2),
        ),
        ((("A", "A", 9.2), ("B", "B", 36.2)), True, 5, None, (3, 2)),
        ((("A", "A", 9.2), ("B", "B", 36.2)), True, 6, 1, (5, 1)),
    ],
)
def test_cabling_without_a_map(
    layout: tuple[tuple[str, str, float], ...],
    two_n: bool,
    count: int,
    per_side: int | None,
    expected: tuple[int, ...],
) -> None:
    assert cabling(layout, two_n, count, per_side) == expected


# Racks alike but for one thing the cabling reads, each with one server of
# three PSUs (no map): 2N, 32 A on side A and 16 A on side B puts the odd PSU
# on the weaker side B (2 on b, 1 on a); each variant cables it otherwise.
_AB = (
    "[{name: a, side: A, voltage: 415, amps: 32, phase: 3}, "
    "{name: b, side: B, voltage: 415, amps: 16, phase: 3}]"
)
_VARIANTS = {
    "R1": ("2N", _AB, ""),
    "R2": ("2N", _AB.replace("32", "8"), ""),  # side A the weaker: 2 PSUs on a
    "R3": ("2N", _AB, "psu_order: [a, b]"),  # dealt round: PSUs 1 and 3 on a
    "R4": ("N+1", _AB, ""),  # spread by kW: the odd PSU on the 16 A feed
    "R5": ("2N", _AB.replace("name: b,", "name: c,"), ""),  # another name, as R1 otherwise
    "R6": ("2N", _AB, ""),  # as R1: the same kind
}


def _racks(names: list[str]) -> str:
    lines = ["kind: Facility", "name: f", "power: {it_capacity_kw: 1000}", "racks:"]
    for name in names:
        redundancy, feeds, extra = _VARIANTS[name]
        lines += [f"  - name: {name}", f"    redundancy: {redundancy}", f"    feeds: {feeds}"]
        lines += [f"    {extra}"] if extra else []
    return "\n".join(lines) + "\n"


def _one_server_each(names: list[str]) -> str:
    psu = "power_w: {max: 6000}, psu: {count: 3, rating_w: 3300, redundant: 1}"
    return servers(*(f"{{name: s{n}, rack: {n}, {psu}}}" for n in names))


def test_racks_of_other_designs_are_cabled_each_as_its_own(audit: Auditor) -> None:
    """Servers are cabled once per kind of rack (feeds._rack_kinds): a rack that
    differs in its feeds' kW, names, psu_order or redundancy has the figures it has
    alone, and two racks of one design the same ones."""
    names = list(_VARIANTS)
    together = audit(_racks(names), _one_server_each(names))
    psus_on_a = {}
    for name in names:
        alone = audit(_racks([name]), _one_server_each([name]))
        feeds = [k for k in alone.capacity.feeds.keys if k[1] == name]
        for key in feeds:
            assert together.capacity.feeds.row(key) == alone.capacity.feeds.row(key), key
        assert together.capacity.servers.row(f"s{name}") == alone.capacity.servers.row(f"s{name}")
        psus_on_a[name] = together.capacity.feeds.row(("f", name, "a"))["psu_count"]
    assert psus_on_a == {"R1": 1, "R2": 2, "R3": 2, "R4": 1, "R5": 1, "R6": 1}


@pytest.mark.parametrize(
    ("psu", "message"),
    [
        ("{count: 2, feeds: {A63: 1, B6: 1}}", "rack R1 has no feed 'B6' (did you mean 'B63'?)"),
        ("{count: 6, feeds: {A63: 2, B63: 2}}", "psu: feeds cable 4 PSUs, but count is 6"),
    ],
)
def test_psu_feeds_name_the_racks_feeds_and_cable_every_psu(tmp_path: Path, psu: str, message: str) -> None:
    (tmp_path / "facility.yaml").write_text(_side_63_16())
    (tmp_path / "servers.yaml").write_text(servers(srv("g", "power_w: {max: 10200}", f"psu: {psu}")))
    _, problems = load([tmp_path])
    assert [p.message for p in problems] == [message]


def test_cli_reports_the_feed_that_trips_and_the_servers_that_fall_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inv").mkdir()
    feeds = f"[{{name: P1, {P63}}}, {{name: P2, {P63}}}, {{name: P3, {P16}}}]"
    (tmp_path / "inv" / "facility.yaml").write_text(rack(feeds, "N+1"))
    (tmp_path / "inv" / "servers.yaml").write_text(servers(*(srv(f"g{i}", DGX) for i in range(4))))
    run = cli("audit", "inv", "--select", "power.*", *AS_OF)
    assert (run.code, run.err) == (1, "")
    # 7:105 is feed P3's entry. Over with every feed up, it is one finding (more so
    # when P1 fails: 8 PSUs x 10.2 / 4 kW = 20.4 kW, not said twice).
    assert run.lines == [
        "inv/facility.yaml:7:105: error power.feed-overload feed f/R1/P3 carries 13.6 kW with every feed up"
        " (8 PSUs), 148 % of its 9.2 kW: its breaker trips in normal operation",
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ]
    assert "power.feed-failover-overload" not in run.out


def test_a_phase_is_over_after_a_side_loss_while_the_feed_reads_99_percent(audit: Auditor) -> None:
    # 400 V 32 A: 17.736 kW a feed, 5.912 kW a phase. Four 4.4 kW servers, 2 PSUs a
    # side: after side B fails the 8 PSUs on A (2.2 kW each) split 3, 3 and 2.
    p400 = "voltage: 400, amps: 32, phase: 3"
    feeds = f"[{{name: A, side: A, {p400}}}, {{name: B, side: B, {p400}}}]"
    node = "power_w: {max: 4400}, psu: {count: 4, rating_w: 2400, redundant: 2}"
    run = audit(rack(feeds, "2N"), servers(*(srv(f"n{i}", node) for i in range(4))))
    a = run.capacity.feeds.row(("f", "R1", "A"))
    assert (a["phase_capacity_kw"], a["worst_phase_load_kw"], a["worst_phase_case"]) == (5.912, 6.6, "side B")
    assert a["worst_phase_pct"] == pytest.approx(111.64, abs=0.01)
    assert a["failover_utilization_pct"] == pytest.approx(99.23, abs=0.01)
    assert run.finding("power.feed-phase-overload", "feed/f/R1/A").message == (
        "when side B fails, the most loaded phase of feed f/R1/A carries 6.6 kW, 112 % of its 5.91 kW"
        " a phase, though the feed as a whole is within its capacity"
    )
    # With both sides up: 8 PSUs of 1.1 kW, 3 on the heaviest phase.
    assert run.capacity.feeds.row(("f", "R1", "B"))["worst_phase_load_kw"] == 6.6


def test_psus_the_inventory_puts_on_one_phase_overload_it_in_normal_operation(audit: Auditor) -> None:
    # The same rack, but every server's side-A PSUs plugged into L1 of feed A: 8 PSUs of
    # 1.1 kW = 8.8 kW on 5.912 kW (148.85 %) with both sides up, and 4 x 4.4 = 17.6 kW
    # (297.7 %) after side B fails, while the feed reads 99.2 % then.
    p400 = "voltage: 400, amps: 32, phase: 3"
    feeds = f"[{{name: A, side: A, {p400}}}, {{name: B, side: B, {p400}}}]"
    node = "power_w: {max: 4400}, psu: {count: 4, rating_w: 2400, redundant: 2, feeds: {A: {L1: 2}, B: 2}}"
    run = audit(rack(feeds, "2N"), servers(*(srv(f"n{i}", node) for i in range(4))))
    a, b = (run.capacity.feeds.row(("f", "R1", n)) for n in ("A", "B"))
    assert (a["worst_phase_load_kw"], a["worst_phase_case"]) == (17.6, "side B")
    assert a["worst_phase_pct"] == pytest.approx(297.70, abs=0.01)
    assert a["failover_utilization_pct"] == pytest.approx(99.23, abs=0.01)
    # Feed B's PSUs are not placed: dealt 3, 3 and 2, as before.
    assert (b["worst_phase_load_kw"], b["worst_phase_case"]) == (6.6, "side A")
    assert run.finding("power.feed-phase-overload", "feed/f/R1/A").message == (
        "when side B fails, the most loaded phase of feed f/R1/A carries 17.6 kW, 298 % of its 5.91 kW"
        " a phase, though the feed as a whole is within its capacity"
    )


@pytest.mark.parametrize(
    ("placed", "worst_kw", "pct"),
    [
        # 208 V 40 A: 3.843 kW a line. Four 2 kW single-corded nodes on the L1-L2 pair:
        # 8 kW between L1 and L2, sqrt(64) / sqrt 3 = 4.619 kW on each of those lines.
        ("{P: {L1-L2: 1}}", 4.619, 120.2),
        # One node on each pair and the fourth on L2-L3: pairs 2, 4, 2 kW; line 2 carries
        # sqrt(16 + 4 + 8) / sqrt 3 = 3.055 kW.
        (None, 3.055, 79.5),
    ],
)
def test_placed_line_to_line_psus_on_a_208_v_feed(
    audit: Auditor, placed: str | None, worst_kw: float, pct: float
) -> None:
    feed = "[{name: P, voltage: 208, amps: 40, phase: 3}]"
    spread = ["{P: {L1-L2: 1}}", "{P: {L2-L3: 1}}", "{P: {L3-L1: 1}}", "{P: {L2-L3: 1}}"]
    pairs = [placed] * 4 if placed else spread
    node = "power_w: {max: 2000}, psu: {count: 1, feeds: %s}"
    rows = [srv(f"n{i}", node % where) for i, where in enumerate(pairs)]
    run = audit(rack(feed, "N"), servers(*rows))
    p = run.capacity.feeds.row(("f", "R1", "P"))
    assert p["worst_phase_load_kw"] == worst_kw
    assert p["worst_phase_pct"] == pytest.approx(pct, abs=0.05)
    assert ("power.feed-phase-overload" in run.fired("feed/f/R1/P")) == (pct > 100)


F208 = "[{name: P, voltage: 208, amps: 40, phase: 3}]"
F400 = "[{name: P, voltage: 400, amps: 32, phase: 3}]"


@pytest.mark.parametrize(
    ("feeds", "where", "column", "message"),
    [
        # The phases a feed has are its own: L1-L3 at 400 V, pairs at 208 V.
        # `  - {name: s, rack: R1, power_w: {max: 500}, psu: {count: 2, feeds: {P: ` is 72 characters.
        (F208, "{P: {L1: 2}}", 74, "has phases L1-L2, L2-L3, L3-L1, not L1"),
        (F400, "{P: {L1-L2: 2}}", 74, "has phases L1, L2, L3, not L1-L2"),
        ("[{name: P, voltage: 230, amps: 32}]", "{P: {L1: 2}}", 70, "no phase to give (it is single-phase)"),
        (F400, "{P: {L1: 1, L2: 2}}", 51, "feeds cable 3 PSUs, but count is 2"),
        (F400, "{P: {L4: 2}}", 74, "psu.feeds.P.L4: Input should be 'L1', 'L2', 'L3', 'L1-L2',"),
    ],
)
def test_a_psu_phase_the_feed_does_not_have_is_a_located_error(
    tmp_path: Path, feeds: str, where: str, column: int, message: str
) -> None:
    (tmp_path / "facility.yaml").write_text(rack(feeds, "N"))
    psu = f"power_w: {{max: 500}}, psu: {{count: 2, feeds: {where}}}"
    (tmp_path / "servers.yaml").write_text(servers(srv("s", psu)))
    _, problems = load([tmp_path])
    assert [(Path(p.file).name, p.line, p.column) for p in problems] == [("servers.yaml", 4, column)]
    assert message in problems[0].message


def test_a_psu_behind_an_ats_has_no_phase_of_its_own(tmp_path: Path) -> None:
    feeds = ab(415, 16) + "\n    ats: [{name: T, primary: a, secondary: b, amps: 16}]"
    (tmp_path / "facility.yaml").write_text(rack(feeds))
    psu = "power_w: {max: 800}, psu: {count: 1, feeds: {T: {L1: 1}}}"
    (tmp_path / "servers.yaml").write_text(servers(srv("w", psu)))
    _, problems = load([tmp_path])
    assert [p.message for p in problems] == [
        "server w: PSUs on T have no phase to give (an ATS gives one circuit): give a count"
    ]


@pytest.mark.parametrize(
    ("voltage", "phase", "per_phase"),
    [(415, 3, True), (380, 3, True), (208, 3, True), (230, 1, False)],
)
def test_phases_are_figured_for_three_phase_feeds(
    audit: Auditor, voltage: int, phase: int, per_phase: bool
) -> None:
    feed = f"[{{name: P, voltage: {voltage}, amps: 32, phase: {phase}}}]"
    run = audit(rack(feed, "N"), servers(srv("s", DGX)))
    assert ("phase_capacity_kw" in run.capacity.feeds.row(("f", "R1", "P"))) == per_phase


# ---------------------------------------------------------------- PSU input voltage
# A DGX A100's PSUs take 200-240 V AC: the catalog's range (marked unverified there).
A100 = "model: dgx-a100"
UNVERIFIED = " (a range the catalog marks unverified)"


def _one_feed(voltage: int, phase: int) -> str:
    return rack(f"[{{name: P, voltage: {voltage}, amps: 32, phase: {phase}}}]", "N")


@pytest.mark.parametrize(
    ("voltage", "phase", "psu_v", "fails"),
    [
        (120, 1, 120, True),  # US single-phase branch circuit
        (230, 1, 230, False),
        (400, 3, 230.94, False),  # 400 / 1.7321 = 230.94 V line to neutral
        (380, 3, 219.393, False),  # the example sites: 380 / 1.7321 = 219.39 V
        (208, 3, 208, False),  # 208 / 1.7321 = 120 V < 200 V: line to line, 208 V
        (480, 3, 277.128, True),  # 277 V line to neutral, over 240 V
    ],
)
def test_the_voltage_a_psu_sees_against_its_input_range(
    audit: Auditor, voltage: int, phase: int, psu_v: float, fails: bool
) -> None:
    run = audit(_one_feed(voltage, phase), servers(srv("a100", A100)))
    assert run.capacity.feeds.row(("f", "R1", "P"))["psu_voltage_v"] == psu_v
    row = run.capacity.servers.row("a100")
    assert (row["psu_voltage_min_v"], row["psu_voltage_max_v"]) == (psu_v, psu_v)
    assert ("power.psu-input-voltage" in run.fired("server/a100")) == fails


def test_a_100_240_v_psu_on_120_v_and_a_server_without_a_range_pass(audit: Auditor) -> None:
    run = audit(
        _one_feed(120, 1),
        servers(srv("wide", "power_w: {max: 500}, psu: {count: 2, input_v: {min: 100, max: 240}}"),
            srv("plain", "power_w: {max: 500}, psu: {count: 2}"),
        ),
    )
    assert run.fired("server/wide") == run.fired("server/plain") == set()


def test_the_catalog_range_is_used_and_an_unverified_one_is_said_so(audit: Auditor) -> None:
    run = audit(_one_feed(120, 1), servers(srv("b200", "model: dgx-b200"), srv("a100", "model: dgx-a100")))
    assert run.finding("power.psu-input-voltage", "server/b200").message == (
        "server b200 in rack R1: its feeds give its PSUs 120 V, outside their 200-240 V input range"
    )
    assert run.finding("power.psu-input-voltage", "server/a100").message.endswith(
        "outside their 200-240 V input range" + UNVERIFIED
    )
    # A range of the server's own is not the catalog's, so not unverified.
    wider = "model: dgx-a100, psu: {input_v: {min: 200, max: 250}}"
    own = audit(_one_feed(120, 1), servers(srv("a100", wider)))
    assert own.finding("power.psu-input-voltage", "server/a100").message.endswith("200-250 V input range")


def test_psu_feeds_limit_the_check_to_the_feeds_the_psus_are_on(audit: Auditor) -> None:
    # A 230 V and a 120 V feed: cabled to the 230 V one only, the 120 V one is not its.
    feeds = rack("[{name: HI, voltage: 230, amps: 32}, {name: LO, voltage: 120, amps: 32}]", "N")
    mapped = "model: dgx-a100, psu: {count: 6, feeds: {HI: 6}, input_v: {min: 200, max: 240}}"
    run = audit(feeds, servers(srv("mapped", mapped), srv("spread", A100)))
    assert run.capacity.servers.row("mapped")["psu_voltage_min_v"] == 230
    assert run.capacity.servers.row("spread")["psu_voltage_min_v"] == 120
    assert run.fired("server/mapped") == set()
    assert run.finding("power.psu-input-voltage", "server/spread").message == (
        "server spread in rack R1: its feeds give its PSUs 120 V, outside their 200-240 V input range"
        + UNVERIFIED
    )


def test_cli_fails_a_dgx_a100_on_120_v_feeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "facility.yaml").write_text(rack(ab(120, 80, phase=1)))
    (tmp_path / "inv" / "servers.yaml").write_text(servers(srv("a100", "position: 1", A100)))
    run = cli("audit", "inv", "--select", "power.psu-input-voltage", *AS_OF)
    assert (run.code, run.err) == (1, "")
    # The range is the catalog model's: the finding points at the `model` value, 4:48.
    assert run.lines == [
        "inv/servers.yaml:4:48: error power.psu-input-voltage server a100 in rack R1: its feeds give its PSUs"
        " 120 V, outside their 200-240 V input range" + UNVERIFIED,
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ]
    # The same on 230 V single-phase passes.
    (tmp_path / "inv" / "facility.yaml").write_text(rack(ab(230, 32, phase=1)))
    assert cli("audit", "inv", "--select", "power.psu-input-voltage", *AS_OF).code == 0


@pytest.mark.parametrize(
    ("input_v", "column", "message"),
    [
        # `  - {name: s, rack: R1, power_w: {max: 500}, psu: {count: 2, input_v: ` is 70 characters.
        ("{min: 240, max: 200}", 71, "psu.input_v: min 240 V is above max 200 V"),
        ("{min: -200, max: 240}", 77, "greater than 0"),
        ("{min: 200}", 71, "max"),
    ],
)
def test_a_bad_input_range_is_a_located_schema_error(
    tmp_path: Path, input_v: str, column: int, message: str
) -> None:
    (tmp_path / "facility.yaml").write_text(_one_feed(230, 1))
    psu = f"power_w: {{max: 500}}, psu: {{count: 2, input_v: {input_v}}}"
    (tmp_path / "servers.yaml").write_text(servers(srv("s", psu)))
    _, problems = load([tmp_path])
    assert [(Path(p.file).name, p.line, p.column) for p in problems] == [("servers.yaml", 4, column)]
    assert message in problems[0].message


@pytest.mark.parametrize(
    ("nodes", "worst_kw", "pct", "fires"),
    [
        # 208 V 40 A: 11.528 kW, 3.843 kW a line; 2 kW single-corded nodes between two
        # lines. 4 nodes: pairs 4, 2 and 2 kW; line 1 carries sqrt(16 + 4 + 8) / sqrt 3 kW.
        (4, 3.055, 79.5, False),
        # 5 nodes: pairs 4, 4 and 2 kW; line 2 carries sqrt(16 + 16 + 16) / sqrt 3 = 4 kW,
        # while the feed reads 86.7 %.
        (5, 4.0, 104.1, True),
    ],
)
def test_line_to_line_psus_on_a_208_v_feed(
    audit: Auditor, nodes: int, worst_kw: float, pct: float, fires: bool
) -> None:
    feed = "[{name: P, voltage: 208, amps: 40, phase: 3}]"
    node = "power_w: {max: 2000}, psu: {count: 1, rating_w: 2400}"
    run = audit(rack(feed, "N"), servers(*(srv(f"n{i}", node) for i in range(nodes))))
    p = run.capacity.feeds.row(("f", "R1", "P"))
    assert (p["phase_capacity_kw"], p["worst_phase_load_kw"]) == (3.843, worst_kw)
    assert p["worst_phase_pct"] == pytest.approx(pct, abs=0.05)
    assert ("power.feed-phase-overload" in run.fired("feed/f/R1/P")) == fires


def test_a_workstation_behind_an_ats_survives_a_side_loss(audit: Auditor) -> None:
    # 2N, 415 V 16 A a side (9.201 kW); the ATS is rated 16 A on the primary's 415 V
    # three-phase: 9.201 kW. An 800 W single-corded workstation and a DGX H100.
    feeds = f"[{{name: A, side: A, {P16}}}, {{name: B, side: B, {P16}}}]"
    ats = "ats: [{name: T, primary: A, secondary: B, amps: 16}]"
    ws = srv("ws", "power_w: {max: 800}", "psu: {count: 1, rating_w: 1000, feeds: {T: 1}}")
    run = audit(rack(feeds, "2N", extra=ats), servers(ws, srv("g", DGX)))
    row = run.capacity.servers.row("ws")
    # Either side lost, its one PSU is still fed: 1,000 W for 800 W.
    assert (row["psu_side_w"], row["failover_psu_w"]) == (1000, 1000)
    assert run.fired("server/ws") == set()
    a, b = (run.capacity.feeds.row(("f", "R1", n)) for n in ("A", "B"))
    # All up: the workstation on A (0.8) and half the DGX on each (5.1).
    assert (a["load_kw"], b["load_kw"]) == (5.9, 5.1)
    # Side A lost: the ATS moves the workstation to B, beside the whole DGX.
    assert (b["failover_load_kw"], b["failover_case"]) == (11.0, "side A")
    rack_row = run.capacity.racks.row(("f", "R1"))
    assert (rack_row["worst_ats"], rack_row["worst_ats_pct"]) == ("T", pytest.approx(8.69, abs=0.01))


def test_an_ats_over_its_rating_trips(audit: Auditor) -> None:
    feeds = f"[{{name: A, side: A, {P63}}}, {{name: B, side: B, {P63}}}]"
    ats = "ats: [{name: T, primary: A, secondary: B, amps: 16}]"
    one_cord = "psu: {count: 1, rating_w: 3000, feeds: {T: 1}}"
    behind = [srv(f"ws{i}", "power_w: {max: 2500}", one_cord) for i in range(4)]
    run = audit(rack(feeds, "2N", extra=ats), servers(*behind))
    # 10 kW behind a 9.201 kW switch: 108.7 %.
    assert run.finding("power.ats-overload", "rack/f/R1").message == (
        "ATS T of rack f/R1 carries 109 % of its rating: it trips, and the single-corded devices"
        " behind it go dark"
    )


@pytest.mark.parametrize(
    ("ats", "message"),
    [
        ("[{name: T, primary: A, secondary: C, amps: 16}]", "rack R1 has no feed 'C'"),
        ("[{name: A, primary: A, secondary: B, amps: 16}]", "ATS A has the name of a feed of rack R1"),
        (
            "[{name: T, primary: A, secondary: B, amps: 16}]\npsu_order: [A, T, B2]",
            "rack R1 has no feed or ATS 'B2' (did you mean 'B'?)",
        ),
        (
            "[{name: T, primary: A, secondary: A, amps: 16}]",
            "racks.0.ats.0: an ATS switches between two feeds: primary and secondary differ",
        ),
    ],
)
def test_an_ats_switches_between_two_feeds_of_its_rack(tmp_path: Path, ats: str, message: str) -> None:
    feeds = f"[{{name: A, side: A, {P16}}}, {{name: B, side: B, {P16}}}]"
    (tmp_path / "facility.yaml").write_text(rack(feeds, "2N", extra=f"ats: {ats}"))
    _, problems = load([tmp_path])
    assert [p.message for p in problems] == [message]


def test_cli_places_psus_on_the_phases_the_inventory_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    # 400 V 32 A, 2N: 5.912 kW a phase. Two 4.4 kW nodes with both side-A PSUs on L1:
    # 4 PSUs of 1.1 kW = 4.4 kW with both sides up (74 %), 8.8 kW (149 %) when side B fails.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "facility.yaml").write_text(rack(ab(400, 32)))
    node = "power_w: {max: 4400}, psu: {count: 4, rating_w: 2400, redundant: 2, feeds: {a: {L1: 2}, b: 2}}"
    (tmp_path / "inv" / "servers.yaml").write_text(servers(srv("n0", node), srv("n1", node)))
    run = cli("audit", "inv", "--select", "power.feed-*", *AS_OF)
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "inv/facility.yaml:7:13: error power.feed-phase-overload when side B fails, the most loaded phase"
        " of feed f/R1/a carries 8.8 kW, 149 % of its 5.91 kW a phase, though the feed as a whole is"
        " within its capacity",
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ]
    # Dealt over the phases instead (no placement), the same PSUs load a phase to 74 %.
    (tmp_path / "inv" / "servers.yaml").write_text(servers(srv("n0", node.replace("{L1: 2}", "2"))))
    assert cli("audit", "inv", "--select", "power.feed-*", *AS_OF).code == 0
    # A phase the feed does not have is a located input error.
    (tmp_path / "inv" / "servers.yaml").write_text(servers(srv("n0", node.replace("L1", "L1-L2"))))
    run = cli("audit", "inv", *AS_OF)
    assert (run.code, run.lines) == (
        2,
        [
            "inv/servers.yaml:4:106: error schema.reference"
            " feed a of rack R1 has phases L1, L2, L3, not L1-L2",
            "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
        ],
    )
