"""Room cooling with unit redundancy (units of their own sizes too) and the load-dependent PUE,
hand-computed."""

from __future__ import annotations

import numpy as np
import pytest

from checker.derive.capacity.facilities import projected_pue, usable_kw
from checker.load import models as m


def units(*kw: float) -> list[dict[str, object]]:
    return [{"name": f"U{i}", "capacity_kw": k} for i, k in enumerate(kw, 1)]


@pytest.mark.parametrize(
    ("cooling", "usable"),
    [
        # equal units, written as a count: N+1 keeps capacity x (units - 1) / units
        ({"capacity_kw": 220, "units": 4, "redundancy": "N"}, 220),
        ({"capacity_kw": 220, "units": 4, "redundancy": "N+1"}, 165),
        ({"capacity_kw": 220, "units": 10, "redundancy": "N+1"}, 198),
        ({"capacity_kw": 220, "units": 2, "redundancy": "N+1"}, 110),  # one unit: an input error
        ({"capacity_kw": 220, "units": 2, "redundancy": "2N"}, 110),
        # units of their own sizes: N+1 keeps the total minus the largest (1,400 - 400), not 1,050
        ({"units": units(400, 400, 400, 200), "redundancy": "N+1"}, 1000),
        ({"units": units(400, 400, 400, 200), "redundancy": "N"}, 1400),
        ({"units": units(400, 400, 400, 400), "redundancy": "2N"}, 800),  # two equal halves
        ({"units": units(200, 500), "capacity_kw": 700, "redundancy": "N+1"}, 200),
        # listed equal units mean what the count meant
        ({"units": units(120, 120, 120, 120), "redundancy": "N+1"}, 360),
    ],
)
def test_usable_cooling(cooling: dict[str, object], usable: float) -> None:
    assert usable_kw(m.FacilityCooling.model_validate(cooling)) == usable


def test_no_cooling_section_has_no_usable_cooling() -> None:
    assert np.isnan(usable_kw(None))


@pytest.mark.parametrize(
    ("cooling", "message"),
    [
        ({"units": 4}, "give capacity_kw, or list the units"),
        ({"units": units(400, 200), "capacity_kw": 500}, "capacity_kw 500 is not the 600 kW its units"),
    ],
)
def test_a_plant_needs_a_capacity_that_adds_up(cooling: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        m.FacilityCooling.model_validate(cooling)


def facility(**fields: object) -> m.Facility:
    return m.Facility.model_validate({"kind": "Facility", "name": "f", **fields})


def test_pue_from_the_model_is_worse_at_partial_load() -> None:
    model = {"fixed_kw": 12, "cooling_kw_per_it_kw": 0.15, "loss_fraction": 0.04}
    facs = [facility(pue_model=model)] * 3
    pue, source = projected_pue(facs, np.array([220.6, 50.0, 0.0]))
    # (220.6 + 12 + 220.6 x 0.19) / 220.6 = 1.2444; (50 + 12 + 9.5) / 50 = 1.43
    assert pue[0] == pytest.approx(1.2444, abs=1e-4)
    assert pue[1] == pytest.approx(1.43)
    assert np.isnan(pue[2]) and source.tolist() == ["pue_model", "pue_model", None]


def test_design_pue_without_a_model_and_nothing_without_either() -> None:
    pue, source = projected_pue([facility(design_pue=1.6), facility()], np.array([1.0, 1.0]))
    assert pue[0] == 1.6 and np.isnan(pue[1])
    assert source.tolist() == ["design_pue", None]
