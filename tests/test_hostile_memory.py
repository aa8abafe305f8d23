"""Memory that grows with the file, not faster (issue 17, "Memory").

A 20 MB YAML list once peaked at 2.5 GB and a million unknown keys at 2.2 GB:
every value's source map built to place one error, and a dict per pydantic
error (~1 KB) for millions of errors. Now a file's peak stays within a stated
factor of its size (docs/security.md, benchmarks/input_memory.py): checked
here on a real process's peak for moderate files, and on the mechanisms that
keep it so (limits that refuse, problems counted past the first 1,000,
validation a piece at a time, positions without a tree).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks import input_memory
from checker.core.errors import MAX_LISTED
from checker.load import build
from checker.load.models import MAX_ITEMS
from checker.source import fastpath, reader
from checker.source.parse import MAX_KEYS
from tests.conftest import AS_OF, CliRunner

FACILITY = input_memory.FACILITY
SERVERS = input_memory.SERVERS_HEAD


def _peak_mb(file: Path) -> float:
    """Peak resident MiB of one audit of `file` in a fresh process."""
    argv = [sys.executable, "-m", "checker.cli", "audit", str(file), *AS_OF, "--format", "json"]
    with subprocess.Popen([*argv, "--no-cache", "--jobs", "1"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, cwd=file.parent) as child:
        _, _, usage = os.wait4(child.pid, 0)
        child.returncode = 0  # reaped here
    return usage.ru_maxrss / 1024


# What an audit may add to a tiny audit's peak, per MB of YAML: what
# benchmarks/input_memory.py measures for these cases is 3 to 66; before issue 17,
# over 100 (a list of `- {}` servers: 710).
FACTOR = 80
CASES: list[tuple[str, Callable[[int], str]]] = [
    ("empty-servers", input_memory.empty_servers),
    ("servers-not-mappings", input_memory.servers_not_mappings),
    ("unknown-keys-in-one-mapping", input_memory.unknown_keys_in_one_mapping),
    ("unknown-keys-in-every-rack", input_memory.unknown_keys_in_every_rack),
    ("long-name", input_memory.long_name),
]


@pytest.fixture(scope="module")
def base_mb(tmp_path_factory: pytest.TempPathFactory) -> float:
    tiny = tmp_path_factory.mktemp("tiny") / "tiny.yaml"
    tiny.write_text(FACILITY)
    return _peak_mb(tiny)


def _check(tmp_path: Path, base_mb: float, make: Callable[[int], str], size: int) -> None:
    file = tmp_path / "case.yaml"
    file.write_text(make(size))
    added, mb = _peak_mb(file) - base_mb, file.stat().st_size / 2**20
    assert added <= FACTOR * mb, f"{added:.0f} MiB for {mb:.1f} MiB: {added / mb:.0f}x"


# Unknown keys nested in lists inside an entry (a rack's 1,000 feeds of 900
# each): pydantic holds all of an entry's errors while it validates it, about
# 400 bytes each for 8 bytes of YAML (pydantic#8242); measured 116x.
NESTED_FACTOR = 130


@pytest.mark.slow
def test_unknown_keys_nested_in_an_entry_peak_within_their_stated_factor(
    tmp_path: Path, base_mb: float
) -> None:
    file = tmp_path / "case.yaml"
    file.write_text(input_memory.unknown_keys_in_nested_lists(3_000_000))
    added, mb = _peak_mb(file) - base_mb, file.stat().st_size / 2**20
    assert added <= NESTED_FACTOR * mb, f"{added:.0f} MiB for {mb:.1f} MiB: {added / mb:.0f}x"


def test_a_long_list_peaks_within_the_stated_factor(tmp_path: Path, base_mb: float) -> None:
    _check(tmp_path, base_mb, input_memory.top_level_list, 1_200_000)  # was 118x


@pytest.mark.slow
@pytest.mark.parametrize(("name", "make"), CASES, ids=[c[0] for c in CASES])
def test_hostile_files_peak_within_the_stated_factor(
    tmp_path: Path, base_mb: float, name: str, make: Callable[[int], str]
) -> None:
    _check(tmp_path, base_mb, make, 3_000_000)


# ---------------------------------------------------------------- limits that refuse
@pytest.mark.parametrize("anchor", ["", "x-a: &a 1\n"], ids=["fast-path", "event-parser"])
def test_a_mapping_of_too_many_keys_is_refused_where_it_goes_over(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, anchor: str
) -> None:
    monkeypatch.chdir(tmp_path)
    keys = "".join(f"k{i}: 1\n" for i in range(MAX_KEYS))  # with kind and name: 2 over
    Path("f.yaml").write_text(f"{anchor}kind: Facility\nname: f1\n{keys}")
    run = cli("audit", "f.yaml", *AS_OF)
    assert run.code == 2 and run.lines == [  # a key a line: the 1,001st on line 1,001
        f"f.yaml:{MAX_KEYS + 1}:1: error schema.limit a mapping of more than 1,000 keys: refused"
        " (no inventory needs that many)",
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ], run.out[:500]


def test_a_list_inside_an_entry_past_its_limit_is_one_problem(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    feeds = "".join("      - 1\n" for _ in range(MAX_ITEMS + 1))
    Path("f.yaml").write_text(f"{FACILITY}racks:\n  - name: R1\n    feeds:\n{feeds}")
    run = cli("audit", "f.yaml", *AS_OF)
    assert run.code == 2 and run.lines == [
        "f.yaml:8:7: error schema.invalid racks.0.feeds: List should have at most 1000 items after"
        " validation, not 1001",
        "checker: 1 error, 0 warnings, 0 info, 0 waived: fail",
    ], run.out[:500]


# ---------------------------------------------------------------- counted, not listed
def test_past_the_first_problems_of_a_file_the_rest_are_counted(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3,000 servers that are not mappings: 1,000 listed and one finding for the other
    # 2,000, at the first of them; none is silently dropped.
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(FACILITY + SERVERS + "  - 1\n" * 3000)
    run = cli("audit", "s.yaml", *AS_OF, "--format", "json")
    findings = json.loads(run.out)["findings"]
    assert run.code == 2 and len(findings) == MAX_LISTED + 1
    assert findings[0]["message"] == "servers.0: Input should be a valid dictionary (got 1)"
    assert [f for f in findings if f["rule"] == "schema.limit"] == [{
        "rule": "schema.limit", "severity": "error", "category": "schema", "entity": "",
        "message": "2,000 more problems in this file, from here on, not listed (the first 1,000 are):"
                   " fix those and run again",
        "remediation": "", "file": "s.yaml", "line": 1010, "column": 5, "waived": False,
    }]


def test_past_the_listed_problems_no_error_is_described(monkeypatch: pytest.MonkeyPatch) -> None:
    # Describing an error builds a dict of it (~1 KB): of an item with a million
    # errors only the few still to be listed are, read from pydantic's JSON.
    from pydantic import BaseModel, ConfigDict, ValidationError

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")

    try:
        Strict.model_validate({f"k{i}": 1 for i in range(20_000)})
    except ValidationError as exc:
        error = exc
    described: list[int] = []
    real = reader.first_errors

    def counting(exc: Any, count: int) -> Any:
        found = real(exc, count)
        described.append(len(found))
        return found

    monkeypatch.setattr(reader, "first_errors", counting)
    src = reader.parse_text("a: 1\n")[0].src
    found = list(reader.problems(error, Strict, src, limit=3))
    assert described == [3] and [message for _, _, message in found] == [
        "unknown field 'k0'", "unknown field 'k1'", "unknown field 'k2'"]
    assert real(error, 3) == error.errors(include_url=False)[:3]  # the errors pydantic lists


# ---------------------------------------------------------------- a piece at a time
def test_servers_are_validated_a_piece_at_a_time(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(FACILITY + SERVERS + "  - {}\n" * 1000)  # mappings: servers to validate
    sizes: list[int] = []
    real = build._servers()

    class Recording:
        @staticmethod
        def validate_python(values: list[Any], **options: Any) -> Any:
            sizes.append(len(values))
            return real.validate_python(values, **options)

    monkeypatch.setattr(build, "_servers", lambda: Recording)
    seen: list[int] = []
    pydantic_real = reader.TypeAdapter

    def adapter(kind: Any) -> Any:
        made = pydantic_real(kind)

        class Counted:
            @staticmethod
            def validate_python(value: Any, **options: Any) -> Any:
                seen.append(len(value) if isinstance(value, list) else 1)
                return made.validate_python(value, **options)

        return Counted

    monkeypatch.setattr(reader, "TypeAdapter", adapter)
    run = cli("audit", "s.yaml", *AS_OF)
    assert run.code == 2
    assert seen and max(seen) <= reader.PIECE  # the document's list of 1,000, a piece at a time
    assert sum(sizes) == 1000 and max(sizes) <= reader.PIECE  # and the servers, a piece at a time


# ---------------------------------------------------------------- positions
def test_a_document_that_is_a_long_list_is_placed_without_a_tree(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Placing the document worked out the map of every item of it first.
    monkeypatch.chdir(tmp_path)
    Path("l.yaml").write_text("# a list\n" + "- an-item-of-a-list\n" * 50_000)
    trees: list[object] = []
    real = fastpath._Tree

    def recording(text: str) -> Any:
        trees.append(text)
        return real(text)

    monkeypatch.setattr(fastpath, "_Tree", recording)
    run = cli("audit", "l.yaml", *AS_OF)
    assert run.code == 2 and run.lines[0] == (
        "l.yaml:2:1: error schema.document a document must be a mapping with a `kind`, not a list")
    assert trees == []


@pytest.mark.parametrize(
    ("text", "fast"),
    [("- 1\n" * 300_000, False), ("- [1,1,1,1,1,1,1,1]\n" * 60_000, False),
     ("- name: an-item-of-a-list\n" * 60_000, True)],
    ids=["a-line-a-node", "flow-lists", "plain-items"],
)
def test_a_file_of_a_few_bytes_a_node_goes_to_the_event_parser(text: str, fast: bool) -> None:
    # rapidyaml's tree holds ~250 bytes a node: 60x such a file, where the event
    # parser's map holds ~30x (benchmarks/input_memory.py).
    assert len(text) >= 1_000_000
    assert (fastpath.load(text) is not None) is fast


# ---------------------------------------------------------------- long values
LONG = "x" * 100_000
BIG = "1" + "0" * 100_000
MINIMAL_FILES = {name: (Path(__file__).parent / "fixtures" / "minimal" / name).read_text()
                 for name in ("facility.yaml", "servers.yaml")}


def _minimal(**replace: str) -> dict[str, str]:
    files = dict(MINIMAL_FILES)
    for old, new in replace.items():
        name = next(n for n, text in files.items() if old in text)
        files[name] = files[name].replace(old, new, 1)
    return files


def _waiver(**fields: str) -> str:
    waiver = {"rule": "power.rack-capacity", "entity": "rack/f1/R01", "reason": "because", "owner": "me",
              "expires": "2027-06-01", **fields}
    return "kind: Waivers\nwaivers:\n  - {" + ", ".join(f"{k}: {v}" for k, v in waiver.items()) + "}\n"


LONG_VALUES: list[tuple[str, dict[str, str], tuple[str, ...]]] = [
    ("kind", {"x.yaml": f"kind: {LONG}\n"}, ()),
    ("name", _minimal(**{"name: f1": f"name: {LONG}"}), ()),
    ("unknown-key", {"f.yaml": MINIMAL_FILES["facility.yaml"] + f"{LONG}: 1\n"}, ()),
    ("duplicate-key", {"f.yaml": MINIMAL_FILES["facility.yaml"] + f"{LONG}: 1\n{LONG}: 2\n"}, ()),
    ("server-model", _minimal(**{"    rack: R01": f"    model: {LONG}\n    rack: R01"}), ()),
    ("server-rack", _minimal(**{"rack: R01": f"rack: {LONG}"}), ()),
    ("gpu-model", _minimal(**{"model: l4": f"model: {LONG}"}), ()),
    ("octal-number", _minimal(**{"amps: 32": f"amps: 0{BIG}"}), ()),  # was exit 3: no decimal text
    ("hex-number", _minimal(**{"amps: 32": f"amps: 0x{BIG}"}), ()),
    ("huge-number", _minimal(**{"amps: 32": f"amps: {BIG}"}), ()),
    ("undefined-alias", {"f.yaml": MINIMAL_FILES["facility.yaml"] + f"x-a: *{LONG}\n"}, ()),
    ("tag", {"f.yaml": MINIMAL_FILES["facility.yaml"] + f"x-a: !{LONG} 1\n"}, ()),
    ("phase", _minimal(**{"phase: 1, max": f"phase: '{LONG}', max"}), ()),
    ("waiver-rule", {**MINIMAL_FILES, "w.yaml": _waiver(rule=LONG)}, ()),
    ("waiver-rule-glob", {**MINIMAL_FILES, "w.yaml": _waiver(rule="power." + "*" * 100_000)}, ()),
    ("waiver-reason", {**MINIMAL_FILES, "w.yaml": _waiver(reason=LONG)}, ()),
    ("waiver-owner", {**MINIMAL_FILES, "w.yaml": _waiver(owner=LONG)}, ()),
    ("config-select", {**MINIMAL_FILES, "checker.yaml": f"select: ['{LONG}']\n"}, ()),
    ("config-rule-folder", {**MINIMAL_FILES, "checker.yaml": f"rules: ['{LONG}']\n"}, ()),
    ("as-of", MINIMAL_FILES, ("audit", ".", "--as-of", LONG)),
    ("max-per-rule", MINIMAL_FILES, ("audit", ".", "--max-per-rule", LONG)),
    ("format", MINIMAL_FILES, ("audit", ".", "--format", LONG)),
    ("fail-on", MINIMAL_FILES, ("audit", ".", "--fail-on", LONG)),
    ("explain", MINIMAL_FILES, ("explain", LONG)),
    ("command", MINIMAL_FILES, (LONG,)),
    ("color", MINIMAL_FILES, ("audit", ".", "--color", LONG)),
    ("unknown-option", MINIMAL_FILES, ("audit", ".", "--" + LONG)),
    ("extra-argument", MINIMAL_FILES, ("rules", "list", LONG, LONG)),
    ("rule-id", {"r/r.yaml": f"rules:\n  - {{id: acme.{LONG}, title: t, category: power, severity: error,"
                              " on: server, when: 'name == \"x\"', message: m, remediation: r}\n"},
     ("rules", "test", "r")),
]


@pytest.mark.parametrize(("files", "argv"), [c[1:] for c in LONG_VALUES], ids=[c[0] for c in LONG_VALUES])
def test_a_long_value_never_comes_back_whole(
    tmp_path: Path, cli: CliRunner, monkeypatch: pytest.MonkeyPatch, files: dict[str, str],
    argv: tuple[str, ...],
) -> None:
    # A message quotes 120 characters of a value and how long it is, wherever the
    # value is (a 50 MB name was printed back in full); never exit 3.
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        Path(name).parent.mkdir(exist_ok=True)
        Path(name).write_text(text)
    for fmt in ("text", "json", "markdown") if not argv else ("",):
        run = cli(*(argv or ("audit", ".", *AS_OF, "--format", fmt)))
        shown = run.out + run.err
        assert run.code in (0, 1, 2) and "internal error" not in shown, shown[:300]
        assert LONG not in shown and BIG not in shown
        # Argparse's own messages too (an invalid choice, an unknown option), not
        # only by the last guard on standard error (cli.MAX_LINE).
        assert max(map(len, shown.splitlines()), default=0) < 1_000, max(shown.splitlines(), key=len)[:300]
