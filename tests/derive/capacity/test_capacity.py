"""Capacity figures, hand-computed, and the rules that read them.

Each case writes a small inventory, computes capacity with numpy and runs the
built-in rulebook through the engine, so a figure and its finding are tested
together.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from checker.audit import run_audit
from checker.core.findings import Finding
from checker.decide.config import Config, settings
from checker.decide.result import AuditResult
from checker.derive.capacity import Capacity, compute
from checker.derive.facts import Context, build_all
from checker.evaluate.rulebook import Rulebook, load_rulebook
from checker.load.build import load
from tests.conftest import AS_OF, CliRunner, summary
from tests.helpers import evaluated

CAPACITY = ("power", "cooling", "pue", "space", "weight")


@pytest.fixture(scope="module")
def rulebook() -> Rulebook:
    return load_rulebook()


@dataclass(frozen=True)
class Audited:
    capacity: Capacity
    findings: list[Finding]

    def fired(self, entity: str) -> set[str]:
        """Capacity rules that fired on the entity (support and others are not under test here)."""
        return {f.rule for f in self.findings if f.entity == entity and f.category in CAPACITY}

    def finding(self, rule: str, entity: str) -> Finding:
        return next(f for f in self.findings if f.rule == rule and f.entity == entity)


Auditor = Callable[..., Audited]


@pytest.fixture
def audit(tmp_path: Path, rulebook: Rulebook) -> Auditor:
    def run(facility: str, servers: str = "") -> Audited:
        (tmp_path / "facility.yaml").write_text(facility)
        if servers:
            (tmp_path / "servers.yaml").write_text(servers)
        inv, problems = load([tmp_path])
        assert problems == []
        cap = compute(inv)
        return Audited(cap, evaluated(rulebook.rules, build_all(inv, cap, Context(dt.date(2027, 1, 15)))))

    return run


def rack(feeds: str, redundancy: str = "2N", extra: str = "", top: str = "") -> str:
    """A facility `f` with one rack `R1`; `extra` lines go into the rack, `top` lines into the facility."""
    rack_lines = "".join(f"    {line}\n" for line in extra.splitlines())
    return (
        f"kind: Facility\nname: f\npower: {{it_capacity_kw: 1000}}\n{top}"
        f"racks:\n  - name: R1\n    redundancy: {redundancy}\n    feeds: {feeds}\n{rack_lines}"
    )


def servers(*rows: str) -> str:
    body = "\n".join(f"  - {r}" for r in rows)
    return f"kind: Servers\nfacility: f\nservers:\n{body}\n"


def ab(voltage: int, amps: int, phase: int = 3) -> str:
    """An A and a B feed of the same rating."""
    feed = f"voltage: {voltage}, amps: {amps}, phase: {phase}"
    return f"[{{name: a, side: A, {feed}}}, {{name: b, side: B, {feed}}}]"


def srv(name: str, *fields: str) -> str:
    return ", ".join([f"{{name: {name}, rack: R1", *fields]) + "}"


F415 = "{voltage: 415, amps: 32, phase: 3}"
AB_415 = ab(415, 32)


# ---------------------------------------------------------------- rack failover
TWO_DGX_H100 = servers(
    "{name: g1, model: dgx-h100, rack: R1, position: 1}",
    "{name: g2, model: dgx-h100, rack: R1, position: 9}",
)


def test_two_dgx_h100_fail_on_a_2n_pair_of_18_4_kw_feeds(audit: Auditor) -> None:
    run = audit(rack(AB_415, "2N"), TWO_DGX_H100)
    row = run.capacity.racks.row(("f", "R1"))
    assert (row["side_a_kw"], row["side_b_kw"], row["capacity_kw"]) == (18.401, 18.401, 18.401)
    assert row["load_kw"] == 20.4
    assert row["normal_side_load_kw"] == 10.2
    assert row["side_a_failover_pct"] == pytest.approx(110.86, abs=0.01)
    assert "power.rack-capacity" in run.fired("rack/f/R1")


def test_the_same_feeds_unlabelled_on_an_n_rack_pass(audit: Auditor) -> None:
    feeds = f"[{{<<: {F415}, name: a}}, {{<<: {F415}, name: b}}]"
    run = audit(rack(feeds, "N"), TWO_DGX_H100)
    row = run.capacity.racks.row(("f", "R1"))
    assert row["capacity_kw"] == 36.803
    assert "side_a_kw" not in row  # sides mean nothing without A/B labels
    assert run.fired("rack/f/R1") == set()


def test_ab_feeds_on_an_n_rack_are_flagged(audit: Auditor) -> None:
    """2 x 9.2 kW 'carries' a 12 kW server that one side alone cannot."""
    run = audit(rack(ab(415, 16), "N"), servers(srv("s", "position: 1, u_height: 4, power_w: {max: 12000}")))
    row = run.capacity.racks.row(("f", "R1"))
    assert (row["capacity_kw"], row["one_side_kw"]) == (18.401, 9.201)
    assert run.fired("rack/f/R1") == {"power.n-rack-side-loss"}
    assert run.finding("power.n-rack-side-loss", "rack/f/R1").line == 6  # the rack's `redundancy:` line


@pytest.mark.parametrize(
    "sides", [("A", ""), ("A", "A"), ("B", "")], ids=["A and unlabelled", "A and A", "B and unlabelled"]
)
def test_a_side_label_without_the_other_side_is_no_ab_rack(audit: Auditor, sides: tuple[str, str]) -> None:
    """Two 9.2 kW feeds carry a 12 kW server on an N rack; a side label on one or
    both, with nothing on the other side, names no second source to lose."""
    feeds = ", ".join(
        f"{{name: f{i}, voltage: 415, amps: 16, phase: 3" + (f", side: {side}}}" if side else "}")
        for i, side in enumerate(sides)
    )
    run = audit(rack(f"[{feeds}]", "N"), servers(srv("s", "position: 1, u_height: 4, power_w: {max: 12000}")))
    row = run.capacity.racks.row(("f", "R1"))
    assert (row["capacity_kw"], row["labelled_side_count"]) == (18.401, 1)
    assert "one_side_kw" not in row and "side_a_kw" not in row
    assert run.fired("rack/f/R1") == set()


def test_ab_feeds_on_an_n_rack_that_one_side_carries_are_a_warning(audit: Auditor) -> None:
    run = audit(rack(ab(415, 16), "N"), servers(srv("s", "position: 1, u_height: 4, power_w: {max: 5000}")))
    assert run.fired("rack/f/R1") == {"power.n-rack-ab-labels"}


def test_n_plus_1_of_three_feeds_loses_the_largest(audit: Auditor) -> None:
    feeds = f"[{{<<: {F415}, name: a}}, {{<<: {F415}, name: b}}, {{<<: {F415}, name: c}}]"
    run = audit(rack(feeds, "N+1"), TWO_DGX_H100)
    row = run.capacity.racks.row(("f", "R1"))
    assert (row["total_feed_kw"], row["largest_feed_kw"], row["capacity_kw"]) == (55.204, 18.401, 36.803)
    assert row["capacity_kw"] == pytest.approx(36.80, abs=0.005)
    assert run.fired("rack/f/R1") == set()


def test_rack_headroom_warning_at_90_percent(audit: Auditor) -> None:
    # 380 V 32 A three-phase at 80 %: 16.85 kW a side; 7 x 2.2 kW = 15.4 kW = 91.4 %.
    rows = [srv(f"s{i}", f"position: {1 + 2 * i}, u_height: 2, power_w: {{max: 2200}}") for i in range(7)]
    run = audit(rack(ab(380, 32)), servers(*rows))
    assert run.capacity.racks.row(("f", "R1"))["utilization_pct"] == pytest.approx(91.4, abs=0.05)
    assert run.fired("rack/f/R1") == {"power.rack-headroom"}


# ---------------------------------------------------------------- basis and caps
BASIS_SERVERS = servers(
    "{name: s, rack: R1, position: 1, u_height: 4, power_w: {max: 6500, typical: 4500}}",
)
AB_230 = ab(230, 32, phase=1)


def test_typical_basis_still_checks_feeds_and_racks_on_max_draw(audit: Auditor) -> None:
    """6.5 kW max / 4.5 kW typical on 5.89 kW feeds: breakers trip on the peak."""
    facility = rack(AB_230).replace("it_capacity_kw: 1000", "it_capacity_kw: 1000, basis: typical")
    run = audit(facility, BASIS_SERVERS)
    assert run.capacity.racks.row(("f", "R1"))["load_kw"] == 6.5
    fac = run.capacity.facilities.row("f")
    assert fac["it_load_kw"] == 4.5  # energy, cost and annual PUE see typical draw
    assert fac["peak_it_kw"] == 6.5  # the UPS sees the peak
    assert (fac["ups_utilization_pct"], fac["ups_headroom_kw"]) == (0.65, 993.5)  # 6.5 of 1000 kW
    assert run.capacity.servers.row("s")["basis_w"] == 4500
    assert "power.rack-capacity" in run.fired("rack/f/R1")


def test_typical_basis_checks_the_utility_on_the_design_day(audit: Auditor) -> None:
    """6.5 kW peak x 1.25 = 8.125 kW over an 8 kW supply; typical draw (4.5 x 1.25 = 5.625 kW) would pass."""
    power = "it_capacity_kw: 1000, utility_kw: 8, basis: typical"
    facility = rack(AB_230, top="design_pue: 1.25\n").replace("it_capacity_kw: 1000", power)
    run = audit(facility, BASIS_SERVERS)
    fac = run.capacity.facilities.row("f")
    assert (fac["peak_pue"], fac["utility_demand_kw"], fac["utility_headroom_kw"]) == (1.25, 8.125, -0.125)
    assert fac["energy_mwh_per_year"] == pytest.approx(4.5 * 1.25 * 8.76, abs=0.001)  # 49.275 MWh, typical
    assert "power.utility-capacity" in run.fired("facility/f")


def test_power_cap_replaces_max_draw_on_branch_circuits(audit: Auditor) -> None:
    capped = BASIS_SERVERS.replace("typical: 4500}", "typical: 4500}, power_cap_w: 5800")
    run = audit(rack(AB_230), capped)
    assert run.capacity.racks.row(("f", "R1"))["load_kw"] == 5.8
    assert run.capacity.servers.row("s")["peak_w"] == 5800
    assert "power.rack-capacity" not in run.fired("rack/f/R1")


# ---------------------------------------------------------------- PSUs
@pytest.mark.parametrize(
    ("model", "side_w", "peak_w", "server_rule", "rack_rule"),
    [
        # 6 x 3.3 kW 5+1: 3 left = 9.9 kW of 14.3 kW: an error on the server.
        ("dgx-b200", 9900, 14300, "power.psu-side-loss", "power.psu-side-degraded"),
        # 4+2: 9.9 of 10.2 kW, reduced performance: a warning on the rack.
        ("dgx-h100", 9900, 10200, None, "power.psu-side-degraded"),
        ("dgx-a100", 9000, 6500, None, None),  # 6 x 3 kW 3+3: 9 kW a side
    ],
)
def test_server_psus_on_side_loss(
    audit: Auditor, model: str, side_w: int, peak_w: int, server_rule: str | None, rack_rule: str | None
) -> None:
    run = audit(rack(ab(380, 63)), servers(srv("s", f"model: {model}, position: 1")))
    row = run.capacity.servers.row("s")
    assert (row["psu_side_w"], row["peak_w"]) == (side_w, peak_w)
    assert {r for r in run.fired("server/s") if r.startswith("power.psu-side")} == (
        {server_rule} if server_rule else set()
    )
    assert {r for r in run.fired("rack/f/R1") if r.startswith("power.psu-side")} == (
        {rack_rule} if rack_rule else set()
    )


def test_psu_per_side_overrides_the_even_split(audit: Auditor) -> None:
    run = audit(
        rack(ab(380, 63)), servers(srv("s", "model: dgx-a100, position: 1, psu: {count: 6, per_side: 2}"))
    )
    assert run.capacity.servers.row("s")["psu_side_w"] == 6000
    assert "power.psu-side-loss" not in run.fired("server/s")  # 6.0 of 6.5 kW = 92 %
    assert run.capacity.racks.row(("f", "R1"))["min_psu_side_pct"] == pytest.approx(92.308, abs=0.001)
    assert "power.psu-side-degraded" in run.fired("rack/f/R1")


def test_no_side_figures_for_servers_in_n_racks(audit: Auditor) -> None:
    feeds = f"[{{<<: {F415}, name: a}}, {{<<: {F415}, name: b}}]"
    run = audit(rack(feeds, "N"), servers("{name: s, model: dgx-b200, rack: R1, position: 1}"))
    assert "psu_side_w" not in run.capacity.servers.row("s")


ALL_SHORT = (
    "server s: its 2 x 1000 W PSUs deliver 2000 W with every one of them up, under its 5000 W peak draw"
)


@pytest.mark.parametrize(
    ("psu", "peak", "usable", "total", "rule", "message"),
    [
        # 2 x 1,000 W at 1+1 for a 1.5 kW server: one PSU alone is short.
        ("{count: 2, rating_w: 1000, redundant: 1}", 1500, 1000, 2000, "power.psu-redundancy",
         "server s: 1 of its 2 x 1000 W PSUs (1+1) deliver 1000 W, under its 1500 W peak draw"),
        # ... for a 5 kW server: both together are short; said once, by the capacity rule.
        ("{count: 2, rating_w: 1000, redundant: 1}", 5000, 1000, 2000, "power.psu-capacity",
         ALL_SHORT),
        # No redundancy given (as the catalog's NVL72): the total still bounds the draw.
        ("{count: 2, rating_w: 1000}", 5000, None, 2000, "power.psu-capacity",
         ALL_SHORT),
        ("{count: 2, rating_w: 3000}", 5000, None, 6000, None, None),
    ],
)
def test_psus_against_peak_draw(
    audit: Auditor, psu: str, peak: int, usable: int | None, total: int, rule: str | None, message: str | None
) -> None:
    run = audit(rack(AB_415, "N"), servers(srv("s", f"position: 1, u_height: 2, power_w: {{max: {peak}}}",
                                                f"psu: {psu}")))
    row = run.capacity.servers.row("s")
    assert (row.get("psu_usable_w"), row["psu_total_w"]) == (usable, total)
    fired = {r for r in run.fired("server/s") if r.startswith("power.psu-")}
    assert fired == ({rule} if rule else set())
    if rule:
        assert run.finding(rule, "server/s").message == message


# ---------------------------------------------------------------- cooling
def test_room_cooling_n_plus_1_of_four_units(audit: Auditor) -> None:
    facility = rack(AB_415, top="cooling: {capacity_kw: 220, units: 4, redundancy: N+1}\n")
    many = [srv(f"s{i}", f"position: {1 + i}, u_height: 1, power_w: {{max: 1000}}") for i in range(17)]
    fac = audit(facility, servers(*many)).capacity.facilities.row("f")
    assert fac["cooling_usable_kw"] == 165  # 220 x 3/4
    assert fac["heat_kw"] == 17


@pytest.mark.parametrize(("redundancy", "units", "usable"), [("N", 4, 220), ("2N", 4, 110), ("N+1", 2, 110)])
def test_room_cooling_by_redundancy(audit: Auditor, redundancy: str, units: int, usable: float) -> None:
    facility = rack(AB_415, top=f"cooling: {{capacity_kw: 220, units: {units}, redundancy: {redundancy}}}\n")
    run = audit(facility, servers("{name: s, rack: R1, position: 1, u_height: 1, power_w: {max: 1000}}"))
    assert run.capacity.facilities.row("f")["cooling_usable_kw"] == usable
    assert ("cooling.room-capacity" in run.fired("facility/f")) == (usable < 1)


def test_rack_heat_airflow_and_cooling(audit: Auditor) -> None:
    run = audit(rack(AB_415, extra="cooling_kw: 15"), TWO_DGX_H100)
    row = run.capacity.racks.row(("f", "R1"))
    assert row["heat_kw"] == 20.4
    assert row["heat_btu_h"] == pytest.approx(20400 * 3.412)
    assert row["airflow_cfm"] == pytest.approx(3.16 * 20400 / (11 * 1.8), abs=0.01)  # dT 11 C = 19.8 F
    assert row["cooling_utilization_pct"] == 136
    assert "cooling.rack-capacity" in run.fired("rack/f/R1")


def test_liquid_server_in_an_air_rack(audit: Auditor) -> None:
    run = audit(
        rack(AB_415), servers(srv("s", "position: 1, u_height: 2, power_w: {max: 1000}, cooling: liquid"))
    )
    assert run.capacity.racks.row(("f", "R1"))["liquid_server_count"] == 1
    assert "cooling.liquid-server-in-air-rack" in run.fired("server/s")


def test_inlet_against_the_ashrae_class_and_the_equipment(audit: Auditor) -> None:
    facility = rack(AB_415, top="cooling: {capacity_kw: 100, inlet_c: 32, ashrae_class: A2}\n")
    run = audit(facility, TWO_DGX_H100)
    assert run.fired("facility/f") >= {"cooling.inlet-recommended"}
    assert "cooling.inlet-allowable" not in run.fired("facility/f")  # A2 allows 10-35 C
    assert "cooling.inlet-equipment" in run.fired("server/g1")  # DGX H100: 5-30 C


# ---------------------------------------------------------------- space and weight
def test_overlapping_and_out_of_bounds_u(audit: Auditor) -> None:
    run = audit(
        rack(AB_415),
        servers(
            "{name: low, rack: R1, position: 1, u_height: 8, power_w: {max: 100}}",
            "{name: mid, rack: R1, position: 8, u_height: 2, power_w: {max: 100}}",  # U8 is low's top
            "{name: ok, rack: R1, position: 10, u_height: 2, power_w: {max: 100}}",
            "{name: top, rack: R1, position: 40, u_height: 4, power_w: {max: 100}}",  # U40-U43 of 42
        ),
    )
    assert run.capacity.servers.row("mid")["overlaps_with"] == "low"
    assert run.fired("server/mid") == {"space.u-overlap"}
    assert run.fired("server/ok") == set() and run.fired("server/low") == set()
    assert run.capacity.servers.row("top")["top_u"] == 43
    assert run.fired("server/top") == {"space.u-out-of-bounds"}
    assert run.capacity.racks.row(("f", "R1"))["u_used"] == 16


def test_a_device_inside_a_taller_one_overlaps_it(audit: Auditor) -> None:
    run = audit(
        rack(AB_415),
        servers(
            "{name: big, rack: R1, position: 1, u_height: 10, power_w: {max: 100}}",
            "{name: a, rack: R1, position: 3, u_height: 1, power_w: {max: 100}}",
            "{name: b, rack: R1, position: 6, u_height: 1, power_w: {max: 100}}",
        ),
    )
    assert run.capacity.servers.row("a")["overlaps_with"] == "big"
    assert run.capacity.servers.row("b")["overlaps_with"] == "big"


def test_non_rack_mounted_device_loads_counts_and_takes_no_u(audit: Auditor) -> None:
    run = audit(rack(AB_415), servers("{name: kit, model: jetson-agx-orin-devkit, rack: R1}"))
    row = run.capacity.racks.row(("f", "R1"))
    assert (row["load_kw"], row["u_used"], row["unmounted_server_count"]) == (0.06, 0, 1)
    assert run.capacity.servers.row("kit")["rack_mounted"] is False
    assert run.fired("server/kit") == set()


def test_rack_over_its_weight_and_the_floor(audit: Auditor) -> None:
    facility = rack(AB_415, extra="weight_kg: 150\nmax_weight_kg: 400", top="floor_max_kg_per_m2: 500\n")
    two = [
        srv(f"s{i}", f"position: {1 + 8 * i}, u_height: 8, weight_kg: 130, power_w: {{max: 10200}}")
        for i in (0, 1)
    ]
    run = audit(facility, servers(*two, srv("kit", "power_w: {max: 60}")))
    row = run.capacity.racks.row(("f", "R1"))
    assert row["total_weight_kg"] == 410  # 150 + 2 x 130; the kit has no weight
    assert row["unweighed_server_count"] == 1
    assert row["floor_load_kg_per_m2"] == pytest.approx(410 / 0.72, abs=0.001)
    assert run.fired("rack/f/R1") >= {"weight.rack-capacity", "weight.floor-load", "weight.unknown"}


def test_a_rack_within_its_weight_passes(audit: Auditor) -> None:
    facility = rack(AB_415, extra="weight_kg: 150\nmax_weight_kg: 1360", top="floor_max_kg_per_m2: 1200\n")
    one = srv("s", "position: 1, u_height: 8, weight_kg: 130, power_w: {max: 10200}")
    assert not any(r.startswith("weight.") for r in audit(facility, servers(one)).fired("rack/f/R1"))


def test_a_position_without_u_height_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(rack(AB_415))
    (tmp_path / "s.yaml").write_text(servers(srv("s", "position: 3, power_w: {max: 100}")))
    _, problems = load([tmp_path])
    assert [(p.rule, p.message) for p in problems] == [
        ("schema.missing-field", "server s: no `u_height` (give it or a catalog `model` that has it)")
    ]


# ---------------------------------------------------------------- PUE, utility, energy
def test_projected_pue_above_target(audit: Auditor) -> None:
    model = "pue_target: 1.3\npue_model: {fixed_kw: 10, cooling_kw_per_it_kw: 0.15, loss_fraction: 0.05}\n"
    facility = rack(AB_415, top=model)
    run = audit(facility, TWO_DGX_H100)
    fac = run.capacity.facilities.row("f")
    # (20.4 + 10 + 20.4 x 0.20) / 20.4 = 1.690
    assert fac["projected_pue"] == pytest.approx(1.690, abs=0.001)
    assert fac["pue_source"] == "pue_model"
    assert "pue.target" in run.fired("facility/f")


@pytest.mark.parametrize(
    ("power", "it_kw", "basis", "pue", "at_peak_info"),
    [
        # Two DGX H100, 20.4 kW peak; fixed 10 kW, 0.20 kW per IT kW. At peak:
        # (20.4 + 10 + 4.08) / 20.4 = 1.690, the best the site can do: an info says so.
        ("", 20.4, "max", 1.690, True),
        # At an average of 50 % of peak, 10.2 kW: (10.2 + 10 + 2.04) / 10.2 = 2.180.
        (", average_load_pct: 50", 10.2, "average_load_pct", 2.180, False),
    ],
)
def test_the_annual_pue_at_the_average_load(
    audit: Auditor, power: str, it_kw: float, basis: str, pue: float, at_peak_info: bool
) -> None:
    model = "pue_model: {fixed_kw: 10, cooling_kw_per_it_kw: 0.15, loss_fraction: 0.05}\n"
    facility = rack(AB_415, top=model).replace("it_capacity_kw: 1000", f"it_capacity_kw: 1000{power}")
    run = audit(facility, TWO_DGX_H100)
    fac = run.capacity.facilities.row("f")
    assert (fac["it_load_kw"], fac["it_load_basis"]) == (it_kw, basis)
    assert fac["projected_pue"] == pytest.approx(pue, abs=0.001)
    assert fac["peak_pue"] == pytest.approx(1.690, abs=0.001)  # the design day is at peak, either way
    assert fac["energy_mwh_per_year"] == pytest.approx(it_kw * pue * 8.76, abs=0.05)
    assert ("pue.annual-at-peak" in run.fired("facility/f")) == at_peak_info


def test_utility_energy_and_cost(audit: Auditor) -> None:
    top = "design_pue: 1.25\nenergy_price_per_kwh: 0.78\ncurrency: CNY\n"
    facility = rack(AB_415, top=top).replace("it_capacity_kw: 1000", "it_capacity_kw: 1000, utility_kw: 25")
    run = audit(facility, TWO_DGX_H100)
    fac = run.capacity.facilities.row("f")
    assert fac["utility_demand_kw"] == 25.5  # 20.4 x 1.25
    assert fac["energy_mwh_per_year"] == pytest.approx(20.4 * 1.25 * 8.76, abs=0.001)  # 223.38 MWh
    assert fac["energy_cost_per_year"] == pytest.approx(20.4 * 1.25 * 8760 * 0.78, abs=0.01)
    assert "power.utility-capacity" in run.fired("facility/f")


def test_ups_headroom_warning(audit: Auditor) -> None:
    facility = rack(AB_415).replace("it_capacity_kw: 1000", "it_capacity_kw: 22")
    run = audit(facility, TWO_DGX_H100)
    assert run.capacity.facilities.row("f")["ups_utilization_pct"] == pytest.approx(92.727, abs=0.001)
    assert "power.facility-ups-headroom" in run.fired("facility/f")


def test_json_capacity_section_is_keyed_by_entity_id(audit: Auditor) -> None:
    doc = audit(rack(AB_415), TWO_DGX_H100).capacity.to_json()
    assert list(doc) == [
        "facilities", "racks", "feeds", "servers", "cooling_units", "cdus", "ups_blocks", "shelves",
        "panels",
    ]
    assert [r["entity"] for r in doc["feeds"]] == ["feed/f/R1/a", "feed/f/R1/b"]
    assert doc["racks"][0]["entity"] == "rack/f/R1" and doc["racks"][0]["load_kw"] == 20.4
    assert [r["entity"] for r in doc["servers"]] == ["server/g1", "server/g2"]


# ---------------------------------------------------------------- the example rollout
EXAMPLE = Path(__file__).resolve().parents[3] / "inventories"


@pytest.fixture(scope="module")
def example() -> AuditResult:
    cfg = settings(Config(), None, select=[], ignore=[], fail_on=None, rule_dirs=[])
    return run_audit([EXAMPLE], cfg, dt.date(2027, 1, 15))


def test_the_example_has_no_errors_but_the_waived_one(example: AuditResult) -> None:
    errors = [(f.rule, f.entity, f.waived) for f in example.findings if f.severity == "error"]
    assert errors == [
        ("power.rack-capacity", "rack/sh1/A08", True),
        ("power.feed-phase-overload", "feed/sh1/B02/B02-A", True),
        ("power.feed-phase-overload", "feed/sh1/B02/B02-B", True),
    ]
    assert example.exit_code == 0


def test_the_example_tight_rack_b02(example: AuditResult) -> None:
    """The figures inventories/README.md walks through."""
    assert example.capacity is not None
    b02 = example.capacity.racks.row(("sh1", "B02"))
    assert (b02["load_kw"], b02["capacity_kw"], b02["total_feed_kw"]) == (15.4, 16.849, 33.699)
    assert (b02["normal_side_load_kw"], b02["side_b_failover_pct"], b02["headroom_kw"]) == (
        7.7,
        91.398,
        1.449,
    )
    assert (b02["heat_kw"], b02["heat_btu_h"], b02["cooling_utilization_pct"]) == (15.4, 52544.8, 77)
    # Feed by feed and phase by phase: 7 PSUs of 2.2 kW after a side loss, 3 on one phase.
    b02_a = example.capacity.feeds.row(("sh1", "B02", "B02-A"))
    assert (b02_a["load_kw"], b02_a["failover_load_kw"], b02_a["failover_case"]) == (7.7, 15.4, "side B")
    assert (b02_a["phase_capacity_kw"], b02_a["worst_phase_load_kw"], b02_a["worst_phase_pct"]) == (
        5.616,
        6.6,
        117.512,
    )
    tight = [f for f in example.findings if f.rule == "power.rack-headroom"]
    assert [(f.entity, Path(f.file).name, f.line) for f in tight] == [("rack/sh1/B02", "facility.yaml", 120)]
    sh1 = example.capacity.facilities.row("sh1")
    # The annual PUE at the planned 80 % of the 220.6 kW peak: 1 + 12 / 176.48 + 0.19 = 1.258.
    assert (sh1["cooling_usable_kw"], sh1["projected_pue"]) == (360, 1.258)


# ---------------------------------------------------------------- end to end
def test_cli_reports_each_capacity_problem_on_its_line(cli: CliRunner, in_fixtures: Path) -> None:
    """tests/fixtures/capacity: one problem of each kind; the comments there work out the figures."""
    run = cli("audit", "capacity", *AS_OF)
    assert run.code == 1 and run.err == ""
    assert run.lines == [
        "capacity/facility.yaml:5:1: error pue.target facility f1 projects PUE 1.4 at 39.4 kW of IT load "
        "(from design_pue), above its 1.2 target",
        "capacity/facility.yaml:10:5: warning power.psu-side-degraded rack f1/R01: 1 of its 1 servers keep "
        "less than their peak draw on one side's PSUs (as little as 69.2 %): when a side fails they run at "
        "reduced performance until it is back",
        "capacity/facility.yaml:15:5: error power.n-rack-side-loss rack f1/R02 has A/B feeds but is declared "
        "N: its 12 kW peak fits the 16.8 kW of both sides together, but one side alone gives 8.4 kW, so "
        "losing a side drops the rack",
        "capacity/facility.yaml:21:5: error weight.rack-capacity rack f1/R03 weighs 346.3 kg with its "
        "servers, over its 300 kg rating",
        "capacity/facility.yaml:21:5: warning weight.unknown rack f1/R03 has 1 servers without weight_kg; "
        "its 346.3 kg total leaves them out of its weight checks",
        "capacity/servers.yaml:6:25: error power.psu-side-loss server b200 in 2N rack R01 keeps 9900 W of "
        "PSUs when a side fails, 69 % of its 14300 W peak draw: it throttles hard or shuts down though the "
        "rack's feeds survive",
        "capacity/servers.yaml:9:48: error space.u-overlap server a100-2 at U3-U8 of rack R03 overlaps "
        "server a100-1",
        summary(error=5, warning=2),
    ]


def test_cli_checks_a_typical_basis_training_pod_on_peak(cli: CliRunner, in_fixtures: Path) -> None:
    """tests/fixtures/training-ups: 12 DGX H200 in lockstep on a 100 kW UPS, power.basis typical.
    Peak 12 x 10.2 = 122.4 kW (122.4 %), typical 12 x 7.0 = 84 kW (84 %): a pass on typical draw was
    false. Design day 122.4 + 10 + 122.4 x 0.25 = 163 kW over the 160 kW utility (typical: 115 kW)."""
    run = cli("audit", "training-ups", *AS_OF)
    assert run.err == ""
    assert run.lines == [
        # The fixture gives no room cooling: its checks are skipped, and said to be.
        "training-ups/facility.yaml:10:1: info cooling.room-capacity-unknown facility t1 has no "
        "cooling.capacity_kw: the room cooling checks (cooling.room-capacity, cooling.room-headroom) were "
        "skipped for its 122.4 kW of heat",
        "training-ups/facility.yaml:13:9: error power.facility-it-capacity facility t1 draws 122.4 kW of IT "
        "load at peak (84 kW typical), over its 100 kW critical IT capacity",
        "training-ups/facility.yaml:13:30: error power.utility-capacity facility t1 needs 163 kW from the "
        "utility on the design day (122.4 kW peak IT x PUE 1.33), over its 160 kW supply",
        summary(error=2, info=1),
    ]
    assert run.code == 1


def test_cli_json_training_pod_figures(cli: CliRunner, in_fixtures: Path) -> None:
    """The hand-computed figures of tests/fixtures/training-ups: two bases, two questions."""
    (t1,) = json.loads(cli("audit", "training-ups", *AS_OF, "--format", "json").out)["capacity"]["facilities"]
    assert (t1["peak_it_kw"], t1["it_load_kw"], t1["it_capacity_kw"]) == (122.4, 84, 100)
    assert (t1["ups_utilization_pct"], t1["ups_headroom_kw"]) == (122.4, -22.4)
    # design day: (122.4 + 10 + 122.4 x 0.25) / 122.4 = 163 / 122.4 = 1.332
    assert (t1["peak_pue"], t1["utility_demand_kw"], t1["utility_headroom_kw"]) == (1.332, 163, -3)
    # the year, on typical draw: (84 + 10 + 84 x 0.25) / 84 = 115 / 84 = 1.369; 115 kW x 8,760 h
    year = (t1["projected_pue"], t1["it_energy_mwh_per_year"], t1["energy_mwh_per_year"])
    assert year == (1.369, 735.84, 1007.4)


def test_cli_json_capacity_section(cli: CliRunner, in_fixtures: Path) -> None:
    doc = json.loads(cli("audit", "capacity", *AS_OF, "--format", "json").out)["capacity"]
    r03 = next(r for r in doc["racks"] if r["entity"] == "rack/f1/R03")
    assert (r03["u_used"], r03["unmounted_server_count"], r03["load_kw"]) == (12, 1, 13.06)
    f1 = doc["facilities"][0]
    assert (f1["entity"], f1["cooling_usable_kw"], f1["projected_pue"]) == ("facility/f1", 165, 1.4)
    orin = next(s for s in doc["servers"] if s["entity"] == "server/orin")
    assert orin == {"entity": "server/orin", "peak_w": 60, "basis_w": 60}


def test_cli_an_n_plus_1_plant_of_unequal_units_keeps_the_total_minus_the_largest(
    cli: CliRunner, in_fixtures: Path
) -> None:
    """tests/fixtures/plant: 3 x 400 + 1 x 200 kW at N+1 keeps 1,000 kW with a 400 kW unit down (the
    old capacity x (units - 1) / units credited 1,050 kW, and 1,030 kW of heat passed at 98 %)."""
    run = cli("audit", "plant", *AS_OF, "--no-group")
    assert run.err == "" and run.code == 1
    lost = "kW) down, facility hall keeps 1000 kW of its 1400 kW for 1030 kW of heat at peak (103 %)"
    assert run.lines == [
        "plant/facility.yaml:9:3: warning cooling.inlet-recommended facility hall is designed for 24 °C "
        "inlet air, outside ASHRAE's recommended 18-22 °C for class H1",
        f"plant/facility.yaml:11:19: error cooling.unit-loss with cooling unit hall/CH1 (400 {lost}",
        f"plant/facility.yaml:12:19: error cooling.unit-loss with cooling unit hall/CH2 (400 {lost}",
        f"plant/facility.yaml:13:19: error cooling.unit-loss with cooling unit hall/CH3 (400 {lost}",
        summary(error=3, warning=1),
    ]
    doc = json.loads(cli("audit", "plant", *AS_OF, "--format", "json").out)["capacity"]
    (hall,) = doc["facilities"]
    assert (hall["cooling_usable_kw"], hall["cooling_largest_unit_kw"], hall["cooling_utilization_pct"]) == (
        1000,
        400,
        103,
    )
    ch1, _, _, ch4 = doc["cooling_units"]
    assert ch1 == {
        "entity": "cooling_unit/hall/CH1",
        "plant_capacity_kw": 1400,
        "share_pct": 28.571,
        "remaining_kw": 1000,
        "largest": True,
        "loss_utilization_pct": 103,
    }
    assert (ch4["entity"], ch4["remaining_kw"], ch4["largest"], ch4["loss_utilization_pct"]) == (
        "cooling_unit/hall/CH4",
        1200,
        False,
        85.833,
    )


def test_a_duplicate_cooling_unit_is_a_located_error(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        "kind: Facility\nname: f\ncooling:\n  units:\n    - {name: CH1, capacity_kw: 400}\n"
        "    - {name: CH1, capacity_kw: 200}\n"
    )
    run = cli("audit", str(tmp_path / "f.yaml"), "--no-cache")
    assert run.code == 2
    assert run.lines[0].endswith(
        "f.yaml:6:14: error schema.duplicate-name duplicate cooling unit name 'CH1' (first defined at "
        f"{tmp_path / 'f.yaml'}:5)"
    )


# ---------------------------------------------------------------- liquid and air, CDUs, floors
def test_cli_a_liquid_hall_whose_cdus_are_over_while_the_plant_is_under(
    cli: CliRunner, in_fixtures: Path
) -> None:
    """tests/fixtures/liquid: 8 x 142 kW hybrid racks, 85 % to liquid: 965.6 kW on a CDU pair that
    keeps 800 kW at N+1 (120.7 %), while the plant keeps 1,600 kW for 1,136 kW (71 %)."""
    run = cli("audit", "liquid", *AS_OF)
    assert run.err == "" and run.code == 1
    assert run.lines == [
        "liquid/facility.yaml:21:5: error cooling.cdu-capacity CDU hall/CDU-L takes 965.6 kW of liquid heat "
        "from its 8 racks at peak, over the 800 kW it keeps at N+1 (1600 kW over 2 units, less its largest, "
        "800 kW)",
        summary(error=1),
    ]
    doc = json.loads(cli("audit", "liquid", *AS_OF, "--format", "json").out)["capacity"]
    (hall,) = doc["facilities"]
    assert (hall["heat_kw"], hall["liquid_heat_kw"], hall["air_heat_kw"]) == (1136, 965.6, 170.4)
    assert (hall["cooling_usable_kw"], hall["cooling_utilization_pct"]) == (1600, 71)
    assert doc["cdus"] == [
        {
            "entity": "cdu/hall/CDU-L",
            "rack_count": 8,
            "liquid_heat_kw": 965.6,
            "largest_unit_kw": 800,
            "usable_kw": 800,
            "utilization_pct": 120.7,
            "headroom_kw": -165.6,
        }
    ]
    l01 = doc["racks"][0]
    # Airflow for the air part only: 3.16 x 21,300 W / (11 x 9/5) F = 3,399 CFM (all air: 22,663 CFM).
    split = (l01["heat_kw"], l01["liquid_heat_kw"], l01["air_heat_kw"], l01["cdu"])
    assert split == (142, 120.7, 21.3, "CDU-L")
    assert l01["airflow_cfm"] == 3399.394
    nvl = doc["servers"][0]
    assert (nvl["liquid_share"], nvl["liquid_heat_w"], nvl["air_heat_w"]) == (0.85, 120700, 21300)


def test_cli_cdus_and_air_handlers_of_unequal_units_keep_the_total_minus_the_largest(
    cli: CliRunner, in_fixtures: Path
) -> None:
    """tests/fixtures/cdu-units. CDU-A, 3 x 600 + 1 x 300 = 2,100 kW at N+1: any one unit may fail, so it
    keeps 2,100 - 600 = 1,500 kW for 4 x 380 = 1,520 kW (101.3 %), over; capacity x (units - 1) / units
    would credit 2,100 x 3/4 = 1,575 kW and pass it. The air handlers, 500 + 2 x 250 kW at N+1, keep
    1,000 - 500 = 500 kW for 6 x 95 = 570 kW (114 %), where 1,000 x 2/3 = 666.7 kW would pass. CDU-B,
    3 equal units of 1,500 kW in all, keeps 1,500 x 2/3 = 1,000 kW for 760 kW: under, as before."""
    run = cli("audit", "cdu-units", *AS_OF)
    assert run.err == "" and run.code == 1
    assert run.lines == [
        "cdu-units/facility.yaml:24:3: error cooling.room-air-capacity facility hall gives 570.0 kW to the "
        "room air at peak (2280 kW of its 2850 kW goes to liquid), over the 500 kW its air handlers keep "
        "at N+1",
        "cdu-units/facility.yaml:32:5: error cooling.cdu-capacity CDU hall/CDU-A takes 1520 kW of liquid "
        "heat from its 4 racks at peak, over the 1500 kW it keeps at N+1 (2100 kW over 4 units, less its "
        "largest, 600 kW)",
        summary(error=2),
    ]
    doc = json.loads(cli("audit", "cdu-units", *AS_OF, "--format", "json").out)["capacity"]
    cdus = [(c["entity"], c["largest_unit_kw"], c["usable_kw"], c["utilization_pct"]) for c in doc["cdus"]]
    assert cdus == [
        ("cdu/hall/CDU-A", 600, 1500, 101.333),
        ("cdu/hall/CDU-B", 500, 1000, 76),
    ]
    (hall,) = doc["facilities"]
    assert (hall["room_air_usable_kw"], hall["room_air_utilization_pct"]) == (500, 114)


@pytest.mark.parametrize(
    ("cdu", "usable", "largest"),
    [
        # N+1: the total minus the largest unit; the count form is the same for equal units.
        ("units: [{name: A, capacity_kw: 600}, {name: B, capacity_kw: 600}, {name: C, capacity_kw: 600},"
         " {name: D, capacity_kw: 300}], redundancy: N+1", 1500, 600),
        ("capacity_kw: 2100, units: 4, redundancy: N+1", 1575, 525),
        ("units: [{name: A, capacity_kw: 400}, {name: B, capacity_kw: 400}], redundancy: N+1", 400, 400),
        # 2N: two equal halves (unequal units are an input error: tests/load/test_models.py).
        ("units: [{name: A, capacity_kw: 600}, {name: B, capacity_kw: 600}], redundancy: 2N", 600, 600),
        ("units: [{name: A, capacity_kw: 600}, {name: B, capacity_kw: 300}]", 900, 600),
    ],
)
def test_a_cdu_set_keeps_what_its_redundancy_leaves(
    audit: Auditor, cdu: str, usable: float, largest: float
) -> None:
    facility = f"kind: Facility\nname: f\nracks: [{{name: R1}}]\ncdus:\n  - {{name: C, racks: [R1], {cdu}}}\n"
    run = audit(facility)
    row = run.capacity.cdus.row(("f", "C"))
    assert (row["usable_kw"], row["largest_unit_kw"]) == (usable, largest)


def test_cdu_and_room_air_facts_read_a_listed_set_as_its_total_and_count() -> None:
    """Facts read a listed set as numbers (m.UnitSet), so a rule's `units` is never a list."""
    inv, problems = load([Path(__file__).parents[2] / "fixtures" / "cdu-units"])
    assert problems == []
    facts = {f.entity: f.values for f in build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))}
    a, b = facts["cdu/hall/CDU-A"], facts["cdu/hall/CDU-B"]
    assert (a["capacity_kw"], a["units"], a["units_listed"], a["largest_unit_kw"]) == (2100, 4, True, 600)
    assert (b["capacity_kw"], b["units"], b["units_listed"], b["largest_unit_kw"]) == (1500, 3, False, 500)
    hall = facts["facility/hall"]
    air = [hall[f"cooling.room_air.{k}"] for k in ("capacity_kw", "units", "largest_unit_kw", "redundancy")]
    assert air == [1000, 3, 500, "N+1"]


def test_a_listed_unit_name_is_unique_within_its_set(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        "kind: Facility\nname: f\nracks: [{name: R1}]\ncdus:\n  - name: C\n    racks: [R1]\n    units:\n"
        "      - {name: A, capacity_kw: 600}\n      - {name: A, capacity_kw: 300}\n"
    )
    run = cli("audit", str(tmp_path / "f.yaml"), "--no-cache")
    assert run.code == 2
    assert run.lines[0].endswith(
        "f.yaml:9:16: error schema.duplicate-name duplicate unit name 'A' (first defined at "
        f"{tmp_path / 'f.yaml'}:8)"
    )


def test_cli_an_nvl72_on_a_floor_rated_below_its_caster_load(cli: CliRunner, in_fixtures: Path) -> None:
    """tests/fixtures/floor: 1,360 kg x 9.80665 / 2 = 6.67 kN on one caster while rolled in, over a
    4.45 kN panel; standing, a third, 4.446 kN, is within. An unweighed server on a rated floor warns."""
    run = cli("audit", "floor", *AS_OF)
    assert run.err == "" and run.code == 1
    assert run.lines == [
        "floor/facility.yaml:11:5: error weight.floor-rolling rack hall/L01 (1360 kg) puts up to 6.67 kN on "
        "one caster while it is rolled in (half of it), over the panels' 4.45 kN rolling rating",
        "floor/facility.yaml:15:5: warning weight.unknown rack hall/S01 has 1 servers without weight_kg; its "
        "0 kg total leaves them out of its floor checks",
        summary(error=1, warning=1),
    ]
    racks = json.loads(cli("audit", "floor", *AS_OF, "--format", "json").out)["capacity"]["racks"]
    assert (racks[0]["concentrated_load_kn"], racks[0]["rolling_load_kn"]) == (4.446, 6.669)


LIQUID_RACK = rack(
    "[{name: F1, voltage: 415, amps: 400, phase: 3, max_utilization: 100}]", "N", "cooling: liquid"
)


@pytest.mark.parametrize(
    ("server", "liquid_kw", "air_kw", "cfm"),
    [
        # 3.16 x W / (11 C x 9/5 = 19.8 F)
        ("{name: s, rack: R1, power_w: {max: 142000}, cooling: liquid, liquid_fraction: 0.85}", 120.7, 21.3,
         3399.394),
        ("{name: s, rack: R1, power_w: {max: 142000}, cooling: liquid, liquid_fraction: 0.9}", 127.8, 14.2,
         2266.263),
        # liquid without a fraction: all liquid, no air (and an info says so)
        ("{name: s, rack: R1, power_w: {max: 142000}, cooling: liquid}", 142, 0, 0),
        # air: all of it to air, as before (22,663 CFM)
        ("{name: s, rack: R1, power_w: {max: 142000}, cooling: air}", None, None, 22662.626),
        ("{name: s, rack: R1, power_w: {max: 142000}, power_cap_w: 100000, cooling: liquid, "
         "liquid_fraction: 0.8}", 80, 20, 3191.919),
    ],
)
def test_heat_splits_into_liquid_and_air(
    audit: Auditor, server: str, liquid_kw: float | None, air_kw: float | None, cfm: float
) -> None:
    r1 = audit(LIQUID_RACK, servers(server)).capacity.racks.row(("f", "R1"))
    assert (r1.get("liquid_heat_kw"), r1.get("air_heat_kw"), r1["airflow_cfm"]) == (liquid_kw, air_kw, cfm)


def test_a_liquid_server_without_a_fraction_is_an_info(audit: Auditor) -> None:
    run = audit(LIQUID_RACK, servers("{name: s, rack: R1, power_w: {max: 1000}, cooling: liquid}"))
    assert "cooling.liquid-fraction-unknown" in run.fired("server/s")


@pytest.mark.parametrize(
    ("water", "limit", "rule"),
    [
        ("water_class: W32", 30, "cooling.water-supply-equipment"),  # the class's top, 32 C, over 30
        ("water_class: W32", 32, None),
        ("{water_class: W32, water_supply_c: 28}", 30, None),  # the design supply where given
        ("{water_class: W27, water_supply_c: 29}", 35, "cooling.water-class-supply"),
        ("water_class: W+", 45, "cooling.water-class-unbounded"),
        ("{water_class: W+, water_supply_c: 50}", 45, "cooling.water-supply-equipment"),
        ("water_class: W17", 17, None),
        # No coolant limit: nothing to check the water against, which is said.
        ("water_class: W45", None, "cooling.coolant-limit-unknown"),
        ("water_class: W+", None, "cooling.coolant-limit-unknown"),
        ("{water_supply_c: 30}", None, "cooling.coolant-limit-unknown"),
        ("inlet_c: 24", None, None),  # no facility water given: no water check to miss
    ],
)
def test_facility_water_against_the_equipment(
    audit: Auditor, water: str, limit: int | None, rule: str | None
) -> None:
    cooling = water if water.startswith("{") else "{" + water + "}"
    plant = f"cooling: {{capacity_kw: 1000, {cooling[1:-1]}}}\n"
    coolant = "" if limit is None else f", max_coolant_supply_c: {limit}"
    server = f"{{name: s, rack: R1, power_w: {{max: 1000}}, cooling: liquid, liquid_fraction: 0.8{coolant}}}"
    run = audit(rack("[{name: F1, voltage: 415, amps: 32, phase: 3}]", "N", "cooling: liquid", plant),
                servers(server))
    fired = [r for e in ("server/s", "facility/f") for r in run.fired(e)]
    water_rules = {r for r in fired if "water" in r or "coolant" in r}
    assert water_rules == ({rule} if rule else set())


@pytest.mark.parametrize(
    ("cdus", "fired"),
    [("", True), ("cdus: [{name: C1, capacity_kw: 500, racks: [R1]}]\n", False)],
    ids=["no-cdus", "a-cdu"],
)
def test_liquid_heat_in_a_facility_without_cdus_is_an_info(audit: Auditor, cdus: str, fired: bool) -> None:
    # The CDU checks are skipped without CDUs; a skipped check must not read as a passed one.
    facility = rack("[{name: F1, voltage: 415, amps: 32, phase: 3}]", "N", "cooling: liquid", cdus)
    server = "{name: s, rack: R1, power_w: {max: 1000}, cooling: liquid, liquid_fraction: 1}"
    run = audit(facility, servers(server))
    assert ("cooling.cdu-unknown" in run.fired("rack/f/R1")) is fired
    assert "cooling.rack-without-cdu" not in run.fired("rack/f/R1")


def test_a_rack_with_liquid_heat_and_no_cdu_is_an_error(audit: Auditor) -> None:
    top = "cdus: [{name: C1, capacity_kw: 500, racks: [R2]}]\n"
    facility = rack("[{name: F1, voltage: 415, amps: 32, phase: 3}]", "N", "cooling: liquid", top)
    facility += "  - {name: R2, cooling: liquid}\n"
    server = "{name: s, rack: R1, power_w: {max: 1000}, cooling: liquid, liquid_fraction: 1}"
    run = audit(facility, servers(server))
    assert "cooling.rack-without-cdu" in run.fired("rack/f/R1")
    assert run.capacity.cdus.row(("f", "C1"))["liquid_heat_kw"] == 0  # R2 has no servers


@pytest.mark.parametrize(
    ("cdus", "message"),
    [
        ("[{name: C1, capacity_kw: 500, racks: [R9]}]", "CDU C1: no rack 'R9' in facility f"),
        ("[{name: C1, capacity_kw: 500, rows: [M]}]", "CDU C1: no row 'M' in facility f"),
        ("[{name: C1, capacity_kw: 500, rows: [L]}, {name: C2, capacity_kw: 500, racks: [R1]}]",
         "rack R1 is served by CDU C1 already"),
        ("[{name: C1, capacity_kw: 500}]", "a CDU serves racks or rows"),
    ],
)
def test_cdu_input_errors_are_located(cli: CliRunner, tmp_path: Path, cdus: str, message: str) -> None:
    (tmp_path / "f.yaml").write_text(
        f"kind: Facility\nname: f\ncdus: {cdus}\nracks:\n  - {{name: R1, row: L}}\n"
    )
    run = cli("audit", str(tmp_path / "f.yaml"), "--no-cache")
    assert run.code == 2 and run.err == ""
    assert message in run.lines[0] and run.lines[0].startswith(f"{tmp_path / 'f.yaml'}:3:")


def test_liquid_fraction_needs_liquid_cooling(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text("kind: Facility\nname: f\nracks: [{name: R1}]\n")
    (tmp_path / "s.yaml").write_text(
        "kind: Servers\nfacility: f\nservers:\n  - {name: s, rack: R1, power_w: {max: 1}, cooling: air, "
        "liquid_fraction: 0.5}\n"
    )
    run = cli("audit", str(tmp_path), "--no-cache")
    assert run.code == 2
    assert run.lines[0] == (
        f"{tmp_path / 's.yaml'}:4:5: error schema.invalid document: "
        "liquid_fraction above 0 needs cooling: liquid"
    )


@pytest.mark.parametrize(
    ("cdu", "usable", "pct"),
    [
        # 100 kW of liquid heat (a 125 kW rack at 80 %) on a CDU of 300 kW
        ("capacity_kw: 300", 300, 33.333),
        ("capacity_kw: 300, units: 3, redundancy: N+1", 200, 50),
        ("capacity_kw: 300, units: 2, redundancy: N+1", 150, 66.667),
        ("capacity_kw: 300, units: 2, redundancy: 2N", 150, 66.667),
        # One unit cannot lose one: N+1 with one unit is an input error (tests/load/test_models.py).
    ],
)
def test_cdu_usable_capacity(audit: Auditor, cdu: str, usable: float, pct: float | None) -> None:
    top = f"cdus: [{{name: C1, {cdu}, racks: [R1]}}]\n"
    facility = rack("[{name: F1, voltage: 415, amps: 400, phase: 3}]", "N", "cooling: liquid", top)
    server = "{name: s, rack: R1, power_w: {max: 125000}, cooling: liquid, liquid_fraction: 0.8}"
    row = audit(facility, servers(server)).capacity.cdus.row(("f", "C1"))
    assert (row["liquid_heat_kw"], row["usable_kw"], row.get("utilization_pct")) == (100, usable, pct)


@pytest.mark.parametrize(
    ("units", "largest", "remaining"),
    [
        ([400, 400, 400, 200], [True, False, False, False], [1000, 1000, 1000, 1200]),
        ([200, 500, 500], [False, True, False], [1000, 700, 700]),
        ([300, 300], [True, False], [300, 300]),
    ],
)
def test_each_cooling_unit_and_what_the_plant_keeps_without_it(
    audit: Auditor, units: list[int], largest: list[bool], remaining: list[int]
) -> None:
    listed = ", ".join(f"{{name: U{i}, capacity_kw: {kw}}}" for i, kw in enumerate(units))
    facility = rack("[]", "N", "", f"cooling: {{redundancy: N+1, units: [{listed}]}}\n")
    table = audit(facility).capacity.cooling_units
    assert [r["largest"] for r in table.rows] == largest
    assert [r["remaining_kw"] for r in table.rows] == remaining


@pytest.mark.parametrize(
    ("fraction", "air_kw", "pct", "fires"),
    [
        # Two 100 kW liquid systems: 80 % to liquid leaves 40 kW for the room air, which
        # three 20 kW air handlers at N+1 keep exactly (40 kW): 100 %, within.
        (0.8, 40, 100.0, False),
        # 75 % to liquid: 50 kW to the air, 125 %, while the 2,000 kW plant is at 10 %.
        (0.75, 50, 125.0, True),
    ],
)
def test_the_room_air_takes_the_air_part_of_the_heat(
    audit: Auditor, fraction: float, air_kw: float, pct: float, fires: bool
) -> None:
    top = "cooling: {capacity_kw: 2000, room_air: {capacity_kw: 60, units: 3, redundancy: N+1}}\n"
    system = f"power_w: {{max: 100000}}, cooling: liquid, liquid_fraction: {fraction}"
    run = audit(rack(AB_415, extra="cooling: liquid", top=top), servers(srv("a", system), srv("b", system)))
    fac = run.capacity.facilities.row("f")
    assert (fac["room_air_usable_kw"], fac["air_heat_kw"]) == (40, air_kw)
    assert fac["room_air_utilization_pct"] == pytest.approx(pct, abs=0.01)
    assert fac["cooling_utilization_pct"] == pytest.approx(10.0, abs=0.01)
    assert ("cooling.room-air-capacity" in run.fired("facility/f")) == fires
