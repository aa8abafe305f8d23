"""A warm audit says, byte for byte, what a cold one says (issue 25).

Each case audits a copy of the example inventories with a cache, changes
something (a file, the catalog, the config, the rules, `--as-of`), audits
again with the same cache and compares every output with an audit of the
same state with no cache at all. The cache keeps parsed files
(checker.load.cache) and the evaluate stage's results per distinct fact and
message (checker.evaluate.memo); a result kept under a key that misses one
of its inputs shows up here as a stale finding or message.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from benchmarks import fleet
from checker.cli import main
from checker.core.carried import Carried
from checker.derive import carried_rows, facts
from checker.evaluate import engine, rulebook
from checker.load import build, cache, validated
from checker.load import models as m
from tests.conftest import CliRunner, Run

ROOT = Path(__file__).resolve().parents[1]
AS_OF = "2027-01-15"
FORMATS = ("json", "sarif", "text", "markdown")


# A team's rule on figures a server's facts read from its facility, rack and
# workload (no server file changes when they do).
INLET_RULE = """\
rules:
  - id: acme.warm-room
    title: GPU servers sit in rooms designed for 25 degC inlet air or less
    category: cooling
    severity: warning
    on: server
    when: facility_inlet_c > 25 or (workload_params_b > 100 and gpu.count >= 8)
    message: "server {{ name }}: {{ facility_inlet_c }} degC inlet, {{ workload_params_b }}B workload"
    remediation: Move it.
    examples:
      fail: [{name: gpu1, facility_inlet_c: 27}]
      pass: [{name: gpu1, facility_inlet_c: 24}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHECKER_NO_CACHE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    shutil.copytree(ROOT / "inventories", tmp_path / "inv")
    (tmp_path / "rules").mkdir()
    # The team's rule, made to fire on the inference servers: its findings and messages show.
    rule = (ROOT / "tests" / "fixtures" / "custom-rules" / "memory.yaml").read_text()
    (tmp_path / "rules" / "memory.yaml").write_text(rule.replace("memory_gb < 64", "memory_gb < 1024"))
    (tmp_path / "rules" / "inlet.yaml").write_text(INLET_RULE)
    # Servers with no rollout date are checked as of the audit date (--as-of).
    edit(tmp_path / "inv" / "edge" / "servers.yaml", "rollout_date: 2027-02-01\n", "")
    (tmp_path / "checker.yaml").write_text("rules: [rules]\n")
    return tmp_path


Audit = Callable[..., dict[str, bytes]]


@pytest.fixture
def resident() -> bool:
    """Whether the warm audits run as the resident process runs them (a test
    parametrizes it): one process, what each command made carried to the next."""
    return False


@pytest.fixture
def audit(project: Path, cli: CliRunner, resident: bool, capsys: pytest.CaptureFixture[str]) -> Audit:
    """audit(cached, *args) -> every format's bytes (and the exit code), with the
    project's cache or with none (the cold audit: never carried)."""
    carried = Carried() if resident else None

    def command(cached: bool, argv: list[str]) -> Run:
        if not cached or carried is None:
            return cli(*argv)
        carried.turn()  # as checker.resident_process runs each command
        code = main(argv, carried=carried)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    def run(cached: bool, *args: str, as_of: str = AS_OF) -> dict[str, bytes]:
        out = project / ("warm" if cached else "cold")
        out.mkdir(exist_ok=True)
        where = ["--cache-dir", str(project / "cache")] if cached else ["--no-cache"]
        formats = [arg for fmt in FORMATS for arg in ("--format", f"{fmt}:{out / fmt}")]
        done = command(cached, ["audit", "inv", "--as-of", as_of, *where, *formats, *args])
        assert done.code in (0, 1, 2) and "Traceback" not in done.err, done.err
        return {"exit": str(done.code).encode(), **{fmt: (out / fmt).read_bytes() for fmt in FORMATS}}

    return run


# The warm audits of a case in a process of their own, and in one as the resident process runs them.
PROCESSES = pytest.mark.parametrize("resident", [False, True], ids=["own process", "resident process"])


def in_turn(name: str, cases: Mapping[str, Any]) -> pytest.MarkDecorator:
    """Each case in both processes: every `make test` runs each case in one of
    them, the two taking turns case by case, and CI's slow run (`make
    test-slow`) the other (the whole table in both is about 60 s)."""
    params = [
        pytest.param(case, resident, id=f"{label}-{'resident' if resident else 'own'} process",
                     marks=[pytest.mark.slow] if resident != bool(i % 2) else [])
        for i, (label, case) in enumerate(cases.items())
        for resident in (False, True)
    ]
    return pytest.mark.parametrize((name, "resident"), params)


def same(audit: Audit, *args: str, as_of: str = AS_OF) -> dict[str, bytes]:
    """A warm audit (the cache filled by earlier ones), a second one (what the
    first kept of the files it read afresh) and a cold one say the same bytes."""
    warm = audit(True, *args, as_of=as_of)
    assert warm == audit(False, *args, as_of=as_of)
    assert audit(True, *args, as_of=as_of) == warm
    return warm


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


CATALOG = """\
kind: ServerModels
servers:
  - name: acme-gpu-box
    description: An eight-GPU server of our own spec
    source: https://example.com/acme-gpu-box
    u_height: 4
    power_w: {max: 6400, typical: 5200}
    psu: {count: 4, rating_w: 3000, redundant: 2}
    gpu: {model: h100-sxm-80gb, count: 8}
"""
ACME_SERVER = """\
  - {name: sh1-a01-acme, model: acme-gpu-box, rack: A01, position: 30}
"""


def _change_a_server(project: Path) -> None:
    edit(project / "inv" / "sh1" / "servers-training.yaml", "position: 15}", "position: 16}")


def _add_a_file(project: Path) -> None:
    (project / "inv" / "catalog.yaml").write_text(CATALOG)
    text = (project / "inv" / "sh1" / "servers-training.yaml").read_text()
    head, _, _ = text.partition("servers:\n")
    (project / "inv" / "sh1" / "servers-more.yaml").write_text(head + "servers:\n" + ACME_SERVER)


def _add_a_file_first(project: Path) -> None:
    """A server in a file read before the others, with no workload (so no other
    server's facts change but those its rack's figures reach): every later
    fact, and the findings on it, one place further on."""
    (project / "inv" / "sh1" / "servers-aaa.yaml").write_text(
        "kind: Servers\nfacility: sh1\nservers:\n"
        "  - {name: sh1-a01-new, model: dgx-h100, rack: A01, position: 25}\n"
    )


def _delete_a_file(project: Path) -> None:
    (project / "inv" / "sh1" / "servers-inference.yaml").unlink()


def _rename_a_file(project: Path) -> None:
    folder = project / "inv" / "sh1"
    (folder / "servers-inference.yaml").rename(folder / "servers-infer.yaml")


def _copy_a_file(project: Path) -> None:
    """Two files of the same bytes share their entries (one content key): each copy's
    servers are duplicates, reported at the copy's own lines."""
    folder = project / "inv" / "sh1"
    shutil.copy(folder / "servers-inference.yaml", folder / "servers-copy.yaml")


def _change_the_config(project: Path) -> None:
    (project / "checker.yaml").write_text(
        "rules: [rules]\nheadroom_pct: 30\nsupport_level: 8x5\nseverity: {support.ends-soon: error}\n"
        "ignore: [cooling.*]\n"
    )


def _change_a_rule(project: Path) -> None:
    rule = project / "rules" / "memory.yaml"
    edit(rule, "memory_gb < 1024", "memory_gb < 4096")
    edit(rule, '"server {{ name }} has', '"server {{ name }} holds')


def _change_a_message(project: Path) -> None:
    """Only a message: the outcomes stay, the messages are keyed anew."""
    rule = project / "rules" / "memory.yaml"
    edit(rule, "GB of RAM for", "GB of memory for")


def _rename_the_facility(project: Path) -> None:
    """The servers files are unchanged, their facility gone: each says so, as in a cold run."""
    edit(project / "inv" / "sh1" / "facility.yaml", "name: sh1", "name: sh2")


def _copy_the_facility(project: Path) -> None:
    """A facility of the same name in a file read before the unchanged one: the
    unchanged file's facility is the duplicate, reported there, as in a cold run."""
    shutil.copy(project / "inv" / "sh1" / "facility.yaml", project / "inv" / "sh1" / "a-facility.yaml")


def _shift_the_facility(project: Path) -> None:
    """Every rack and feed a line lower, nothing else changed: their findings say
    so (their facts are not the last command's, whose places were others)."""
    path = project / "inv" / "sh1" / "facility.yaml"
    path.write_text("# moved\n" + path.read_text())


A01 = """\
  - name: A01
    <<: *train-rack
    feeds:
      - {<<: *feed-63a, name: A01-A, side: A}
      - {<<: *feed-63a, name: A01-B, side: B}
"""
B01 = """\
  - name: B01
    <<: *rack
    cooling_kw: 20            # hot-aisle containment, per-rack design figure
    feeds:
      - {<<: *feed-32a, name: B01-A, side: A}
      - {<<: *feed-32a, name: B01-B, side: B}
"""


def _swap_two_racks(project: Path) -> None:
    """Racks A01 and B01 (training and inference racks) listed in each other's
    place: the servers of the unchanged files stand where they stood, their
    racks at other indices."""
    path = project / "inv" / "sh1" / "facility.yaml"
    text = path.read_text()
    assert A01 in text and B01 in text
    path.write_text(text.replace(A01, "@A01@").replace(B01, A01).replace("@A01@", B01))


def _rename_a_rack(project: Path) -> None:
    """Servers of an unchanged file on a rack that is gone: each says so, as in a cold run."""
    edit(project / "inv" / "sh1" / "facility.yaml", "- name: A02\n", "- name: A02x\n")


def _name_a_feed_twice(project: Path) -> None:
    """A problem of the facility's own (a duplicate feed name): a warm run that
    reads the facility as it was kept checks its racks and feeds again, since
    placing it reported something (validated.KeptModel.placed)."""
    edit(project / "inv" / "sh1" / "facility.yaml", "name: A02-B, side: B}", "name: A02-A, side: B}")


def _rename_a_workload(project: Path) -> None:
    """Servers of an unchanged file running a workload that is gone: each says so."""
    edit(project / "inv" / "workloads.yaml", "name: llm-finetune-70b", "name: llm-finetune-70b-v2")


def _change_the_defaults(project: Path) -> None:
    edit(project / "inv" / "sh1" / "servers-training.yaml", "model: dgx-h200", "model: dgx-h100")


def _change_the_facility_inlet(project: Path) -> None:
    """A figure every sh1 server's facts read from its facility (facility_inlet_c); no server file changes."""
    edit(project / "inv" / "sh1" / "facility.yaml", "inlet_c: 24", "inlet_c: 27")


def _change_a_servers_memory(project: Path) -> None:
    """A field of the server itself that no capacity figure reads."""
    edit(project / "inv" / "sh1" / "servers-inference.yaml", "memory_gb: 512", "memory_gb: 768")


def _change_a_workload(project: Path) -> None:
    """The fit figures the servers that run it read; no server file changes."""
    edit(project / "inv" / "workloads.yaml", "params_b: 70", "params_b: 405")


DRIVERS = """\
kind: DriverBranches
as_of: 2027-01-01
sources:
  acme-qual: "Acme driver qualification (illustrative test data)"
branches:
  - {branch: 580, type: long-term, eol: 2027-03, source: [acme-qual]}
"""


def _add_a_knowledge_row(project: Path) -> None:
    """A row of the driver table that servers on R580 read; no server file changes."""
    (project / "inv" / "drivers.yaml").write_text(DRIVERS)


CHANGES = {
    "the facility's inlet changed": _change_the_facility_inlet,
    "a workload changed": _change_a_workload,
    "a server's memory changed": _change_a_servers_memory,
    "a knowledge row added": _add_a_knowledge_row,
    "the facility renamed": _rename_the_facility,
    "a rack renamed": _rename_a_rack,
    "a feed named twice": _name_a_feed_twice,
    "the facility copied": _copy_the_facility,
    "the facility a line lower": _shift_the_facility,
    "two racks swapped": _swap_two_racks,
    "a workload renamed": _rename_a_workload,
    "a file's defaults changed": _change_the_defaults,
    "a server changed": _change_a_server,
    "a file added": _add_a_file,
    "a file added before the others": _add_a_file_first,
    "a file deleted": _delete_a_file,
    "a file renamed": _rename_a_file,
    "a file copied": _copy_a_file,
    "the config changed": _change_the_config,
    "a rule's condition and message changed": _change_a_rule,
    "a message changed": _change_a_message,
}


@in_turn("change", CHANGES)
def test_a_warm_audit_after_a_change_is_a_cold_one(project: Path, audit: Audit,
                                                    change: Callable[[Path], None]) -> None:
    audit(True)  # the cache filled (that it says what a cold run says: test_nothing_changed)
    before = audit(True)  # every file kept: what is kept of them (their server rows) written too
    change(project)
    after = same(audit)
    assert after != before  # every change shows: a memo that hid it would fail above


@PROCESSES
def test_nothing_changed(audit: Audit) -> None:
    """The first warm audit (an empty cache), the second (every file kept) and a cold one agree."""
    same(audit)


CABLED = """\
kind: Servers
facility: sh1
servers:
  - name: sh1-a01-cabled
    rack: A01
    power_w: {max: 2200, typical: 1600}
    u_height: 2
    position: 30
    psu: {count: 2, rating_w: 2600, redundant: 1, efficiency: platinum, feeds: {A01-A: 1, A01-B: 1}}
"""


@PROCESSES
def test_a_feed_a_servers_psus_name_renamed(project: Path, audit: Audit) -> None:
    """A server's psu.feeds names its rack's feeds: when one is renamed, the
    unchanged servers file says so, as in a cold run."""
    (project / "inv" / "sh1" / "servers-cabled.yaml").write_text(CABLED)
    before = same(audit)
    edit(project / "inv" / "sh1" / "facility.yaml", "name: A01-B,", "name: A01-C,")
    after = same(audit)
    assert b"has no feed 'A01-B'" in after["text"] and after != before


ACME_GPUS = """\
kind: GpuModels
gpus:
  - name: acme-t4
    description: A T4 under our own name
    vendor: NVIDIA
    architecture: Turing
    compute_capability: "7.5"
    min_cuda: "10.0"
    memory_gb: 16
    tdp_w: 70
    form_factor: pcie
    interconnect: pcie
    fp16_tflops: 65
    verified: true
    source: https://example.com/acme-t4
"""


@PROCESSES
@pytest.mark.parametrize("cabled", [True, False], ids=["psu cabled", "psu not cabled"])
def test_a_gpu_model_a_server_names_renamed(project: Path, audit: Audit, cabled: bool) -> None:
    """The GPU catalog is not in a kept servers file's key (its server models
    are): a GPU model renamed in another file is reported at the unchanged
    servers that name it, as in a cold run, with PSUs cabled to feeds or not
    (the resident process carries the placing of the others only)."""
    (project / "inv" / "gpus-acme.yaml").write_text(ACME_GPUS)
    server = CABLED if cabled else CABLED.replace(", feeds: {A01-A: 1, A01-B: 1}", "")
    server = server.replace("    rack: A01\n", "    rack: A01\n    gpu: {model: acme-t4, count: 4}\n")
    (project / "inv" / "sh1" / "servers-cabled.yaml").write_text(server)
    before = same(audit)
    edit(project / "inv" / "gpus-acme.yaml", "name: acme-t4", "name: acme-t4x")
    after = same(audit)
    assert b"unknown GPU model 'acme-t4'" in after["text"] and after != before


@PROCESSES
def test_a_gpu_models_figure_changed(project: Path, audit: Audit) -> None:
    """A workload's fit figures read its servers' GPU models: one's memory changed in
    another file changes them, the servers' file unchanged, as in a cold run."""
    (project / "inv" / "gpus-acme.yaml").write_text(ACME_GPUS)
    server = CABLED.replace("    rack: A01\n", "    rack: A01\n    gpu: {model: acme-t4, count: 4}\n"
                            "    workload: llm-finetune-70b\n")
    (project / "inv" / "sh1" / "servers-cabled.yaml").write_text(server)
    before = same(audit)
    edit(project / "inv" / "gpus-acme.yaml", "memory_gb: 16", "memory_gb: 24")
    after = same(audit)
    assert after != before


@PROCESSES
def test_a_catalog_entry_changed(project: Path, audit: Audit) -> None:
    _add_a_file(project)
    before = same(audit)
    edit(project / "inv" / "catalog.yaml", "max: 6400", "max: 16400")
    after = same(audit)
    assert after != before


@PROCESSES
def test_another_as_of_date(audit: Audit) -> None:
    before = same(audit)
    assert same(audit, as_of="2029-06-01") != before
    assert same(audit) == before


def test_a_second_warm_run_sends_no_fact_to_durable_and_renders_no_message(
    audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = audit(True)
    sent: list[str] = []
    rendered: list[str] = []
    real_run, real_render = engine.run_ruleset, rulebook.CompiledRule.render
    monkeypatch.setattr(engine, "run_ruleset", lambda c, facts: sent.append(facts) or real_run(c, facts))
    monkeypatch.setattr(rulebook.CompiledRule, "render",
                        lambda self, *a: rendered.append(self.id) or real_render(self, *a))
    assert audit(True) == first
    assert sent == [] and rendered == []


def test_the_resident_process_keeps_every_outcome_a_process_of_its_own_keeps(
    project: Path, cli: CliRunner, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the rules found on a fact the last command had is not asked again
    there (engine._carried_findings), and the memo is still told of it: after
    a command that added an outcome, a process of its own that reads the
    cache folder sends durable no fact."""
    carried = Carried()
    argv = ["audit", "inv", "--as-of", AS_OF, "--format", "json:out.json", "--cache-dir", "cache"]
    for _ in range(2):
        carried.turn()
        main(argv, carried=carried)
    _change_a_servers_memory(project)  # a new outcome of the memory rule: the memo is written
    carried.turn()
    main(argv, carried=carried)
    capsys.readouterr()
    sent: list[str] = []
    real_run = engine.run_ruleset
    monkeypatch.setattr(engine, "run_ruleset", lambda c, facts: sent.append(facts) or real_run(c, facts))
    cli(*argv)
    assert sent == []


def _every_entry(folder: Path) -> list[Path]:
    return sorted((folder / cache.ENTRIES).iterdir())


@in_turn("damage", {damage: damage for damage in ("garbage", "truncated", "empty")})
def test_a_corrupt_entry_is_ignored(project: Path, audit: Audit, damage: str) -> None:
    first = audit(True)
    for entry in _every_entry(project / "cache"):
        data = entry.read_bytes()
        damaged = {"garbage": b"\x00garbage" * 40, "truncated": data[: len(data) // 2], "empty": b""}
        entry.write_bytes(damaged[damage])
    assert audit(True) == first
    assert same(audit) == first


def test_a_third_warm_run_works_out_no_source_map_of_a_facility(
    audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The positions of the racks and feeds the findings point at, and those the
    facility's own checks ask for, are kept with the file: worked out once."""
    first = audit(True)
    assert audit(True) == first  # the positions the first warm run worked out, kept
    resolved: list[str] = []
    real_root = build.KeptFile.root

    def root(self: build.KeptFile, index: int, deferred: bool) -> object:
        resolved.append(Path(self.file).name)
        return real_root(self, index, deferred)

    monkeypatch.setattr(build.KeptFile, "root", root)
    assert audit(True) == first
    assert "facility.yaml" not in resolved


@pytest.mark.parametrize("catalog", [False, True], ids=["servers", "with a catalog model"])
def test_a_third_warm_run_works_out_no_source_map_of_any_file(
    project: Path, audit: Audit, monkeypatch: pytest.MonkeyPatch, catalog: bool
) -> None:
    """The positions the findings on kept servers point at (their maps merged of
    their defaults, their own fields and their catalog model's) are kept with
    their file as a facility's are: a warm run works out no server's map it
    worked out before (a finding on each of 10,000 servers once cost 4.8 s)."""
    if catalog:
        _add_a_file(project)  # a server of a catalog model, found by the memory rule
    first = audit(True)
    assert audit(True) == first
    resolved: list[str] = []
    merged: list[object] = []
    real_root, real_merge = build.KeptFile.root, build._merge_src

    def root(self: build.KeptFile, index: int, deferred: bool) -> object:
        resolved.append(Path(self.file).name)
        return real_root(self, index, deferred)

    monkeypatch.setattr(build.KeptFile, "root", root)
    monkeypatch.setattr(build, "_merge_src", lambda *args: merged.append(1) or real_merge(*args))
    assert audit(True) == first
    assert (resolved, merged) == ([], [])
    assert audit(False) == first


WEIGHT_RULE = """\
rules:
  - id: acme.weigh-it
    title: The ACME box is weighed
    category: power
    severity: warning
    on: server
    when: name == "sh1-a01-acme"
    message: "server {{ name }}: weigh it"
    remediation: Weigh it.
    locate: weight_kg
    examples:
      fail: [{name: sh1-a01-acme}]
      pass: [{name: gpu1}]
"""


def test_a_kept_servers_positions_are_those_of_the_catalog_it_is_merged_with(
    project: Path, audit: Audit
) -> None:
    """A finding on a server's field its catalog model gives stands at the
    server's `model:` line, and where the server writes no such field at the
    server: when the catalog gives the field from then on, the position kept
    under the old catalog is not the one shown (the servers file did not change)."""
    (project / "rules" / "weight.yaml").write_text(WEIGHT_RULE)
    _add_a_file(project)
    before = same(audit)
    edit(project / "inv" / "catalog.yaml", "    u_height: 4\n", "    u_height: 4\n    weight_kg: 40\n")
    after = same(audit)
    def where(run: dict[str, bytes]) -> list[tuple[int, int]]:
        found = json.loads(run["json"])["findings"]
        return [(f["line"], f["column"]) for f in found if f["rule"] == "acme.weigh-it"]

    # `- {name: sh1-a01-acme, model: acme-gpu-box, ...}`: the server, then its model's name.
    assert where(before) == [(35, 5)] and where(after) == [(35, 33)]


def test_a_second_warm_run_validates_no_document(
    audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every document but the built-in servers catalog (whose raw fields are merged
    under servers) is rebuilt from what the first run validated."""
    first = audit(True)
    validated: list[str] = []
    kept: list[tuple[str, str]] = []
    real_validate, real_kept = build._validate, build._Builder._add_kept

    def validating(problems: object, model: type, doc: build._Doc) -> object:
        validated.append(Path(doc.file).name)
        return real_validate(problems, model, doc)  # type: ignore[arg-type]

    def keeping(self: build._Builder, doc: build._KeptDoc) -> None:
        kept.append((Path(doc.file).name, doc.value["kind"]))
        real_kept(self, doc)

    monkeypatch.setattr(build, "_validate", validating)
    monkeypatch.setattr(build._Builder, "_add_kept", keeping)
    assert audit(True) == first
    assert validated == ["servers.yaml"]  # rules/knowledge/servers.yaml
    assert sorted(kept) == [
        ("facility.yaml", "Facility"), ("facility.yaml", "Facility"), ("gpus.yaml", "GpuModels"),
        ("models.yaml", "LanguageModels"), ("servers-inference.yaml", "Servers"),
        ("servers-inference.yaml", "Servers"), ("servers-training.yaml", "Servers"),
        ("servers.yaml", "Servers"), ("waivers.yaml", "Waivers"), ("workloads.yaml", "Workloads"),
    ]


def _memo_entries(folder: Path) -> dict[str, tuple[str, object]]:
    """The memo's and the validated servers' entries in a cache folder: key -> (what, body)."""
    store = cache.open_cache(folder)
    assert store is not None
    found = {}
    for entry in _every_entry(folder):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body and body[0] in ("outcomes", "messages", "validated", "positions"):
            found[entry.name] = (body[0], body)
    assert {what for what, _ in found.values()} == {"outcomes", "messages", "validated", "positions"}
    return found


def _forgeries(what: str, body: tuple) -> list[object]:
    """Bodies signed as the real ones are, each wrong in one way the reader must catch."""
    if what == "outcomes":
        _, fmt, tables = body
        def rows_as(change: Callable[[tuple, tuple, int], tuple]) -> list[object]:
            return [(k, n, c, [change(cells, got, c) for cells, got in rows]) for k, n, c, rows in tables]

        return [
            (what, fmt, rows_as(lambda cells, got, c: (cells, (c + 5,)))),  # a condition the kind lacks
            (what, fmt, rows_as(lambda cells, got, c: ([list(cells)], got))),  # cells that are no scalars
            (what, fmt, rows_as(lambda cells, got, c: ((*cells, 1), got))),  # more cells than names
            (what, fmt + 1, rows_as(lambda cells, got, c: (cells, ()))),  # another format
            (what, fmt, [(k, n, -1, rows) for k, n, c, rows in tables]),
        ]
    if what == "messages":
        _, fmt, tables = body
        return [
            (what, fmt, [(rule, [(values, 7) for values, _ in rows]) for rule, rows in tables]),
            (what, fmt, [(rule, [([values], text) for values, text in rows]) for rule, rows in tables]),
            (what, fmt + 1, [(rule, [(values, "stale") for values, _ in rows]) for rule, rows in tables]),
            "not a tuple",
        ]
    if what == "validated":
        return _forged_documents(body)
    if what == "positions":
        _, fmt, rows = body
        return [
            (what, fmt, [(*row[:4], "1", row[5]) for row in rows]),  # a line that is no number
            (what, fmt, [(row[0], [*row[1]], *row[2:]) for row in rows]),  # a path that is no tuple
            (what, fmt, [(*row[:3], "key", *row[4:]) for row in rows]),  # neither key nor value
            (what, fmt, [(*row[:2], (1.5,), *row[3:]) for row in rows]),  # a step that is no name or index
            (what, fmt, [(bool(row[0]), *row[1:]) for row in rows]),  # an index that is a bool
            (what, fmt, [(*row[:3], 1, *row[4:]) for row in rows]),  # a number for whether it is the key
            (what, fmt + 1, [(*row[:4], 1, 1) for row in rows]),  # another format
            (what, fmt, [row[:5] for row in rows]),
        ]
    raise AssertionError(what)


def _no_scalars(table: tuple) -> tuple:
    """A racks' table (validated._Writer.table) whose every column holds lists where scalars go."""
    name, sets, columns = table
    return (name, sets, [(c[0], "s", [[1]] * len(sets)) for c in columns])


def _forged_documents(body: tuple) -> list[object]:
    """A kept file's entry (checker.load.validated), wrong in one way at a time."""
    what, fmt, digest, (sets, combos, parts), docs = body

    def with_docs(new: list[object]) -> object:
        return (what, fmt, digest, (sets, combos, parts), new)

    def with_tables(new_sets: list, new_combos: list, new_parts: list) -> object:
        return (what, fmt, digest, (new_sets, new_combos, new_parts), docs)

    def servers_as(k: int, change: Callable[[Any], Any]) -> object:
        """Part `k` of each servers document's servers (validated._servers_out) changed."""
        def changed(t: tuple) -> tuple:
            return (*t[:k], change(t[k]), *t[k + 1:])
        return with_docs([(*d[:5], changed(d[5])) if d[0] == "servers" else d for d in docs])

    def facility_as(change: Callable[[tuple], tuple]) -> object:
        return with_docs([change(d) if d[0] == "facility" else d for d in docs])

    def models_as(change: Callable[[tuple], tuple]) -> object:
        return with_docs([(*d[:5], change(d[5])) if d[0] == "model" else d for d in docs])

    def other_kind(doc: tuple) -> tuple:
        return (*doc[:3], "Waivers" if doc[3] != "Waivers" else "Workloads", *doc[4:])

    # A model: (class, fields set, values, set of parts, other values); a model
    # document: ("model", index, deferred, kind, placed, model); a facility:
    # ("facility", index, deferred, placed, model, its racks' table); a servers
    # document's servers: (indexes, shapes, shapes, classes, fields sets, sets
    # of parts, each field's values, other values), the classes, sets and each
    # field's values a column: (same, the cell or the cells).
    forged = [
        with_tables(sets, combos, [(*part[:2], [], *part[3:]) for part in parts]),  # parts without fields
        with_tables(sets, [tuple(("nonsense", i) for _, i in c) for c in combos], parts),  # parts of no field
        with_tables(sets, [tuple((n, 10**6) for n, _ in c) for c in combos], parts),  # parts not there
        with_tables([("nonsense",) for _ in sets], combos, parts),  # fields set of no field
        with_docs([(d[0], d[1], "yes", *d[3:]) for d in docs]),  # not a bool
        with_docs(docs[::-1]),  # out of order
        with_docs([("model", *d[1:3], "ServerModels", *d[4:]) for d in docs]),  # a kind that does not keep
        (what, fmt + 1, digest, (sets, combos, parts), docs),
    ]
    if any(d[0] == "servers" and d[5][0] for d in docs):
        forged += [
            servers_as(3, lambda c: (True, "Rack")),  # another class
            servers_as(6, lambda c: c[:-1]),  # a field short
            servers_as(4, lambda c: (True, 10**6)),  # no such fields set
            servers_as(1, lambda c: [("x", 1) for _ in c]),  # no shape
            servers_as(5, lambda c: (True, 10**6)),  # no such set of parts
            servers_as(6, lambda c: [(True, [1]) for _ in c]),  # values that are no scalars
            servers_as(7, lambda c: [(("nonsense", 1),) for _ in c]),  # a value of no field
            servers_as(7, lambda c: [(("name", ("p", 10**6)),) for _ in c]),  # a part that is not there
            servers_as(0, lambda c: c[:-1]),  # an index short
        ]
    if any(d[0] == "facility" for d in docs):
        forged += [
            facility_as(lambda d: (*d[:3], 1, *d[4:])),  # placed that is no bool
            facility_as(lambda d: (*d[:5], ("Feed", *d[5][1:]))),  # a table of feeds for the racks
            facility_as(lambda d: (*d[:5], _no_scalars(d[5]))),  # a rack's value that is no scalar
            facility_as(lambda d: ("model", d[1], d[2], "Facility", d[3], d[4])),  # its racks as parts
        ]
    if any(d[0] == "model" for d in docs):
        forged += [
            models_as(lambda spelled: ("Server", *spelled[1:])),  # another class
            models_as(lambda spelled: (*spelled[:2], [*spelled[2], 1], *spelled[3:])),  # a field too many
            with_docs([other_kind(d) if d[0] == "model" else d for d in docs]),  # a model of another kind
            with_docs([(*d[:4], 1, d[5]) if d[0] == "model" else d for d in docs]),  # placed that is no bool
        ]
    return forged


@pytest.mark.slow  # about 30 s: an audit for each of ~40 forged entries (CI runs it)
def test_a_foreign_entry_is_ignored(project: Path, audit: Audit) -> None:
    """Entries signed with this folder's key but not what the memo writes
    (conditions the kind does not have, values that are no scalars, another
    format, messages that are no text) are empty: the run is a cold one."""
    first = audit(True)
    assert audit(True) == first  # and the positions it worked out in the files it kept
    store = cache.open_cache(project / "cache")
    assert store is not None
    for key, (what, body) in _memo_entries(project / "cache").items():
        for forged in _forgeries(what, body):  # type: ignore[arg-type]
            store.put(key, cache.pack(forged))
            assert audit(True) == first, forged
            store.put(key, cache.pack(body))


def test_a_wrong_but_well_formed_outcome_is_not_trusted_across_rulebooks(project: Path, audit: Audit) -> None:
    """The memo's entries are keyed by the rules' conditions and messages: the
    entry another rulebook wrote is another key, never read for this one."""
    same(audit)
    names = {e.name for e in _every_entry(project / "cache")}
    _change_a_rule(project)
    same(audit)
    assert {e.name for e in _every_entry(project / "cache")} - names  # new keys, not the old ones rewritten


@pytest.mark.parametrize("resident", [True])
def test_the_resident_process_decodes_a_kept_file_and_compiles_the_rules_once(
    project: Path, audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a command made of the same bytes is carried to the next
    (checker.core.carried): an unchanged file's models are not rebuilt, the
    rulebook not read again; a changed file's new entry is decoded once."""
    first = audit(True)
    assert audit(True) == first  # each kept file's entry decoded here, and carried
    decoded: list[int] = []
    compiled: list[int] = []
    placed: list[str] = []  # the files whose kept servers' places were made
    positions: list[int] = []  # a kept file's positions read from its entry
    real_decode, real_stored = validated.decode, rulebook._stored
    real_places, real_positions = build._kept_places, validated._positions_in
    monkeypatch.setattr(validated, "decode", lambda payload: decoded.append(1) or real_decode(payload))
    monkeypatch.setattr(rulebook, "_stored", lambda *args: compiled.append(1) or real_stored(*args))
    monkeypatch.setattr(build, "_kept_places", lambda d, *a: placed.append(d.file) or real_places(d, *a))
    real_columns = build._Builder._placed_by_columns

    def by_columns(self: build._Builder, doc: Any, *args: Any) -> bool:
        done = real_columns(self, doc, *args)
        if done:
            placed.append(doc.file)
        return done

    monkeypatch.setattr(build._Builder, "_placed_by_columns", by_columns)
    monkeypatch.setattr(validated, "_positions_in", lambda body: positions.append(1) or real_positions(body))
    software: list[tuple[str, str]] = []  # (kind, file) of each software kind's facts made
    for kind in ("frameworks", "containers", "engines", "jax"):
        real = getattr(facts, f"_{kind}_of")

        def made(run: Any, servers: Any, headers: Any, kind: str = kind, real: Any = real) -> Any:
            software.extend({(kind, entry.place.file) for _, entry in servers})
            return real(run, servers, headers)

        monkeypatch.setattr(facts, f"_{kind}_of", made)
    checked: set[str] = set()  # the files whose servers or facility were checked as they were placed
    real_place = build._Builder._place_server

    def place(self: build._Builder, facility: str, date: Any, server: Any, where: Any) -> None:
        checked.add(where.file)
        real_place(self, facility, date, server, where)

    monkeypatch.setattr(build._Builder, "_place_server", place)
    real_facility = build._Builder._add_facility

    def facility(self: build._Builder, doc: Any, model: Any) -> None:
        checked.add(doc.file)
        real_facility(self, doc, model)

    monkeypatch.setattr(build._Builder, "_add_facility", facility)
    built: list[str] = []  # the racks' and feeds' facts made (carried_rows.table_facts)
    real_rows = facts._rows

    def made_rows(kind: str, fields: Any, entries: Any, *args: Any) -> Any:
        built.extend(entity for entity, _, _ in entries if kind in ("rack", "feed"))
        return real_rows(kind, fields, entries, *args)

    monkeypatch.setattr(facts, "_rows", made_rows)
    matched: set[str] = set()  # the kinds of the facts the rules were matched on (engine._carried_findings)
    real_match = engine.match

    def match(rules: Any, pairs: Any, *args: Any) -> Any:
        matched.update(kind for kind, _ in pairs)
        return real_match(rules, pairs, *args)

    monkeypatch.setattr(engine, "match", match)
    shaped: list[str] = []  # the findings whose values were shaped for grouping (engine.values_shape)
    real_shape = engine.values_shape
    monkeypatch.setattr(engine, "values_shape",
                        lambda rule, fact, *more: shaped.append(rule.id) or real_shape(rule, fact, *more))
    assert audit(True) == first
    assert (decoded, compiled, placed, positions, software, checked, built) == ([], [], [], [], [], set(), [])
    # The servers' facts too, though their files' rows have other columns (put under one header once).
    assert matched == {"facility", "workload"}  # made again by each command
    assert shaped == []  # each finding shaped once in its life
    _change_a_server(project)
    changed = audit(True)  # the changed file validated afresh, its entry written
    training = "inv/sh1/servers-training.yaml"
    assert (decoded, compiled, placed, positions) == ([], [], [], [])
    assert {file for _, file in software} == checked == {training}
    software.clear()
    assert audit(True) == changed
    # That file's new entry, once, and its servers placed (it has no positions kept yet).
    assert (decoded, compiled, set(placed), positions) == ([1], [], {training}, [])
    assert sorted(software) == [(kind, training) for kind in ("containers", "engines", "frameworks", "jax")]
    _change_a_rule(project)
    after = audit(True)
    assert (decoded, compiled) == ([1], [1])  # another rule file: compiled again
    assert after == audit(False) != changed


@PROCESSES
def test_a_warm_run_makes_again_only_the_facts_of_racks_and_feeds_whose_figures_changed(
    project: Path, audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One server's draw capped: its rack's figures and its feeds' change, and only
    their facts are made again (the resident process: carried_rows.table_facts; a
    process of its own: their rows read from the cache folder, kept_tables); the
    bytes are a cold run's. The next run finds nothing afresh on any server, rack
    or feed."""
    same(audit)
    built: list[str] = []
    real_rows = facts._rows

    def made_rows(kind: str, fields: Any, entries: Any, *args: Any) -> Any:
        built.extend(entity for entity, _, _ in entries if kind in ("rack", "feed"))
        return real_rows(kind, fields, entries, *args)

    monkeypatch.setattr(facts, "_rows", made_rows)
    server = "{name: sh1-a01-gpu2, model: dgx-h100, rack: A01, position: 15"
    edit(project / "inv" / "sh1" / "servers-training.yaml", server, server + ", power_cap_w: 8000")
    built.clear()
    warm = audit(True)
    assert built == ["rack/sh1/A01", "feed/sh1/A01/A01-A", "feed/sh1/A01/A01-B"]
    assert warm == audit(False)
    assert audit(True) == warm  # the changed file's entry read, its rows kept
    # Then what the rules found on every server, rack and feed is known: none is
    # matched, located or shaped for grouping again (a process of its own:
    # memo.Found); only the facts made each run are (the facility's, the workloads').
    matched: list[str] = []  # the kinds of the facts matched, shaped or located
    ours = ("server", "rack", "feed")
    real_match, real_shape, real_located = engine.match, engine.values_shape, engine._located
    monkeypatch.setattr(engine, "match", lambda rules, pairs, *args: matched.extend(
        kind for kind, _ in pairs if kind in ours) or real_match(rules, pairs, *args))
    monkeypatch.setattr(engine, "values_shape", lambda rule, fact, *more: matched.extend(
        [fact.kind] if fact.kind in ours else []) or real_shape(rule, fact, *more))
    monkeypatch.setattr(engine, "_located", lambda fact, path: matched.extend(
        [fact.kind] if fact.kind in ours else []) or real_located(fact, path))
    built.clear()
    assert audit(True) == warm
    assert (built, matched) == ([], [])


def test_the_resident_process_keeps_positions_in_each_commands_cache_folder(
    project: Path, cli: CliRunner, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kept file's holder is carried from a command with one cache folder to one
    with another (its entry is the same bytes): what it works out from then on is
    kept in the new folder, as a process of its own keeps it."""
    carried = Carried()
    argv = ["audit", "inv", "--as-of", AS_OF, "--format", "json:out.json", "--cache-dir"]
    for folder in ("a", "a", "b", "b", "b"):
        carried.turn()
        main([*argv, str(project / folder)], carried=carried)
    capsys.readouterr()
    for _ in range(3):
        cli(*argv, str(project / "c"))
    b, c = (_positions(project / folder) for folder in "bc")
    assert b and b == c


def _positions(folder: Path) -> dict[str, set[tuple[Any, ...]]]:
    """The positions entries of a cache folder: key -> the positions kept."""
    store = cache.open_cache(folder)
    assert store is not None
    found = {}
    for entry in _every_entry(folder):
        body = cache.unpack(store.payload(entry.name) or b"N")
        if type(body) is tuple and body and body[0] == "positions":
            found[entry.name] = set(body[2])
    return found


def test_the_resident_process_carries_no_rows_of_files_it_reads_afresh(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no cache folder every command validates every file again: their models
    are new objects, and rows keyed by them would only hold memory."""
    made: list[int] = []

    class Counted(carried_rows._Facts[Any]):
        def __init__(self, *args: Any) -> None:
            made.append(1)
            super().__init__(*args)

    monkeypatch.setattr(carried_rows, "_Facts", Counted)
    carried = Carried()
    cached = ["--cache-dir", str(project / "cache")]
    for where in (["--no-cache"], ["--no-cache"], cached, cached):
        carried.turn()
        main(["audit", "inv", "--as-of", AS_OF, "--format", "json:out.json", *where], carried=carried)
        if where is cached:
            assert made == [], "the first run with the cache read every file afresh"
            cached = [*cached]  # the next one reads them back
    assert made  # read back from the cache: carried


def test_a_warm_run_makes_no_model_of_a_kept_server_nothing_changed_for(
    project: Path, audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kept servers file's servers are placed and read a column at a time
    (validated.ServerRun): a warm run makes the models of the servers whose
    rows it makes again only (a changed file's, read afresh, and those of the
    files whose racks' figures changed), in every format."""
    first = audit(True)
    assert audit(True) == first  # the kept files' rows kept
    made: list[tuple[int, int]] = []
    real = validated.ServerRun.model

    def model(self: validated.ServerRun, i: int) -> Any:
        if self._models[i] is None:
            made.append((id(self), i))
        return real(self, i)

    monkeypatch.setattr(validated.ServerRun, "model", model)
    assert audit(True) == first
    assert made == []
    _change_a_servers_memory(project)
    assert audit(True) == audit(False)
    assert made == []  # the changed file's servers validated afresh; no rack's figures changed


def test_a_warm_run_makes_no_model_of_a_kept_facilitys_racks_and_feeds(
    project: Path, audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kept facility whose placing reported nothing is placed, and its racks
    and feeds read by the later stages, a column at a time (validated.TableRun):
    a warm run makes none of their models, and says what a cold one says."""
    shutil.rmtree(project / "inv")
    fleet.write(40, project / "inv")
    first = audit(True)
    made: list[type] = []
    real = validated._Reader.part

    def part(self: validated._Reader, n: int) -> Any:
        new = self._parts[n] is None
        got = real(self, n)
        if new:
            made.append(type(got))
        return got

    monkeypatch.setattr(validated._Reader, "part", part)
    assert audit(True) == first
    pod = project / "inv" / fleet.pod_file(0)
    # Below the project's memory rule's 1024 GB: a finding of its own shows.
    pod.write_text(re.sub(r"memory_gb: \d+", "memory_gb: 512", pod.read_text(), count=1))
    changed = audit(True)
    assert changed != first and changed == audit(False)
    assert made and not {m.Rack, m.Feed} & set(made)  # the servers' shared parts are made
