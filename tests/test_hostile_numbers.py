"""Numbers YAML 1.1 reads otherwise than people do (issue 17, "Numbers").

`amps: 032` is octal 26, `voltage: 3:50` base 60 (230), `3_2` is 32: each is
refused with a located message that says what was read and what to write,
through the event parser and the fast path alike; absurd magnitudes too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checker.source import fastpath
from tests.conftest import AS_OF, MINIMAL, CliRunner


@pytest.fixture
def inv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(MINIMAL, tmp_path / "inv")
    return tmp_path / "inv"


def _replace(path: Path, old: str, new: str) -> tuple[int, int]:
    """Replace the first `old` in the file; the (line, column) of the value written."""
    text = path.read_text()
    index = text.index(old)
    path.write_text(text.replace(old, new, 1))
    before = text[:index]
    key_end = old.index(":") + 2
    return before.count("\n") + 1, index - before.rfind("\n") + key_end


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("032", "032 is octal 26 in YAML 1.1; write 32"),
        ("0x20", "0x20 is hexadecimal in YAML 1.1 (32); write 32"),
        ("0b100000", "0b100000 is binary in YAML 1.1 (32); write 32"),
        ("3:50", "3:50 is base 60 in YAML 1.1 (230); write 230, or quote it if it is not a number"),
        ("3_2", "3_2 is 32 in YAML 1.1 (underscores are dropped); write 32"),
        ("+32", "+32: a leading + is YAML 1.1 only; write 32"),
        ("3_2.0", "3_2.0 is a YAML 1.1 spelling of a number; write it plainly (e.g. 32.0), or quote it"),
        ("+32.0", "+32.0 is a YAML 1.1 spelling of a number; write it plainly (e.g. 32.0), or quote it"),
    ],
)
def test_yaml_1_1_numbers_in_a_rating_are_refused(
    inv: Path, cli: CliRunner, value: str, message: str
) -> None:
    line, column = _replace(inv / "facility.yaml", "amps: 32", f"amps: {value}")
    run = cli("audit", "inv", *AS_OF, "--format", "text")
    assert run.code == 2, run.out
    assert f"inv/facility.yaml:{line}:{column}: error schema.yaml {message}" in run.out.splitlines()


@pytest.mark.parametrize("value", ["010", "0x1", "1_0", "+1", "1:10"])
def test_yaml_1_1_numbers_in_a_position_are_refused(inv: Path, cli: CliRunner, value: str) -> None:
    _replace(inv / "servers.yaml", "position: 1", f"position: {value}")
    run = cli("audit", "inv", *AS_OF, "--format", "text")
    assert run.code == 2 and "error schema.yaml" in run.out and "YAML 1.1" in run.out


@pytest.mark.parametrize("text", ["032", "0x20", "3:50", "3_2", "+32", "0b100000", "3_2.5", "+1.5"])
def test_the_fast_path_leaves_them_to_the_event_parser(text: str) -> None:
    with pytest.raises(fastpath.Refused):
        fastpath._plain(text)


@pytest.mark.parametrize("text", ["32", "-32", "0", "32.5", "1.0e-3", '"032"'])
def test_plain_numbers_and_quoted_strings_pass(inv: Path, cli: CliRunner, text: str) -> None:
    _replace(inv / "facility.yaml", "amps: 32", f"amps: {text}")
    run = cli("audit", "inv", *AS_OF, "--format", "text")
    assert "in YAML 1.1" not in run.out


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("amps: 32", "amps: 1.0e-300",
         "amps: 1e-300 is no plausible quantity (below 1e-06 of its unit); a typo? (got 1.0e-300)"),
        ("count: 2", "count: " + "9" * 4000, "gpu.count: Input should be less than or equal to 1000000000"),
    ],
)
def test_absurd_magnitudes_are_refused(inv: Path, cli: CliRunner, old: str, new: str, message: str) -> None:
    path = inv / ("facility.yaml" if old.startswith("amps") else "servers.yaml")
    _replace(path, old, new)
    run = cli("audit", "inv", *AS_OF, "--format", "text")
    assert run.code == 2 and message in run.out, run.out + run.err
    assert max(len(line) for line in run.out.splitlines()) < 400  # the value is clipped
