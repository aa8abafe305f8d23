"""Rack-scale systems (a server with `trays`): power shelves as PSUs on the
per-feed machinery, the busbar, a rack filled by one system, and compute trays
that workloads see as nodes. Figures hand-computed from the NVL72 facts:
8 power shelves x 6 x 5.5 kW PSUs = 33 kW a shelf; GB300 NVL72 up to ~142 kW,
GB200 ~120-132 kW; 18 compute trays x 4 GPUs, one 72-GPU NVLink domain."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from checker.derive.capacity import compute
from checker.derive.facts import Context, build_all
from checker.load.build import load
from tests.conftest import AS_OF, CliRunner, summary

# 4 feeds a side, 415 V 100 A three-phase at 80 %: 415 x 100 x 0.8 x 1.732 = 57.5 kW a feed.
FACILITY = """kind: Facility
name: f
power: {it_capacity_kw: 1000}
racks:
  - name: R1
    u_height: 48
    cooling: liquid
    redundancy: 2N
    psu_order: [A1, B1, A2, B2, A3, B3, A4, B4]
    feeds:
"""
FEEDS = "".join(
    f"      - {{name: {s}{i}, side: {s}, voltage: 415, amps: 100, phase: 3}}\n"
    for s in "AB"
    for i in range(1, 5)
)


def _facts(tmp_path: Path, servers: str, workloads: str = "") -> dict[str, dict[str, object]]:
    (tmp_path / "facility.yaml").write_text(FACILITY + FEEDS)
    (tmp_path / "servers.yaml").write_text(f"kind: Servers\nfacility: f\nservers:\n{servers}")
    if workloads:
        (tmp_path / "workloads.yaml").write_text(f"kind: Workloads\nworkloads:\n{workloads}")
    inv, problems = load([tmp_path])
    assert problems == []
    return {f.entity: dict(f.values) for f in build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))}


def test_cli_nvl72_power_shelves_busbar_and_power_cap(cli: CliRunner, in_fixtures: Path) -> None:
    """tests/fixtures/nvl72: a GB300 NVL72 (142 kW) keeps 4 of its 8 shelves on a side loss,
    4 x 33 kW = 132 kW, 93.0 % of its peak (a warning: it relies on power capping); capped at
    132 kW it keeps 100 %; a GB200 (132 kW) on a 120 kW busbar is 110 % of it."""
    run = cli("audit", "nvl72", *AS_OF)
    assert run.err == "" and run.code == 1
    assert run.lines == [
        # Each of the 8 shelves is over after a side loss (142 / 4 = 35.5 kW on 33 kW): one line for all.
        "nvl72/facility.yaml:23:15: warning power.shelf-side-loss power shelf 1 of system gb300-r01 in 2N "
        "rack hall/R01 carries 35.5 kW after a side loss, 107.6 % of its 33.0 kW: the 4 shelves left give "
        "132.0 kW for the system's 142.0 kW peak (93.0 %), so it rides through only on power capping (and 7 "
        "more alike: "
        + ", ".join(f"hall/R01/gb300-r01/{n}" for n in range(2, 9)) + ")",
        "nvl72/servers.yaml:8:54: error power.busbar-capacity system gb200-r03: its 132.0 kW peak draw is "
        "110 % of its 120.0 kW busbar rating",
        summary(error=1, warning=8),
    ]
    doc = json.loads(cli("audit", "nvl72", *AS_OF, "--format", "json").out)["capacity"]
    servers = {s["entity"]: s for s in doc["servers"]}
    r01 = servers["server/gb300-r01"]
    assert (r01["peak_w"], r01["psu_side_w"], r01["psu_side_pct"]) == (142000, 132000, 92.958)
    assert (r01["fills_rack"], r01["top_u"]) == (True, 48)
    # 80 % to liquid (the catalog's, unverified): 113.6 kW to the CDU, 28.4 kW to the room air.
    assert (r01["liquid_heat_w"], r01["air_heat_w"]) == (113600, 28400)
    r02 = servers["server/gb300-r02"]
    assert (r02["peak_w"], r02["psu_side_w"], r02["psu_side_pct"]) == (132000, 132000, 100)
    assert servers["server/gb200-r03"]["busbar_pct"] == 110
    racks = {r["entity"]: r for r in doc["racks"]}
    rack = racks["rack/hall/R01"]
    assert (rack["u_used"], rack["u_free"], rack["total_weight_kg"]) == (48, 0, 1360)
    assert (rack["capacity_kw"], rack["load_kw"], rack["side_short_server_count"]) == (230.016, 142, 0)
    feed = next(f for f in doc["feeds"] if f["entity"] == "feed/hall/R01/A1")
    # One shelf a feed: 142 / 8 = 17.75 kW, and 142 / 4 = 35.5 kW after side B fails; a shelf takes
    # three-phase input, so each line carries a third of it (11.83 of 19.17 kW), not all 35.5 kW.
    assert (feed["psu_count"], feed["load_kw"], feed["failover_load_kw"]) == (1, 17.75, 35.5)
    assert (feed["worst_phase_load_kw"], feed["phase_capacity_kw"]) == (11.833, 19.168)


def test_a_gb200_nvl72_rides_through_a_side_loss_on_four_shelves(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "  - {name: n1, model: gb200-nvl72, rack: R1}\n")
    n1 = facts["server/n1"]
    # 4 x 33,000 W = 132,000 W for a 132,000 W peak.
    shelves = (n1["psu_side_w"], n1["psu_side_pct"], n1["psu.count"], n1["psu.rating_w"])
    assert shelves == (132000, 100, 8, 33000)
    # 415 V line to line on the shelves (three-phase input), not the 239.6 V of a single-phase PSU.
    assert (n1["psu_voltage_min_v"], n1["psu_voltage_max_v"]) == (415, 415)


def test_trays_are_the_nodes_workloads_see(tmp_path: Path) -> None:
    """An NVL72: 18 trays x 4 GB200 (186 GB) = 72 GPUs in one NVLink domain, 13,392 GB for one
    model instance; without the domain a model instance has one tray, 4 x 186 = 744 GB."""
    servers = (
        "  - {name: n1, model: gb200-nvl72, rack: R1, workload: serve}\n"
        "  - {name: n2, model: gb200-nvl72, rack: R1, position: 1, u_height: 48, workload: other,\n"
        "     network: {nvlink: true, nvlink_domain: null}}\n"
    )
    workloads = (
        "  - {name: serve, task: inference, params_b: 405, precision: bf16}\n"
        "  - {name: other, task: inference, params_b: 405, precision: bf16}\n"
    )
    facts = _facts(tmp_path, servers, workloads)
    n1, serve, other = facts["server/n1"], facts["workload/serve"], facts["workload/other"]
    assert (n1["gpu.count"], n1["gpu.devices"], n1["gpu.system_devices"], n1["gpu.link_domain_gpus"]) == (
        4, 4, 72, 72
    )
    assert (serve["server_count"], serve["node_count"], serve["gpu_count"]) == (1, 18, 72)
    assert (serve["gpus_per_server_min"], serve["memory_available_gb"]) == (72, 13392)
    assert (other["gpus_per_server_min"], other["memory_available_gb"]) == (4, 744)


def test_a_device_in_a_rack_a_system_fills_overlaps_it(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        "  - {name: n1, model: gb200-nvl72, rack: R1}\n"
        "  - {name: sw, rack: R1, position: 48, u_height: 1, power_w: {max: 500}}\n",
    )
    assert facts["server/sw"]["overlaps_with"] == "n1"


@pytest.mark.parametrize(
    ("psu", "message"),
    [
        ("{count: 2, rating_w: 33000, phase: 3, feeds: {S1: 2}}",
         "its three-phase PSUs (psu.phase: 3) cannot be on S1, a single-phase feed"),
        ("{count: 2, rating_w: 33000, phase: 3, feeds: {T1: {L1: 2}}}",
         "three-phase PSUs (phase: 3) draw from every line: give psu.feeds as counts"),
        ("{count: 2, rating_w: 33000, phase: 2}", "Input should be 1 or 3"),
    ],
)
def test_three_phase_psu_input_errors_are_located(
    cli: CliRunner, tmp_path: Path, psu: str, message: str
) -> None:
    (tmp_path / "f.yaml").write_text(
        "kind: Facility\nname: f\nracks:\n  - name: R1\n    feeds:\n"
        "      - {name: S1, voltage: 230, amps: 32}\n      - {name: T1, voltage: 415, amps: 32, phase: 3}\n"
    )
    (tmp_path / "s.yaml").write_text(
        "kind: Servers\nfacility: f\nservers:\n"
        f"  - {{name: s, rack: R1, power_w: {{max: 1000}}, psu: {psu}}}\n"
    )
    run = cli("audit", str(tmp_path), "--no-cache")
    assert run.code == 2 and run.err == ""
    assert message in run.lines[0] and run.lines[0].startswith(f"{tmp_path / 's.yaml'}:4:")


def test_an_oem_server_without_power_in_the_catalog_must_give_it(cli: CliRunner, tmp_path: Path) -> None:
    """The reference gives no maximum draw for the Dell XE9680 or Lenovo SR685a V3: the inventory does."""
    (tmp_path / "f.yaml").write_text("kind: Facility\nname: f\nracks: [{name: R1}]\n")
    (tmp_path / "s.yaml").write_text(
        "kind: Servers\nfacility: f\nservers:\n  - {name: x1, model: dell-xe9680, rack: R1, position: 1}\n"
    )
    run = cli("audit", str(tmp_path), "--no-cache")
    assert run.code == 2
    assert run.lines[0] == (
        f"{tmp_path / 's.yaml'}:4:5: error schema.missing-field server x1: no `power_w` "
        "(give it or a catalog `model` that has it)"
    )


def test_the_catalog_has_the_2027_systems_with_their_sources() -> None:
    inv, problems = load([Path(__file__).parents[2] / "fixtures" / "minimal"])
    assert problems == []
    models = {name: placed.value for name, placed in inv.server_models.items()}
    new = ["gb200-nvl72", "gb300-nvl72", "dgx-b300", "hgx-b300", "h200-nvl-server", "mi350x-platform",
           "mi355x-platform"]
    assert all(models[n].source and not models[n].verified for n in new)
    gb300 = models["gb300-nvl72"]
    assert gb300.gpu is not None and gb300.psu is not None and gb300.power_w is not None
    assert (gb300.trays, gb300.gpu.count, gb300.psu.count, gb300.psu.rating_w) == (18, 4, 8, 33000)
    assert "power_w.max" in gb300.unverified and gb300.power_w.max == 142000
    # The reference gives no maximum draw for these: the inventory supplies it.
    assert models["dell-xe9680"].power_w is None and models["lenovo-sr685a-v3"].power_w is None


@pytest.mark.parametrize(
    ("extra", "fired"),
    [
        ("", True),  # the catalog's GB300 NVL72 gives no busbar rating
        (", busbar_w: 150000", False),
    ],
)
def test_a_rack_scale_system_without_a_busbar_rating_is_a_warning(
    cli: CliRunner, tmp_path: Path, extra: str, fired: bool
) -> None:
    (tmp_path / "facility.yaml").write_text(FACILITY + FEEDS)
    (tmp_path / "servers.yaml").write_text(
        f"kind: Servers\nfacility: f\nservers:\n  - {{name: nvl, model: gb300-nvl72, rack: R1{extra}}}\n"
    )
    run = cli("audit", str(tmp_path), *AS_OF, "--no-cache", "--select", "power.busbar-*")
    expected = (
        [f"{tmp_path}/servers.yaml:4:24: warning power.busbar-unknown system nvl has no busbar_w: its "
         "142.0 kW peak draw is not checked against its DC busbar's rating"] if fired else []
    )
    assert run.lines == [*expected, summary(warning=int(fired), verdict="pass")]


def test_the_nvl72_example_passes_with_its_readme_figures(cli: CliRunner) -> None:
    """examples/nvl72 (its README walks through rack L01): it passes; the one line says
    that the catalog gives no coolant limit to check the hall's W32 water against."""
    example = str(Path(__file__).parents[3] / "examples" / "nvl72")
    run = cli("audit", example, *AS_OF, "--no-cache")
    assert run.err == "" and run.code == 0
    assert run.lines == [
        "examples/nvl72/servers.yaml:7:10: warning cooling.coolant-limit-unknown server su1-l01 sends "
        "105.6 kW to liquid but has no max_coolant_supply_c: facility su1's water (W32, up to 32 °C) is not "
        "checked against what it accepts (and 7 more alike: su1-l02, su1-l03, su1-l04, su1-l05, su1-l06, "
        "su1-l07, su1-l08)",
        summary(warning=8, verdict="pass"),
    ]
    doc = json.loads(cli("audit", example, *AS_OF, "--no-cache", "--format", "json").out)["capacity"]
    l01 = next(r for r in doc["racks"] if r["entity"] == "rack/su1/L01")
    assert (l01["capacity_kw"], l01["load_kw"], l01["side_b_failover_pct"]) == (230.016, 132, 57.387)
    assert (l01["liquid_heat_kw"], l01["air_heat_kw"], l01["airflow_cfm"]) == (105.6, 26.4, 4213.333)
    assert (l01["u_used"], l01["total_weight_kg"], l01["rolling_load_kn"]) == (48, 1360, 6.669)
    a1 = next(f for f in doc["feeds"] if f["entity"] == "feed/su1/L01/A1")
    assert (a1["load_kw"], a1["failover_load_kw"], a1["worst_phase_load_kw"]) == (16.5, 33, 11)
    system = next(s for s in doc["servers"] if s["entity"] == "server/su1-l01")
    assert (system["psu_side_w"], system["psu_side_pct"], system["busbar_pct"]) == (132000, 100, 88)
    (cdu,) = doc["cdus"]
    assert (cdu["liquid_heat_kw"], cdu["usable_kw"], cdu["utilization_pct"]) == (844.8, 1200, 70.4)
    (su1,) = doc["facilities"]
    assert (su1["heat_kw"], su1["air_heat_kw"], su1["cooling_usable_kw"]) == (1080, 235.2, 1500)


# ---------------------------------------------------------------- power shelves as entities
def test_cli_a_gb200_nvl72_at_142_kw_keeps_132_kw_on_the_four_shelves_left(
    cli: CliRunner, in_fixtures: Path
) -> None:
    """tests/fixtures/shelves. R01: a GB200 NVL72 at 142 kW, its 8 shelves of 33 kW one a feed (psu_order
    A1 B1 A2 B2 ...): with every shelf up each carries 142 / 8 = 17.75 kW (53.8 %); a side loss leaves
    4 x 33 = 132 kW, each shelf left carrying 142 / 4 = 35.5 kW, 107.6 %, and the system 132 / 142 = 93.0 %:
    a warning on each shelf, at its psu_order entry. R02: psu.feeds puts 5 shelves on side A, 3 on B;
    side A's loss leaves 3 x 33 = 99 kW for 132 kW (75 %), the system's error power.psu-side-loss (one
    rule for it, not a shelf warning as well). R03: spread evenly, 4 a side, 132 kW on 132 kW: nothing."""
    run = cli("audit", "shelves", *AS_OF)
    assert run.err == "" and run.code == 1
    assert run.lines == [
        "shelves/facility.yaml:26:17: warning power.shelf-side-loss power shelf 1 of system nvl-r01 in 2N "
        "rack hall/R01 carries 35.5 kW after a side loss, 107.6 % of its 33.0 kW: the 4 shelves left give "
        "132.0 kW for the system's 142.0 kW peak (93.0 %), so it rides through only on power capping (and 7 "
        "more alike: "
        + ", ".join(f"hall/R01/nvl-r01/{n}" for n in range(2, 9)) + ")",
        "shelves/servers.yaml:11:5: error power.psu-side-loss server nvl-r02 in 2N rack R02 keeps 99000 W of "
        "PSUs when a side fails, 75 % of its 132000 W peak draw: it throttles hard or shuts down though the "
        "rack's feeds survive",
        summary(error=1, warning=8),
    ]
    doc = json.loads(cli("audit", "shelves", *AS_OF, "--format", "json").out)
    located = {f["entity"]: (f["line"], f["column"]) for f in doc["findings"]}
    # Each shelf at its own entry of psu_order: [A1, B1, A2, B2, A3, B3, A4, B4] from column 17, 4 apart.
    r01 = [located[f"shelf/hall/R01/nvl-r01/{n}"] for n in range(1, 9)]
    assert r01 == [(26, 17 + 4 * i) for i in range(8)]
    shelves = {r["entity"]: r for r in doc["capacity"]["shelves"]}
    assert len(shelves) == 24
    assert shelves["shelf/hall/R01/nvl-r01/2"] == {
        "entity": "shelf/hall/R01/nvl-r01/2",
        "feed": "B1",
        "side": "B",
        "rating_w": 33000,
        "phase": 3,
        "load_w": 17750,
        "utilization_pct": 53.788,
        "failover_load_w": 35500,
        "failover_utilization_pct": 107.576,
        "failover_case": "side A",
        "shelves_left": 4,
        "kept_w": 132000,
        "kept_pct": 92.958,
    }
    # R02, psu.feeds {A1: 2, A2: 2, A3: 1, B1: 1, B2: 1, B3: 1}: shelves 1-2 on A1 ... 8 on B3. Side B's loss
    # leaves 5 on side A, 132 / 5 = 26.4 kW each; side A's leaves 3 on side B, 132 / 3 = 44 kW each.
    r02 = [shelves[f"shelf/hall/R02/nvl-r02/{n}"] for n in range(1, 9)]
    assert [r["feed"] for r in r02] == ["A1", "A1", "A2", "A2", "A3", "B1", "B2", "B3"]
    assert [(r["failover_load_w"], r["shelves_left"], r["kept_pct"]) for r in (r02[0], r02[7])] == [
        (26400, 5, 125), (44000, 3, 75)
    ]
    # R03: not said, so dealt 4 a side, one a feed, in the rack's feed order.
    r03 = [shelves[f"shelf/hall/R03/nvl-r03/{n}"] for n in range(1, 9)]
    assert [r["feed"] for r in r03] == ["A1", "A2", "A3", "A4", "B1", "B2", "B3", "B4"]
    assert {(r["failover_load_w"], r["kept_pct"]) for r in r03} == {(33000, 100)}


@pytest.mark.parametrize(
    ("shelf", "where"),
    [
        ("shelf/hall/R02/nvl-r02/1", ("servers.yaml", 11, 56)),  # its psu.feeds entry, A1
        ("shelf/hall/R02/nvl-r02/8", ("servers.yaml", 11, 91)),  # B3
        ("shelf/hall/R03/nvl-r03/5", ("servers.yaml", 12, 28)),  # the catalog's psu: the `model:` value
        ("shelf/hall/R01/nvl-r01/8", ("facility.yaml", 26, 45)),  # its rack's psu_order entry, B4
    ],
)
def test_a_shelf_is_placed_at_the_line_that_cables_it(shelf: str, where: tuple[str, int, int]) -> None:
    inv, problems = load([Path(__file__).parents[2] / "fixtures" / "shelves"])
    assert problems == []
    loc = inv.entities()[shelf]
    assert (Path(loc.file).name, loc.line, loc.column) == where


def test_only_rack_scale_systems_have_shelves(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        "  - {name: n1, model: gb200-nvl72, rack: R1}\n"
        "  - {name: sw, rack: R1, position: 48, u_height: 1, power_w: {max: 500},\n"
        "     psu: {count: 2, rating_w: 400}}\n",
    )
    shelves = sorted(k for k in facts if k.startswith("shelf/"))
    assert shelves == [f"shelf/f/R1/n1/{n}" for n in range(1, 9)]
    one = facts["shelf/f/R1/n1/1"]
    assert (one["server"], one["rack"], one["name"], one["feed"], one["rack_redundancy"]) == (
        "n1", "R1", "1", "A1", "2N"
    )


def test_a_shelf_behind_a_transfer_switch_is_on_the_ats_its_cabling_names(tmp_path: Path) -> None:
    """Shelves on A1 and B1, two behind ATS T (A2, else B2), 132 kW. Side A's loss takes A1, and T moves
    its shelves to B2: 3 up, 132 / 3 = 44 kW each. Side B's takes B1; T stays on A2: 3 up, 44 kW each.
    The ATS's shelves are up in both (the first, side A, named)."""
    (tmp_path / "facility.yaml").write_text(
        "kind: Facility\nname: f\npower: {it_capacity_kw: 1000}\nracks:\n"
        "  - name: R1\n    u_height: 48\n    cooling: liquid\n    redundancy: 2N\n"
        "    psu_order: [A1, B1, T, T]\n"
        "    ats: [{name: T, primary: A2, secondary: B2, amps: 100}]\n    feeds:\n" + FEEDS
    )
    (tmp_path / "servers.yaml").write_text(
        "kind: Servers\nfacility: f\nservers:\n"
        "  - {name: n1, model: gb200-nvl72, rack: R1, psu: {count: 4, rating_w: 33000, phase: 3}}\n"
    )
    inv, problems = load([tmp_path])
    assert problems == []
    shelves = compute(inv).shelves
    rows = [shelves.row(("f", "R1", "n1", str(n))) for n in range(1, 5)]
    assert [r["feed"] for r in rows] == ["A1", "B1", "T", "T"]
    assert [r["load_w"] for r in rows] == [33000] * 4  # every shelf up: 132 / 4
    assert [r["failover_load_w"] for r in rows] == [44000] * 4
    assert [r["failover_case"] for r in rows] == ["side B", "side A", "side A", "side A"]
    assert [r["kept_pct"] for r in rows] == [75] * 4  # 3 x 33 / 132
