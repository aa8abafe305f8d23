"""Room cooling with unit redundancy and the load-dependent PUE, hand-computed."""

from __future__ import annotations

import numpy as np
import pytest

from checker.derive.capacity.facilities import projected_pue, usable_share
from checker.load import models as m


@pytest.mark.parametrize(
    ("redundancy", "units", "share"),
    [("N", 4, 1.0), ("N+1", 4, 0.75), ("N+1", 10, 0.9), ("N+1", 1, 0.0), ("2N", 2, 0.5)],
)
def test_usable_cooling_share(redundancy: str, units: int, share: float) -> None:
    cooling = m.FacilityCooling.model_validate({"capacity_kw": 220, "units": units, "redundancy": redundancy})
    assert usable_share(cooling) == share
    assert 220 * usable_share(cooling) == {1.0: 220, 0.75: 165, 0.9: 198, 0.0: 0, 0.5: 110}[share]


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
