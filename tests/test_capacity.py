from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from checker.capacity import compute, feed_kw
from checker.inventory.loader import load


@pytest.mark.parametrize(
    ("voltage", "amps", "util", "phase", "pf", "kw"),
    [
        (415, 32, 80, 3, 1.0, 415 * 32 * 0.8 * math.sqrt(3) / 1000),  # 18.40 kW
        (415, 63, 80, 3, 1.0, 36.228),
        (230, 16, 80, 1, 1.0, 2.944),
        (208, 30, 100, 1, 1.0, 6.24),
        (230, 16, 80, 1, 0.9, 2.6496),
    ],
)
def test_feed_capacity_is_netbox_formula(
    voltage: float, amps: float, util: float, phase: int, pf: float, kw: float
) -> None:
    got = feed_kw(*(np.array([x], dtype=float) for x in (voltage, amps, util, phase, pf)))
    assert got[0] == pytest.approx(kw, abs=1e-3)


RACKS = """
kind: Facility
name: f
power: {it_capacity_kw: 100}
racks:
  - name: R2N
    redundancy: 2N
    feeds:
      - {name: a1, side: A, voltage: 415, amps: 32, phase: 3}
      - {name: a2, side: A, voltage: 415, amps: 32, phase: 3}
      - {name: b1, side: B, voltage: 415, amps: 32, phase: 3}
  - name: RN
    feeds:
      - {name: x, voltage: 230, amps: 16}
      - {name: y, voltage: 230, amps: 16}
  - name: EMPTY
"""
SERVERS = """
kind: Servers
facility: f
defaults: {u_height: 2}
servers:
  - {name: s1, rack: R2N, position: 1, power_w: {max: 10000, typical: 6000}}
  - {name: s2, rack: R2N, position: 3, power_w: {max: 10000, typical: 6000}}
  - {name: s3, rack: RN, position: 1, power_w: {max: 1000}}
"""


@pytest.fixture
def capacity(tmp_path: Path) -> dict[str, dict[str, float]]:
    (tmp_path / "f.yaml").write_text(RACKS)
    (tmp_path / "s.yaml").write_text(SERVERS)
    inv, problems = load([tmp_path])
    assert problems == []
    return compute(inv).racks


def test_2n_rack_capacity_is_the_smaller_side(capacity: dict[str, dict[str, float]]) -> None:
    rack = capacity["rack/f/R2N"]
    assert rack["side_a_kw"] == pytest.approx(36.8, abs=0.01)
    assert rack["side_b_kw"] == pytest.approx(18.4, abs=0.01)
    assert rack["capacity_kw"] == rack["side_b_kw"]


def test_n_rack_capacity_is_the_sum(capacity: dict[str, dict[str, float]]) -> None:
    assert capacity["rack/f/RN"]["capacity_kw"] == pytest.approx(2 * 2.944)
    assert "side_a_kw" not in capacity["rack/f/RN"]  # sides mean nothing without 2N


def test_rack_load_sums_server_max_draw(capacity: dict[str, dict[str, float]]) -> None:
    assert capacity["rack/f/R2N"]["load_kw"] == 20.0
    assert capacity["rack/f/R2N"]["servers"] == 2
    assert capacity["rack/f/R2N"]["utilization_pct"] == pytest.approx(100 * 20 / 18.4, abs=0.01)
    assert capacity["rack/f/RN"]["load_kw"] == 1.0


def test_rack_without_feeds_has_zero_capacity_and_no_utilization(
    capacity: dict[str, dict[str, float]],
) -> None:
    empty = capacity["rack/f/EMPTY"]
    assert empty["capacity_kw"] == 0 and empty["feeds"] == 0
    assert "utilization_pct" not in empty


def test_typical_basis_uses_typical_draw(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        RACKS.replace("it_capacity_kw: 100", "it_capacity_kw: 100, basis: typical")
    )
    (tmp_path / "s.yaml").write_text(SERVERS)
    inv, _ = load([tmp_path])
    cap = compute(inv)
    assert cap.racks["rack/f/R2N"]["load_kw"] == 12.0
    # s3 has no typical draw: its max counts.
    assert cap.racks["rack/f/RN"]["load_kw"] == 1.0
    assert cap.facilities["facility/f"]["it_load_kw"] == 13.0
