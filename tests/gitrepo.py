"""A git repository holding a small inventory, for `checker diff` tests
(tests/test_diff.py, tests/test_diff_settings.py): the `repo` fixture, which
tests/conftest.py offers every test module."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

FACILITY = """\
    kind: Facility
    name: hx1
    power: {it_capacity_kw: 500}
    racks:
      - name: H01
        redundancy: 2N
        feeds:
          - {name: H01-A, side: A, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
          - {name: H01-B, side: B, voltage: 415, amps: 32, phase: 3, max_utilization: 80}
      - name: H02
        redundancy: 2N
        feeds:
          - {name: H02-A, side: A, voltage: 415, amps: 63, phase: 3, max_utilization: 80}
          - {name: H02-B, side: B, voltage: 415, amps: 63, phase: 3, max_utilization: 80}
    cooling: {capacity_kw: 600}
    """
SERVERS = """\
    kind: Servers
    facility: hx1
    defaults:
      support: {vendor: NVIDIA, level: 24x7, until: 2030-12-31}
    servers:
      - {name: g1, model: dgx-h100, rack: H01, position: 1}
    """
TWO_MORE = ("  - {name: g2, model: dgx-h100, rack: %s, position: 10}\n"
            "  - {name: g3, model: dgx-h100, rack: %s, position: 20}\n")


def git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *who, *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose HEAD holds a clean inventory: one DGX H100 in 2N rack H01."""
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / "facility.yaml").write_text(textwrap.dedent(FACILITY))
    (tmp_path / "inv" / "servers.yaml").write_text(textwrap.dedent(SERVERS))
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "0")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "clean")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def add_two(repo: Path, rack: str) -> None:
    with (repo / "inv" / "servers.yaml").open("a") as f:
        f.write(TWO_MORE % (rack, rack))
