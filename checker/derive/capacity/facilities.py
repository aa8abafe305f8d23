"""Facility figures: UPS, room cooling with unit redundancy, PUE, utility, energy.

Two questions, two bases. What the power chain must carry is asked at peak
draw (`peak_it_kw`: power_cap_w where declared, else power_w.max): the UPS
carries it, and the utility the design day, peak IT with the cooling and
losses at that load. Training GPUs run in lockstep, so a pod swings between
idle and full power together and its peaks do not average out (NVIDIA,
"How New GB300 NVL72 Features Provide Steady Power for AI"). What the site
uses over a year is asked at the facility's `power.basis` (`it_load_kw`, max
or typical draw): energy, its cost and the annual PUE.

PUE = total facility power / IT power (The Green Grid, WP #49). With a
`pue_model` the overhead is fixed_kw + it_kw x (cooling_kw_per_it_kw +
loss_fraction), so PUE is worse at partial load, as real sites are; without
one, `design_pue` stands for every load.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from checker.derive.capacity.racks import BTU_H_PER_W
from checker.derive.capacity.servers import F64, NAN, ServerArrays
from checker.derive.capacity.table import Column, Table
from checker.derive.capacity.ups import FACILITY_CAPACITY_DOC
from checker.load import models as m
from checker.load.build import Inventory

HOURS_PER_YEAR = 8760
# Airflow of a facility without a cooling section uses the model's default rise.
DEFAULT_DELTA_T_C = float(m.FacilityCooling.model_fields["delta_t_c"].default)

FACILITY_COLUMNS = (
    Column("server_count", "", "servers in the facility"),
    Column("rack_count", "", "racks in the facility"),
    Column(
        "it_load_kw",
        "kW",
        "the load of the energy, cost and annual PUE figures: peak_it_kw x power.average_load_pct / 100"
        " where given, else the sum of server draw per power.basis",
    ),
    Column(
        "it_load_basis",
        "",
        "what it_load_kw is: average_load_pct | typical | max (max: the annual figures at peak IT)",
        "string",
    ),
    Column("it_capacity_kw", "kW", FACILITY_CAPACITY_DOC),
    Column(
        "peak_it_kw",
        "kW",
        "sum of server peak draw (power_cap_w where declared, else power_w.max): what the UPS carries, "
        "whatever power.basis",
    ),
    Column("ups_mechanical_kw", "kW", "cooling that rides on the UPS: its blocks' mechanical_kw"),
    Column("ups_load_kw", "kW", "what the UPS carries at peak: peak_it_kw + ups_mechanical_kw"),
    Column("ups_utilization_pct", "%", "ups_load_kw / it_capacity_kw x 100"),
    Column("ups_headroom_kw", "kW", "it_capacity_kw - ups_load_kw"),
    Column("heat_kw", "kW", "heat to reject: every watt drawn becomes heat (peak_it_kw)"),
    Column("heat_btu_h", "BTU/h", "heat_kw x 3,412"),
    Column("liquid_heat_kw", "kW", "sum of the servers' liquid_heat_w: heat to CDUs and facility water"),
    Column(
        "air_heat_kw", "kW", "heat_kw - liquid_heat_kw: heat to the room air (CRAH / CRAC, rear doors); "
        "absent without liquid heat"
    ),
    Column(
        "room_air_usable_kw",
        "kW",
        "cooling.room_air with its designed failure: N all; N+1 the total minus the largest unit; 2N half",
    ),
    Column(
        "room_air_utilization_pct",
        "%",
        "the heat to the room air (air_heat_kw, or heat_kw without liquid) / room_air_usable_kw x 100",
    ),
    Column(
        "cooling_largest_unit_kw",
        "kW",
        "the largest cooling unit (equal units: cooling.capacity_kw / cooling.units): what N+1 may lose",
    ),
    Column(
        "cooling_usable_kw",
        "kW",
        "cooling.capacity_kw with the designed failure: N all; N+1 the total minus the largest unit; "
        "2N half",
    ),
    Column("cooling_utilization_pct", "%", "heat_kw / cooling_usable_kw x 100"),
    Column("cooling_headroom_kw", "kW", "cooling_usable_kw - heat_kw"),
    Column("projected_pue", "", "annual PUE, at it_load_kw: from pue_model, else design_pue"),
    Column("pue_source", "", "pue_model | design_pue: where projected_pue and peak_pue come from", "string"),
    Column("peak_pue", "", "PUE at peak_it_kw (the design day): from pue_model, else design_pue"),
    Column(
        "utility_demand_kw",
        "kW",
        "design-day demand: peak_it_kw x peak_pue, peak IT with the cooling and losses at that load",
    ),
    Column("utility_headroom_kw", "kW", "power.utility_kw - utility_demand_kw"),
    Column(
        "generator_usable_kw",
        "kW",
        "power.generators with the designed failure: all sets (N), all but the largest (N+1: equal"
        " sets, (count - 1) x capacity_kw), half (2N)",
    ),
    Column("generator_utilization_pct", "%", "utility_demand_kw / generator_usable_kw x 100"),
    Column("it_energy_mwh_per_year", "MWh", "it_load_kw x 8,760 h / 1,000"),
    Column("energy_mwh_per_year", "MWh", "it_load_kw x projected_pue x 8,760 h / 1,000"),
    Column("energy_cost_per_year", "currency", "energy_mwh_per_year x 1,000 x energy_price_per_kwh"),
)


def _opt(values: list[float | None]) -> F64:
    return np.asarray([NAN if v is None else v for v in values], dtype=np.float64)


def facility_inputs(inv: Inventory) -> dict[str, npt.NDArray[Any]]:
    facs = [p.value for p in inv.facilities.values()]
    return {
        "basis_typical": np.asarray([bool(f.power and f.power.basis == "typical") for f in facs], dtype=bool),
        "inlet_c": _opt([f.cooling.inlet_c if f.cooling else None for f in facs]),
        "delta_t_c": _opt([f.cooling.delta_t_c if f.cooling else DEFAULT_DELTA_T_C for f in facs]),
        "floor_max_kg_per_m2": _opt([f.floor_max_kg_per_m2 for f in facs]),
        "floor_concentrated_kn": _opt([f.floor_concentrated_kn for f in facs]),
        "floor_rolling_kn": _opt([f.floor_rolling_kn for f in facs]),
        "water_supply_c": _opt([water_supply_c(f.cooling) for f in facs]),
        "water_class": np.asarray([f.cooling.water_class if f.cooling else None for f in facs], dtype=object),
        "cdu_count": np.asarray([len(f.cdus) for f in facs], dtype=np.float64),
    }


def water_supply_c(cooling: m.FacilityCooling | None) -> float | None:
    """The facility water's supply temperature: as designed, else the warmest its
    class allows (W32: 32 degC); None for W+ (above 45 degC, unbounded) or no class."""
    if cooling is None:
        return None
    if cooling.water_supply_c is not None:
        return cooling.water_supply_c
    return m.WATER_CLASS_MAX_C.get(cooling.water_class) if cooling.water_class else None


def usable_kw(plant: m.UnitSet | m.Generators | None) -> float:
    """What a plant (cooling, air handlers, a CDU set, generators) keeps after the failure it
    is designed for: none (N), any one unit (N+1: the total minus the largest
    unit, which for equal units is capacity x (units - 1) / units), one half (2N)."""
    if plant is None:
        return NAN
    total = plant.total_kw
    usable = {"N": total, "N+1": total - plant.largest_kw, "2N": total / 2}
    return usable[plant.redundancy]


def projected_pue(facs: list[m.Facility], it_kw: F64) -> tuple[F64, npt.NDArray[Any]]:
    model = [f.pue_model for f in facs]
    fixed = _opt([p.fixed_kw if p else None for p in model])
    per_kw = _opt([p.cooling_kw_per_it_kw + p.loss_fraction if p else None for p in model])
    design = _opt([f.design_pue for f in facs])
    with np.errstate(invalid="ignore", divide="ignore"):
        modelled = np.where(it_kw > 0, (it_kw + fixed + it_kw * per_kw) / it_kw, NAN)
    has_model = ~np.isnan(fixed)
    pue = np.where(has_model, modelled, design)
    source = np.asarray(
        [
            None if p != p else "pue_model" if m else "design_pue"
            for p, m in zip(pue.tolist(), has_model.tolist(), strict=True)
        ],
        dtype=object,
    )
    return pue, source


def facility_table(
    inv: Inventory, rack_facility: npt.NDArray[np.intp], s: ServerArrays, ups: tuple[F64, F64]
) -> Table[str]:
    """`ups`: each facility's UPS capacity and the mechanical load on it (ups.py)."""
    facs = [p.value for p in inv.facilities.values()]
    n = len(facs)
    basis_kw: F64 = np.bincount(s.facility, weights=s.basis_w / 1000.0, minlength=n).astype(np.float64)
    peak_kw: F64 = np.bincount(s.facility, weights=s.peak_w / 1000.0, minlength=n).astype(np.float64)
    average = _opt([f.power.average_load_pct if f.power else None for f in facs])
    it_kw: F64 = np.where(np.isnan(average), basis_kw, peak_kw * average / 100.0)
    it_basis = np.asarray(
        [
            "average_load_pct" if f.power and f.power.average_load_pct is not None
            else f.power.basis if f.power else "max"
            for f in facs
        ],
        dtype=object,
    )
    liquid_kw = np.bincount(s.facility, weights=s.peak_w * s.liquid_share / 1000.0, minlength=n)
    capacity, mechanical = ups
    ups_load = peak_kw + mechanical
    utility = _opt([f.power.utility_kw if f.power else None for f in facs])
    generators = np.asarray([usable_kw(f.power.generators if f.power else None) for f in facs])
    usable = np.asarray([usable_kw(f.cooling) for f in facs], dtype=np.float64)
    air_usable = np.asarray(
        [usable_kw(f.cooling.room_air if f.cooling else None) for f in facs], dtype=np.float64
    )
    largest = _opt([f.cooling.largest_kw if f.cooling else None for f in facs])
    price = _opt([f.energy_price_per_kwh for f in facs])
    pue, source = projected_pue(facs, it_kw)
    peak_pue, _ = projected_pue(facs, peak_kw)
    energy = it_kw * pue * HOURS_PER_YEAR / 1000.0
    with np.errstate(invalid="ignore", divide="ignore"):
        columns: dict[str, npt.NDArray[Any]] = {
            "server_count": np.bincount(s.facility, minlength=n).astype(np.float64),
            "rack_count": np.bincount(rack_facility, minlength=n).astype(np.float64),
            "it_load_kw": it_kw,
            "it_load_basis": it_basis,
            "it_capacity_kw": capacity,
            "peak_it_kw": peak_kw,
            "ups_mechanical_kw": mechanical,
            "ups_load_kw": ups_load,
            "ups_utilization_pct": 100.0 * ups_load / capacity,
            "ups_headroom_kw": capacity - ups_load,
            "heat_kw": peak_kw,
            "heat_btu_h": peak_kw * 1000.0 * BTU_H_PER_W,
            "liquid_heat_kw": np.where(liquid_kw > 0, liquid_kw, NAN),
            "air_heat_kw": np.where(liquid_kw > 0, peak_kw - liquid_kw, NAN),
            "room_air_usable_kw": air_usable,
            "room_air_utilization_pct": 100.0 * (peak_kw - liquid_kw) / air_usable,
            "cooling_largest_unit_kw": largest,
            "cooling_usable_kw": usable,
            "cooling_utilization_pct": np.where(usable > 0, 100.0 * peak_kw / usable, NAN),
            "cooling_headroom_kw": usable - peak_kw,
            "projected_pue": pue,
            "pue_source": source,
            "peak_pue": peak_pue,
            "utility_demand_kw": peak_kw * peak_pue,
            "utility_headroom_kw": utility - peak_kw * peak_pue,
            "generator_usable_kw": generators,
            "generator_utilization_pct": 100.0 * peak_kw * peak_pue / generators,
            "it_energy_mwh_per_year": it_kw * HOURS_PER_YEAR / 1000.0,
            "energy_mwh_per_year": energy,
            "energy_cost_per_year": energy * 1000.0 * price,
        }
    return Table(list(inv.facilities), FACILITY_COLUMNS, columns)
