"""Loading inventories: every input problem is one exact `file:line:column` finding, exit 2.

Each case writes `bad.yaml` into a temporary folder (next to the minimal
fixture's files it needs) and audits that folder, so printed paths are short.
Positions are 1-based; the comment on each case says what the position names.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.core.perf import gc_paused
from checker.core.resources import knowledge_dir
from checker.derive.knowledge import TABLE_KINDS
from checker.load import build as loader
from checker.load import models as m
from checker.load.build import KINDS, load
from checker.load.reading import ReadOptions
from checker.source import parse as source
from tests.conftest import AS_OF, FIXTURES, CliRunner, Writer, summary

SERVERS_HEAD = """\
    kind: Servers
    facility: f1
    servers:
      - name: s1
        rack: R01
        u_height: 2
        power_w: {max: 3000}
"""

# The classic billion laughs, 9 levels of 9 aliases: ~4.9e8 nodes if expanded.
BOMB = "kind: Facility\nname: f1\nx-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"x-{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)

# (id, minimal files copied beside bad.yaml, bad.yaml, expected finding lines)
SCHEMA_CASES: list[tuple[str, tuple[str, ...], str | bytes, list[str]]] = [
    (  # 3:19 is the second ':' on the line
        "invalid-yaml", (),
        """\
        kind: Facility
        name: f1
        location: Shanghai: CN
        """,
        ["bad.yaml:3:19: error schema.yaml invalid YAML: mapping values are not allowed in this context"],
    ),
    (  # 5:3 is the second `it_capacity_kw` key
        "duplicate-key", (),
        """\
        kind: Facility
        name: f1
        power:
          it_capacity_kw: 100
          it_capacity_kw: 200
        """,
        ["bad.yaml:5:3: error schema.duplicate-key duplicate key 'it_capacity_kw' (first set on line 4)"],
    ),
    (  # 8:9 is the `amp` key; 6:9 the feed mapping that lacks `amps`
        "unknown-field", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - name: R01-A
                voltage: 230
                amp: 32
        """,
        [
            "bad.yaml:6:9: error schema.missing-field missing required field 'racks.0.feeds.0.amps'",
            "bad.yaml:8:9: error schema.unknown-field unknown field 'racks.0.feeds.0.amp' "
            "(did you mean 'amps'?)",
        ],
    ),
    (  # 6:43 is `lots`
        "wrong-type", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {name: R01-A, voltage: 230, amps: lots}
        """,
        ["bad.yaml:6:43: error schema.invalid racks.0.feeds.0.amps: Input should be a valid number "
         "(got 'lots')"],
    ),
    (  # 6:43 is `"32"`: numbers are strict, a quoted number is text
        "quoted-number", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {name: R01-A, voltage: 230, amps: "32"}
        """,
        ["bad.yaml:6:43: error schema.invalid racks.0.feeds.0.amps: Input should be a valid number "
         "(got '32'): write the number without quotes"],
    ),
    (  # 6:43 is `yes`: a YAML boolean is not a number (lax validation made it a 1 A feed)
        "boolean-number", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {name: R01-A, voltage: 230, amps: yes}
        """,
        ["bad.yaml:6:43: error schema.invalid racks.0.feeds.0.amps: Input should be a valid number "
         "(got True)"],
    ),
    (  # 6:32 is `-230`
        "negative-voltage", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {name: R01-A, voltage: -230, amps: 32}
        """,
        ["bad.yaml:6:32: error schema.invalid racks.0.feeds.0.voltage: "
         "Input should be greater than 0 (got -230)"],
    ),
    (  # 5:11 is `R02`
        "unknown-rack", ("facility", "workloads"),
        SERVERS_HEAD.replace("rack: R01", "rack: R02"),
        ["bad.yaml:5:11: error schema.reference no rack 'R02' in facility f1 (did you mean 'R01'?)"],
    ),
    (
        "document-is-a-list", (),
        """\
        - kind: Facility
          name: f1
        """,
        ["bad.yaml:1:1: error schema.document a document must be a mapping with a `kind`, not a list"],
    ),
    (  # 3:12 is the byte 0xfc (Latin-1 'ü') after "location: Z"
        "not-utf8", (),
        b"kind: Facility\nname: f1\nlocation: Z\xfcrich\n",
        ["bad.yaml:3:12: error schema.encoding not UTF-8: byte 0xfc cannot be decoded"],
    ),
    (
        "alias-bomb", (),
        BOMB,
        ["bad.yaml:8:10: error schema.alias-bomb aliases expand 26 written nodes to over 141148: "
         "refused as an alias bomb"],
    ),
    (
        "missing-kind", (),
        """\
        name: f1
        racks: []
        """,
        ["bad.yaml:1:1: error schema.document missing `kind` "
         f"(one of {', '.join([*KINDS, *TABLE_KINDS])})"],
    ),
    (  # 1:7 is the kind's value
        "unknown-kind", (),
        """\
        kind: Facilty
        name: f1
        """,
        ["bad.yaml:1:7: error schema.document unknown kind 'Facilty' (did you mean 'Facility'?)"],
    ),
    (  # 9:13 is `12.2`
        "unquoted-version", ("facility", "workloads"),
        SERVERS_HEAD + "        software:\n          cuda: 12.2\n",
        ["bad.yaml:9:13: error schema.invalid software.cuda: write version numbers as strings: "
         'quote it, as in "12.2" (got 12.2)'],
    ),
    (  # 9:13 is `12.10`: the float is 12.1, the message shows what was written
        "unquoted-version-trailing-zero", ("facility", "workloads"),
        SERVERS_HEAD + "        software:\n          cuda: 12.10\n",
        ["bad.yaml:9:13: error schema.invalid software.cuda: write version numbers as strings: "
         'quote it, as in "12.10" (got 12.10)'],
    ),
    (  # 9:13 is `v12`
        "bad-version", ("facility", "workloads"),
        SERVERS_HEAD + "        software:\n          cuda: v12\n",
        ["bad.yaml:9:13: error schema.invalid software.cuda: a version is numbers separated by dots, "
         "with an optional +variant (e.g. 2.3.1+cu121) (got 'v12')"],
    ),
    (  # 7:11 is the second `s1`; line 5 the first
        "duplicate-server", ("facility", "workloads"),
        """\
        kind: Servers
        facility: f1
        defaults: {rack: R01, u_height: 2, power_w: {max: 100}}
        servers:
          - name: s1
          - name: s2
          - name: s1
        """,
        ["bad.yaml:7:11: error schema.duplicate-name duplicate server name 's1' "
         "(first defined at bad.yaml:5)"],
    ),
    (  # 5:5 is the rack's `redundancy` key
        "2n-one-side", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            redundancy: 2N
            feeds:
              - {name: R01-A1, side: A, voltage: 230, amps: 32}
              - {name: R01-A2, side: A, voltage: 230, amps: 32}
        """,
        ["bad.yaml:5:5: error schema.feed-sides rack R01 is 2N but has no feed on side B"],
    ),
    (  # 7:9 is the feed without a side
        "2n-feed-without-side", (),
        """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            redundancy: 2N
            feeds:
              - {name: R01-A, voltage: 230, amps: 32}
              - {name: R01-B, side: B, voltage: 230, amps: 32}
        """,
        [
            "bad.yaml:5:5: error schema.feed-sides rack R01 is 2N but has no feed on side A",
            "bad.yaml:7:9: error schema.feed-sides rack R01 is 2N: feed R01-A needs `side: A` or `side: B`",
        ],
    ),
    (  # 8:18 is `h100-sxm`
        "unknown-gpu-model", ("facility", "workloads"),
        SERVERS_HEAD + "        gpu: {model: h100-sxm, count: 8}\n",
        ["bad.yaml:8:18: error schema.reference unknown GPU model 'h100-sxm' "
         "(did you mean 'h100-sxm-80gb'?)"],
    ),
    (  # 8:12 is `dgx-h10`
        "unknown-server-model", ("facility", "workloads"),
        SERVERS_HEAD + "        model: dgx-h10\n",
        ["bad.yaml:8:12: error schema.reference unknown server model 'dgx-h10' (did you mean 'dgx-h100'?)"],
    ),
    (  # 8:15 is `w-1`
        "unknown-workload", ("facility", "workloads"),
        SERVERS_HEAD + "        workload: w-1\n",
        ["bad.yaml:8:15: error schema.reference unknown workload 'w-1' (did you mean 'w1'?)"],
    ),
    (  # 2:11 is `f-1`
        "unknown-facility", ("facility", "workloads"),
        SERVERS_HEAD.replace("facility: f1", "facility: f-1"),
        ["bad.yaml:2:11: error schema.reference unknown facility 'f-1' (did you mean 'f1'?)"],
    ),
    (  # 3:11 is the waiver's rule id
        "waiver-unknown-rule", ("facility", "servers", "workloads"),
        """\
        kind: Waivers
        waivers:
          - rule: power.rack-capacty
            entity: rack/f1/R01
            reason: PDU upgrade
            owner: ops@example.com
            expires: 2027-06-30
        """,
        ["bad.yaml:3:11: error schema.reference waiver names unknown rule 'power.rack-capacty' "
         "(did you mean 'power.rack-capacity'?)"],
    ),
    (  # 1:1 is the document that lacks `servers`, 3:1 the misspelt key
        "servers-misspelt", ("facility",),
        """\
        kind: Servers
        facility: f1
        server: []
        """,
        [
            "bad.yaml:1:1: error schema.missing-field missing required field 'servers'",
            "bad.yaml:3:1: error schema.unknown-field unknown field 'server' (did you mean 'servers'?)",
        ],
    ),
    (  # 2:7 is the name with a space
        "name-with-space", (),
        "kind: Facility\nname: f 1\n",
        ["bad.yaml:2:7: error schema.invalid name: a name is 1-200 characters without spaces or '/' "
         "(it becomes part of entity ids) (got 'f 1')"],
    ),
    (  # 3:11 is `!!python/object` (tags are refused, not constructed)
        "python-tag", (),
        "kind: Facility\nname: f1\nlocation: !!python/object/apply:os.system [true]\n",
        ["bad.yaml:3:11: error schema.yaml unsupported YAML tag "
         "tag:yaml.org,2002:python/object/apply:os.system"],
    ),
]


@pytest.mark.parametrize(("parts", "content", "expected"),
                         [pytest.param(*case[1:], id=case[0]) for case in SCHEMA_CASES])
def test_input_problem_is_one_located_finding(
    cli: CliRunner, workdir: Writer, parts: tuple[str, ...], content: str | bytes, expected: list[str],
) -> None:
    workdir("bad.yaml", content, minimal=parts)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.err == ""
    assert run.lines == [*expected, summary(error=len(expected))]


def test_alias_bomb_is_refused_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused on node counts alone: building the values would take minutes and gigabytes."""

    built = []
    real = source._scalar
    monkeypatch.setattr(source, "_scalar", lambda *a: built.append(1) or real(*a))
    with pytest.raises(source.YamlProblem) as exc:
        source.parse(BOMB)
    assert exc.value.rule == "schema.alias-bomb"
    assert len(built) < 40  # the scalars as written, none expanded


def test_waiver_for_unknown_entity(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        kind: Waivers
        waivers:
          - rule: power.rack-capacity
            entity: rack/f1/R02
            reason: PDU upgrade
            owner: ops@example.com
            expires: 2027-06-30
        """, minimal=("facility", "servers", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.err == ""
    # 4:13 is the entity.
    assert ("bad.yaml:4:13: error schema.reference waiver names unknown entity 'rack/f1/R02' "
            "(did you mean 'rack/f1/R01'?)") in run.lines


def test_waiver_for_unknown_entity_is_reported_once(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        kind: Waivers
        waivers:
          - rule: power.rack-capacity
            entity: rack/f1/R02
            reason: PDU upgrade
            owner: ops@example.com
            expires: 2027-06-30
        """, minimal=("facility", "servers", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert run.lines == [
        "bad.yaml:4:13: error schema.reference waiver names unknown entity 'rack/f1/R02' "
        "(did you mean 'rack/f1/R01'?)",
        summary(error=1),
    ]  # and not also as waiver.unused: the waiver is dropped


def test_without_waivers_no_entity_is_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waivers' entities are checked against every entity's id; with no waiver, those
    ids are not made at all (6 ms of a 10,000-server load)."""
    def unwanted(self: loader.Inventory) -> None:
        raise AssertionError("every entity's id made for no waiver")

    monkeypatch.setattr(loader.Inventory, "entities", unwanted)
    inv, problems = load([FIXTURES / "minimal"])
    assert problems == [] and inv.waivers == [] and len(inv.servers) > 0


# ---------------------------------------------------------------- defaults, anchors, documents
DEFAULTS = """\
    kind: Servers
    facility: f1
    defaults:
      rack: R01
      u_height: 2
      power_w: {max: 1000}
      workload: w1
    servers:
      - name: s1
      - name: s2
      - name: s3
    """


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param("power_w: {max: 1000}", "power_w: {max: -1000}",
                 "bad.yaml:6:18: error schema.invalid power_w.max: "
                 "Input should be greater than 0 (got -1000)",
                 id="invalid-value"),
    pytest.param("u_height: 2", "u_heigth: 2",
                 "bad.yaml:5:3: error schema.unknown-field unknown field 'u_heigth' "
                 "(did you mean 'u_height'?)",
                 id="unknown-field"),
    pytest.param("workload: w1", "gpu: {model: l44, count: 1}",
                 "bad.yaml:7:16: error schema.reference unknown GPU model 'l44' (did you mean 'l4'?)",
                 id="unknown-gpu"),
    # Dangling references name no server, so three inheriting servers give one line.
    pytest.param("rack: R01", "rack: R09",
                 "bad.yaml:4:9: error schema.reference no rack 'R09' in facility f1 (did you mean 'R01'?)",
                 id="rack"),
    pytest.param("workload: w1", "workload: w-1",
                 "bad.yaml:7:13: error schema.reference unknown workload 'w-1' (did you mean 'w1'?)",
                 id="workload"),
])
def test_defaults_problem_is_reported_once_at_the_defaults_line(
    cli: CliRunner, workdir: Writer, old: str, new: str, expected: str,
) -> None:
    """Inherited by three servers, reported once at the defaults line."""
    workdir("bad.yaml", DEFAULTS.replace(old, new), minimal=("facility", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines == [expected, summary(error=1)]


def test_same_reference_written_twice_is_reported_at_each_place(cli: CliRunner, workdir: Writer) -> None:
    """One finding per written mistake: the inherited one once, a server's own at its line."""
    content = DEFAULTS.replace("rack: R01", "rack: R09").replace("- name: s3", "- {name: s3, rack: R09}")
    workdir("bad.yaml", content, minimal=("facility", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines == [
        "bad.yaml:4:9: error schema.reference no rack 'R09' in facility f1 (did you mean 'R01'?)",
        "bad.yaml:11:22: error schema.reference no rack 'R09' in facility f1 (did you mean 'R01'?)",
        summary(error=2),
    ]


def test_merge_keys_and_x_keys(cli: CliRunner, in_fixtures: Path) -> None:
    """anchors/facility.yaml builds its racks and feeds from `x-` anchors with `<<`."""
    run = cli("audit", "anchors/facility.yaml", "minimal/servers.yaml", "minimal/workloads.yaml",
              *AS_OF, "--format", "json")
    assert run.code == 0, run.out
    racks = {r["entity"]: r for r in json.loads(run.out)["capacity"]["racks"]}
    # R01: 2N from the template, both feeds 230 V x 32 A x 80 %; R02: N (overridden), amps 16 (overridden).
    assert racks["rack/f1/R01"]["capacity_kw"] == 5.888
    assert racks["rack/f1/R01"]["side_b_kw"] == 5.888
    assert racks["rack/f1/R02"]["capacity_kw"] == 2.944
    assert racks["rack/f1/R02"]["feed_count"] == 1


def test_problem_in_an_anchor_points_at_the_anchor(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        x-feed: &feed {voltage: -230, amps: 32}
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {<<: *feed, name: R01-A}
        """)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines == [
        "bad.yaml:1:25: error schema.invalid racks.0.feeds.0.voltage: "
        "Input should be greater than 0 (got -230)",
        summary(error=1),
    ]


def test_x_keys_are_ignored_only_at_the_top(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            x-note: not a rack field
        """)
    run = cli("audit", ".", *AS_OF)
    assert run.lines == ["bad.yaml:5:5: error schema.unknown-field unknown field 'racks.0.x-note'",
                         summary(error=1)]


def test_multi_document_file(cli: CliRunner, in_fixtures: Path) -> None:
    """multidoc/rollout.yaml is the minimal fixture's three files joined with `---`."""
    run = cli("audit", "multidoc", *AS_OF, "--format", "json")
    assert run.code == 0
    capacity = json.loads(run.out)["capacity"]
    assert capacity["racks"][0]["server_count"] == 1
    assert capacity["facilities"][0]["entity"] == "facility/f1"


def test_problem_in_a_later_document_has_file_line(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        kind: Workloads
        workloads: []
        ---
        kind: Workloads
        workloads:
          - {name: w2, task: training, params_b: 7, precision: bf17}
        """)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines == [
        "bad.yaml:6:56: error schema.invalid workloads.0.precision: Input should be 'fp32', 'bf16', 'fp16', "
        "'fp8', 'mxfp8', 'int8', 'int4' or 'nvfp4' (got 'bf17')",
        summary(error=1),
    ]


@pytest.mark.parametrize("content", ["", "# nothing here yet\n", "\n\n"], ids=["empty", "comment", "blank"])
def test_empty_file_is_no_problem(cli: CliRunner, workdir: Writer, content: str) -> None:
    workdir("empty.yaml", content, minimal=("facility", "servers", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.out, run.err) == (0, summary(verdict="pass") + "\n", "")


@pytest.mark.parametrize("content", [
    "kind: Workloads\nworkloads: []\n---\n",
    "---\nkind: Workloads\nworkloads: []\n---\n",
    "---\n# to be filled in\n",
], ids=["trailing-marker", "leading-and-trailing", "marker-and-comment"])
def test_empty_documents_between_markers_are_skipped(cli: CliRunner, workdir: Writer, content: str) -> None:
    workdir("empty.yaml", content, minimal=("facility", "servers", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.out) == (0, summary(verdict="pass") + "\n")


@pytest.mark.parametrize(("content", "got"), [
    ("- kind: Facility\n", "a list"),
    ("Facility\n", "a string"),
    ("12\n", "a number"),
    ("1.5\n", "a number"),
    ("true\n", "a boolean"),
    ("2027-01-15\n", "a date"),
], ids=["list", "string", "int", "float", "boolean", "date"])
def test_document_that_is_not_a_mapping(cli: CliRunner, workdir: Writer, content: str, got: str) -> None:
    workdir("bad.yaml", "kind: Workloads\nworkloads: []\n---\n" + content)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines == [f"bad.yaml:4:1: error schema.document a document must be a mapping with a `kind`, "
                         f"not {got}", summary(error=1)]


def test_binary_document_is_named_a_scalar(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", "!!binary aGVsbG8=\n")
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines[0] == ("bad.yaml:1:1: error schema.document a document must be a mapping with a "
                            "`kind`, not a scalar")


@pytest.mark.parametrize("content", ["null\n", "~\n", "!!null\n", "---\n"])
def test_null_documents_are_empty_however_spelt(cli: CliRunner, workdir: Writer, content: str) -> None:
    workdir("empty.yaml", content, minimal=("facility", "servers", "workloads"))
    assert cli("audit", ".", *AS_OF).code == 0


def test_path_that_does_not_exist(cli: CliRunner, workdir: Writer) -> None:
    run = cli("audit", "nope/", *AS_OF)
    assert (run.code, run.out, run.err) == (2, "", "nope: no such file or directory\n")


def test_only_yaml_files_are_read(cli: CliRunner, workdir: Writer) -> None:
    workdir("notes.txt", "kind: nonsense\n", minimal=("facility", "servers", "workloads"))
    workdir("more/readme.md", "- not yaml\n")
    run = cli("audit", ".", *AS_OF)
    assert run.code == 0


def test_boolean_phase_is_refused(cli: CliRunner, workdir: Writer) -> None:
    workdir("bad.yaml", """\
        kind: Facility
        name: f1
        racks:
          - name: R01
            feeds:
              - {name: R01-A, voltage: 230, amps: 32, phase: true}
        """)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert len(run.lines) == 2, run.out
    assert run.lines[0].startswith("bad.yaml:6:54: error schema.invalid racks.0.feeds.0.phase: ")


# ---------------------------------------------------------------- load() itself
def test_load_minimal_builds_every_entity() -> None:
    inv, problems = load([FIXTURES / "minimal"])
    assert problems == []
    ids = inv.entities()
    for entity in ("facility/f1", "rack/f1/R01", "feed/f1/R01/R01-A", "feed/f1/R01/R01-B",
                   "server/s1", "workload/w1"):
        assert entity in ids
    assert inv.servers["s1"].facility == "f1"
    assert str(inv.servers["s1"].rollout_date) == "2027-02-01"
    assert "l4" in inv.gpu_models and "dgx-h100" in inv.server_models  # the built-in catalog


def test_catalog_model_fields_merge_under_the_server(workdir: Writer) -> None:
    workdir("servers.yaml", """\
        kind: Servers
        facility: f1
        servers:
          - {name: s1, model: dgx-h100, rack: R01, position: 1, weight_kg: 99}
        """, minimal=("facility",))
    inv, problems = load([Path()])
    assert problems == []
    server = inv.servers["s1"].server
    assert server.weight_kg == 99  # the server's own field wins
    assert server.gpu is not None and server.gpu.model == "h100-sxm-80gb"  # the rest is the catalog's
    assert server.power_w is not None and server.u_height is not None


def test_user_catalog_extends_the_builtin_one(cli: CliRunner, workdir: Writer) -> None:
    workdir("gpus.yaml", """\
        kind: GpuModels
        gpus:
          - name: acme-x1
            vendor: NVIDIA
            memory_gb: 96
            source: Acme datasheet rev 3
        """, minimal=("facility", "workloads"))
    workdir("servers.yaml", SERVERS_HEAD + "        gpu: {model: acme-x1, count: 4}\n"
            "        support: {vendor: Acme, level: 24x7, until: 2030-12-31}\n        workload: w1\n")
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.out) == (0, summary(verdict="pass") + "\n")


def test_user_catalog_cannot_redefine_a_builtin_gpu(cli: CliRunner, workdir: Writer) -> None:
    workdir("gpus.yaml", """\
        kind: GpuModels
        gpus:
          - {name: l4, vendor: NVIDIA, memory_gb: 24, source: me}
        """)
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    # The first definition is the built-in catalog, shown by its full path (it is not below the cwd).
    builtin = knowledge_dir() / "gpus.yaml"
    line = builtin.read_text(encoding="utf-8").splitlines().index("  - name: l4") + 1
    assert run.lines == [f"gpus.yaml:3:12: error schema.duplicate-name duplicate GPU model name 'l4' "
                         f"(first defined at {builtin.as_posix()}:{line})",
                         summary(error=1)]


def test_a_broken_document_does_not_cascade_into_dangling_references(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        "kind: Facility\nname: f1\nracks:\n  - name: R01\n"
        "    feeds:\n      - {name: a, voltage: -230, amps: 16}\n"
    )
    (tmp_path / "s.yaml").write_text(
        "kind: Servers\nfacility: f1\nservers:\n"
        "  - {name: s1, rack: R01, position: 1, u_height: 1, power_w: {max: 100}, workload: w1}\n"
    )
    (tmp_path / "w.yaml").write_text(
        "kind: Workloads\nworkloads:\n  - {name: w1, task: training, params_b: 1, precision: bf16, zap: 1}\n"
    )
    _, problems = load([tmp_path])
    assert [p.rule for p in problems] == ["schema.invalid", "schema.unknown-field"]


# ---------------------------------------------------------------- merged source maps
NESTED = """\
defaults:
  power_w: {max: 1000, typical: 700}
  rack: R01
server:
  name: s1
  power_w: {typical: 800}
"""


def test_merged_source_maps_point_where_each_value_was_written() -> None:
    from checker.load.build import _deep_merge
    from checker.source import fastpath

    (doc,) = fastpath.load(NESTED) or []
    defaults, server = doc.src.descend("defaults"), doc.src.descend("server")
    value, src = _deep_merge((doc.value["defaults"], defaults), (doc.value["server"], server))
    assert value == {"power_w": {"max": 1000, "typical": 800}, "rack": "R01", "name": "s1"}
    assert isinstance(src, source.LazySrc)
    assert src.locate(["power_w", "max"], key=False) == (2, 18)  # from the defaults
    assert src.locate(["power_w", "typical"], key=False) == (6, 22)  # the server's own
    assert src.locate(["rack"]) == (3, 3)
    assert src.locate(["name"]) == (5, 3)
    assert src.locate(["power_w"]) == (6, 3)  # the server's key wins


CHAINED = """\
defaults:
  power_w: {max: 1000, typical: 700}
  rack: R01
  network: {fabric: ethernet, nic: {ports: 2, "gbps": 100}}
model:
  gpu: {model: h100-sxm-80gb, count: 8}
  network: {nvlink: true}
server:
  name: s1
  'power_w': {typical: 800}
  network: {nic: {ports: 4}, ids: [a, {b: 1}]}
  tags: [x, y]
"""


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [prefix, (*prefix, "missing"), (*prefix, 0)]
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*prefix, i))
    return found


def test_a_position_in_a_merge_is_found_along_its_path_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server merged over its defaults and its catalog model: each position
    is the one the whole merged map gives, and no whole map is worked out for
    it (a finding on every server once worked out every server's, 4.3 s of a
    7.4 s audit of 10,000 servers)."""
    from checker.load import build
    from checker.source import fastpath

    def merged() -> tuple[dict[str, Any], source.Src]:
        (doc,) = fastpath.load(CHAINED) or []
        parts = [(doc.value[k], doc.src.resolved().descend(k)) for k in ("defaults", "model", "server")]
        return build._deep_merge(build._deep_merge(parts[0], parts[1]), parts[2])

    value, whole = merged()
    whole_map = whole.resolved()
    assert not isinstance(whole_map, source.LazySrc)
    worked_out: list[object] = []
    compute, resolve = build._MergedSrc._compute, fastpath._Tree.resolve
    monkeypatch.setattr(build._MergedSrc, "_compute", lambda self: worked_out.append(self) or compute(self))
    monkeypatch.setattr(fastpath._Tree, "resolve", lambda tree, *a: worked_out.append(a) or resolve(tree, *a))
    for path in _paths(value):
        for key in (True, False):
            _, src = merged()
            worked_out.clear()
            assert src.locate(path, key=key) == whole_map.locate(path, key=key), (path, key)
            assert worked_out == [], path
    assert whole_map.locate(["network", "nic", "gbps"]) == (4, 47)  # the defaults' quoted key
    assert whole_map.locate(["power_w"]) == (10, 3)  # the server's quoted key


def test_merging_does_not_work_out_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.load.build import _deep_merge
    from checker.source import fastpath

    (doc,) = fastpath.load(NESTED) or []
    monkeypatch.setattr(fastpath, "parse", lambda text: pytest.fail("positions worked out"))
    defaults, server = doc.src.descend("defaults"), doc.src.descend("server")
    _deep_merge((doc.value["defaults"], defaults), (doc.value["server"], server))


def test_an_inventory_is_freed_with_the_cycle_collector_paused() -> None:
    # The command line runs with the collector paused: a reference cycle in the
    # loader (a builder holding its own bound methods) kept every model alive
    # to the end of the run, 180 MB of a 50,000-server audit's peak.
    with gc_paused():
        inventory, _ = load([FIXTURES.parent.parent / "inventories"])
        alive = weakref.ref(inventory)
        del inventory
        assert alive() is None


# ---------------------------------------------------------------- parts shared between servers
_TWO_FILES = """\
    kind: Servers
    facility: f1
    servers:
      - {name: NAME-1, rack: R01, position: 1, u_height: 2, power_w: {max: 900}, psu: PSU_A}
      - {name: NAME-2, rack: R01, position: 5, u_height: 2, power_w: {max: 900}, psu: PSU_B}
    """


def test_equal_parts_are_one_shared_model_across_servers_and_files(workdir: Writer) -> None:
    psu = "{count: 2, rating_w: 1600}"
    for name in ("a", "b"):
        workdir(f"{name}.yaml", _TWO_FILES.replace("NAME", name).replace("PSU_A", psu).replace("PSU_B", psu),
                minimal=("facility",))
    inv, problems = load([Path()])
    assert problems == []
    psus = {id(inv.servers[f"{n}-{i}"].server.psu) for n in "ab" for i in (1, 2)}
    assert len(psus) == 1
    assert inv.servers["a-1"].server.psu == inv.servers["b-2"].server.psu


_INVALID = "error schema.invalid "
_NOT_INT = _INVALID + "psu.count: Input should be a valid integer"
_REDUNDANT = "redundant PSUs must be fewer than the PSU count"
_ZERO = "Input should be greater than 0 (got 0)"
_UNKNOWN = "error schema.unknown-field unknown field 'psu.extra'"


@pytest.mark.parametrize(
    ("second", "error"),
    [
        ("{count: true, rating_w: 1600}", "5:88: " + _NOT_INT + " (got True)"),
        ("{count: 2.0, rating_w: 1600}", "5:88: " + _NOT_INT + " (got 2.0)"),
        ("{count: 2, rating_w: 1600, redundant: 2}", "5:80: " + _INVALID + "psu: " + _REDUNDANT),
        ("{count: 2, rating_w: 0}", "5:101: " + _INVALID + "psu.rating_w: " + _ZERO),
        ("{count: 2, rating_w: 1600, extra: 1}", "5:107: " + _UNKNOWN),
    ],
)
def test_a_part_equal_in_python_but_not_valid_is_still_refused_at_its_line(
    cli: CliRunner, workdir: Writer, second: str, error: str
) -> None:
    # The first server's valid part is validated (and kept) first; the second
    # compares equal to it in Python (True == 1 == 1.0) or differs, and must fail.
    text = _TWO_FILES.replace("NAME", "s").replace("PSU_A", "{count: 2, rating_w: 1600}")
    workdir("servers.yaml", text.replace("PSU_B", second), minimal=("facility", "workloads"))
    run = cli("audit", ".", *AS_OF)
    assert run.code == 2
    assert run.lines[0] == "servers.yaml:" + error, run.out


def test_a_server_file_is_freed_once_its_servers_are_validated(
    workdir: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At 100,000 servers the parsed values of every server file, kept until the
    # last file was validated, were a fifth of the load stage's peak.
    for name in ("a", "b", "c"):
        psu = "{count: 2, rating_w: 1600}"
        workdir(f"{name}.yaml", _TWO_FILES.replace("NAME", name).replace("PSU_A", psu).replace("PSU_B", psu),
                minimal=("facility",))
    seen: list[weakref.ref[object]] = []
    real = loader._Builder._add_servers

    def add_servers(builder: loader._Builder, doc: object, shell: object) -> None:
        assert [ref() for ref in seen] == [None] * len(seen)  # every earlier file freed
        seen.append(weakref.ref(doc))
        real(builder, doc, shell)  # type: ignore[arg-type]

    monkeypatch.setattr(loader._Builder, "_add_servers", add_servers)
    with gc_paused():
        inv, problems = load([Path()])
    assert problems == [] and len(seen) == 3 and len(inv.servers) == 6


def test_a_part_that_differs_from_server_to_server_is_no_longer_looked_up() -> None:
    shared = loader._SharedParts()
    servers = [
        {"name": f"s{i}", "rack": "R1", "power_w": {"max": 900 + i}, "psu": {"count": 2, "rating_w": 1600}}
        for i in range(loader._SharedParts.TRIAL + 10)
    ]
    prepared = [shared(server) for server in servers]
    assert "power_w" not in dict(shared._parts) and "psu" in dict(shared._parts)
    assert len({id(p["psu"]) for p in prepared}) == 1  # still one shared model
    assert all(isinstance(p["power_w"], dict) for p in prepared[loader._SharedParts.TRIAL :])
    as_written = loader._servers().validate_python(servers)
    assert loader._servers().validate_python(prepared) == as_written


_SOFTWARE = {"driver": "580.95.05", "cuda": "12.8", "frameworks": {"pytorch": "2.7.1+cu128"}}


@pytest.mark.parametrize(
    ("other", "alike"),
    [
        (_SOFTWARE, True),
        ({**_SOFTWARE, "frameworks": {"pytorch": "2.7.0+cu128"}}, False),
        ({**_SOFTWARE, "frameworks": {"pytorch": "2.7.1+cu128", "vllm": "0.9.2"}}, False),
        ({**_SOFTWARE, "frameworks": {"pytorch": {"version": "2.7.1+cu128", "source": "pypi"}}}, False),
        ({"cuda": "12.8", "driver": "580.95.05", "frameworks": {"pytorch": "2.7.1+cu128"}}, False),
    ],
    ids=["equal", "another version", "another framework", "written another way", "keys in another order"],
)
def test_a_part_with_a_mapping_is_shared_by_the_servers_that_write_it_alike(
    other: dict[str, Any], alike: bool
) -> None:
    """A software section with frameworks (a mapping in a part) is validated
    once and shared by the servers that write it alike, as a flat part is
    (each server's once took 3x the warm load of a fleet that lists them);
    one written otherwise is its own, and each validates as it is written."""
    shared = loader._SharedParts()
    servers = [
        {"name": "s1", "rack": "R1", "software": _SOFTWARE}, {"name": "s2", "rack": "R1", "software": other}
    ]
    prepared = [shared(server) for server in servers]
    assert all(isinstance(p["software"], m.Software) for p in prepared)
    assert (prepared[0]["software"] is prepared[1]["software"]) is alike
    assert loader._servers().validate_python(prepared) == loader._servers().validate_python(servers)


def test_a_part_with_a_zero_in_a_mapping_is_validated_with_its_server() -> None:
    """0.0 and -0.0 are equal: a nested zero keys no part, as a flat one does not."""
    shared = loader._SharedParts()
    server = {"name": "s1", "rack": "R1", "software": {**_SOFTWARE, "frameworks": {"pytorch": 0}}}
    assert shared(server) is server


def test_a_facility_is_placed_again_only_as_it_was_and_where_its_names_are_free() -> None:
    """_FacilityPlacing (the resident process's): the same document's entries,
    placed by an update while none of their names is taken; another model or
    a name taken by then is placed afresh, as in a cold run."""
    inv, problems = load([FIXTURES / "minimal" / "facility.yaml"])
    assert not problems
    (facility,) = inv.facilities.values()
    placing = loader._FacilityPlacing.of(facility.value, inv, dict.fromkeys(loader.FACILITY_TABLES, 0))
    again = loader.Inventory()
    assert placing.holds(again, facility.value)
    placing.place(again)
    for table in loader.FACILITY_TABLES:
        assert list(getattr(again, table).items()) == list(getattr(inv, table).items()), table
    assert not placing.holds(loader.Inventory(), facility.value.model_copy())
    rack = next(iter(inv.racks))
    taken = loader.Inventory(racks={rack: inv.racks[rack]})
    assert not placing.holds(taken, facility.value)


# ---------------------------------------------------------------- kept servers read a column at a time
_INVENTORIES = Path(__file__).resolve().parents[2] / "inventories"
_FIELDS = ("name", "rack", "position", "power_w", "gpu", "psu", "software", "workload", "trays")


Kept = tuple[list[str], list[loader.ServerEntry], dict[str, Any]]


@pytest.fixture(scope="module")
def kept_and_cold(tmp_path_factory: pytest.TempPathFactory) -> Kept:
    """The inventories' servers as a warm load places them (by their columns: no
    model made), and each one's model as a cold load makes it."""
    folder = tmp_path_factory.mktemp("cache")
    options = ReadOptions(cache_dir=folder)
    load([_INVENTORIES], options=options)  # the entries written
    warm, problems = load([_INVENTORIES], options=options)
    cold, _ = load([_INVENTORIES])
    assert problems == [] and warm.kept and list(warm.servers) == list(cold.servers)
    entries = list(warm.servers.values())
    assert {type(e) for e in entries} != {loader.ServerEntry}  # placed by their columns
    return list(warm.servers), entries, {name: e.server for name, e in cold.servers.items()}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_server_fields_read_the_models_fields_in_any_order(kept_and_cold: Kept, data: st.DataObject) -> None:
    """server_fields of any servers in any order (a kept file's run cut, out of
    order, repeated, mixed with others) is each one's fields as a cold load's
    model has them."""
    names, entries, cold = kept_and_cold
    picked = data.draw(st.lists(st.sampled_from(range(len(entries))), max_size=3 * len(entries)))
    if data.draw(st.booleans()):
        picked = sorted(set(picked))  # in order, with gaps
    got = loader.server_fields([entries[i] for i in picked], *_FIELDS)
    wanted = [cold[names[i]] for i in picked]
    for field, column in zip(_FIELDS, got, strict=True):
        assert column == [getattr(model, field) for model in wanted], field


def test_server_fields_of_whole_runs(kept_and_cold: Kept) -> None:
    names, entries, cold = kept_and_cold
    got = loader.server_fields(entries, *_FIELDS)
    for field, column in zip(_FIELDS, got, strict=True):
        assert column == [getattr(cold[name], field) for name in names], field


def test_a_kept_servers_positions_are_its_merged_maps_not_its_own_mappings(kept_and_cold: Kept) -> None:
    """A kept server's positions are kept in its file's memo apart from those of
    the document's own paths: the server's own mapping (which writes no
    `memory_gb`: its defaults do) asked first does not answer for the merged
    map, which places the field at the defaults' line as a cold load does."""
    names, entries, _ = kept_and_cold
    at = next(i for i, e in enumerate(entries) if e.place.file.endswith("servers-inference.yaml"))
    src = entries[at].place.src
    assert isinstance(src, loader._KeptServerSrc)
    doc, _, run, _ = src._ctx
    own = doc.src.descend("servers", run.indexes[src._at])
    cold_load, _ = load([_INVENTORIES])
    wanted = cold_load.servers[names[at]].place.src.locate(["memory_gb"])
    assert own.locate(["memory_gb"]) != wanted  # the server's own mapping has no such field
    assert src.locate(["memory_gb"]) == wanted
