"""A 100,000-server fleet's SARIF, JUnit and job summary within the limits of
GitHub and GitLab (benchmarks/formats.py, which prints the figures): slow."""

from __future__ import annotations

import pytest

from benchmarks import formats


@pytest.mark.slow
def test_a_100k_server_fleet_stays_within_every_limit() -> None:
    figures = formats.measure(100_000)
    assert formats.over(figures) == []
    # Every rack of the fleet is over its feeds: 75,002 open findings, of which
    # SARIF keeps GitHub's 25,000 and counts the rest; JUnit a case per rule.
    assert (figures["sarif results"], figures["sarif left out"]) == (25_000, 50_002)
    assert figures["gitlab issues"] == 75_002
    assert figures["junit cases"] < 1_000
