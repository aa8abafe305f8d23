"""A team's own knowledge rows (docs/knowledge.md), end to end: a document of a
table's kind in the inventories or in a rule folder is validated by the table's
model, merged with the built-in table (a row with a built-in key replaces it, and
the audit says so) and used by the same checks. Exact output and exit codes.

The rows are illustrative test data, not facts about these releases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import AS_OF, FIXTURES, CliRunner, Writer, summary

REPO = Path(__file__).resolve().parents[1]

# One H100 server (8 lines from line 5, `software` on line 13: its value at column 16).
SERVER = """\
  - name: {name}
    rack: R01
    position: {position}
    u_height: 2
    power_w: {{max: 2000, typical: 1000}}
    gpu: {{model: h100-sxm-80gb, count: 1}}
    support: {{vendor: Acme, level: 24x7, until: 2030-12-31}}
    software: {software}
"""


def servers(*software: str) -> str:
    head = "kind: Servers\nfacility: f1\nrollout_date: 2027-02-01\nservers:\n"
    return head + "".join(
        SERVER.format(name=f"s{i + 1}", position=1 + 2 * i, software=sw) for i, sw in enumerate(software)
    )


DRIVERS = """\
kind: DriverBranches
as_of: 2027-01-01
sources:
  acme-qual: "Acme driver qualification, January 2027 (illustrative)"
branches:
  - {branch: 640, type: production, eol: 2028-03, source: [acme-qual]}
"""

IMAGES = """\
kind: ContainerImages
as_of: 2027-01-01
sources:
  ngc-26.09: "NVIDIA NGC 26.09 container release notes (illustrative)"
images:
  - repositories: [nvcr.io/nvidia/pytorch]
    tag: '26\\.09-py3'
    framework: pytorch
    cuda: "13.3"
    min_driver: "610"
    source: [ngc-26.09]
"""

# Where the team keeps its knowledge: with the inventories, or in its rule folder.
PLACES = {"inventory": ("inv/ours.yaml", ()), "rules": ("team/ours.yaml", ("--rules", "team"))}


def _audit(cli: CliRunner, workdir: Writer, place: str, knowledge: str | None, *software: str,
           select: tuple[str, ...] = ("*",)) -> tuple[int, list[str], str]:
    """Audit one server per `software` with the team's `knowledge` document (None:
    without one) in `place`; the built-in tables' folder is shown as from the repository."""
    workdir("inv/servers.yaml", servers(*software))
    workdir("inv/facility.yaml", (FIXTURES / "minimal" / "facility.yaml").read_text())
    path, options = PLACES[place]
    if knowledge is not None:
        workdir(path, knowledge)
    else:
        options = ()
    run = cli("audit", "inv", *options, *(f"--select={s}" for s in select), *AS_OF)
    lines = [line.replace(f"{REPO}/", "") for line in run.lines]
    return run.code, lines, run.err.replace(f"{REPO}/", "")


# ---------------------------------------------------------------- (a) a driver branch
UNKNOWN_R640 = ("inv/servers.yaml:12:16: warning support.driver-branch-unknown server s1: driver 640.10.01 "
                "is on R640, a branch the driver tables do not list, so its end of life and forward "
                "compatibility were not checked")


@pytest.mark.parametrize("place", PLACES)
def test_a_driver_branch_of_yours_is_known_to_the_lifecycle_checks(
    cli: CliRunner, workdir: Writer, place: str
) -> None:
    software = '{driver: "640.10.01"}'
    assert _audit(cli, workdir, place, None, software, select=("support.*",)) == (
        0, [UNKNOWN_R640, summary(warning=1, verdict="pass")], "")
    assert _audit(cli, workdir, place, DRIVERS, software, select=("support.*",)) == (
        0, [summary(verdict="pass")], "")
    # The row's own values are what the checks read: an end of life before the rollout is an error.
    ended = DRIVERS.replace("eol: 2028-03", "eol: 2027-01")
    assert _audit(cli, workdir, place, ended, software, select=("support.*",)) == (1, [
        "inv/servers.yaml:12:16: error support.driver-branch-eol server s1: driver 640.10.01 is on R640 "
        "(production branch), which reached end of life in 2027-01, before 2027-02-01",
        summary(error=1),
    ], "")


# ---------------------------------------------------------------- (b) a container image
NGC_26_09 = '{driver: "%s", containers: ["nvcr.io/nvidia/pytorch:26.09-py3"]}'


@pytest.mark.parametrize("place", PLACES)
def test_an_image_of_yours_resolves_and_its_cuda_is_checked_against_the_host_driver(
    cli: CliRunner, workdir: Writer, place: str
) -> None:
    select = ("compatibility.container-*",)
    # 12:51 is the image in the server's `containers` list.
    assert _audit(cli, workdir, place, None, NGC_26_09 % "570.133.20", select=select) == (0, [
        "inv/servers.yaml:12:51: warning compatibility.container-image-unknown server s1: container image "
        "nvcr.io/nvidia/pytorch:26.09-py3 is not one the tables know and declares no CUDA, so what it "
        "brings cannot be checked",
        summary(warning=1, verdict="pass"),
    ], "")
    # CUDA 13.3 needs 580 (the 13.x floor); R570 runs it only from the driver the notes ask for, 610.
    assert _audit(cli, workdir, place, IMAGES, NGC_26_09 % "570.133.20", select=select) == (1, [
        "inv/servers.yaml:12:51: error compatibility.container-driver-below-floor server s1: container image "
        "nvcr.io/nvidia/pytorch:26.09-py3 brings CUDA 13.3, which needs driver 580 or newer; the server "
        "has 570.133.20, and forward compatibility does not apply: the image's release notes ask for "
        "driver 610 or later",
        summary(error=1),
    ], "")
    assert _audit(cli, workdir, place, IMAGES, NGC_26_09 % "610.43.02", select=select) == (
        0, [summary(verdict="pass")], "")


# ---------------------------------------------------------------- an engine release
ENGINES = """\
kind: InferenceEngines
as_of: 2027-01-01
sources:
  vllm-0.34: "vLLM 0.34.0 requirements/cuda.txt (illustrative)"
engines:
  - name: vllm
    description: vLLM
    variants: true
    releases:
      - {release: "0.34.0", torch: "2.14.0", cuda: "13.0", source: [vllm-0.34]}
"""
VLLM_034 = '{driver: "580.95.05", cuda: "13.0.2", frameworks: {pytorch: "2.13.0+cu130"}, vllm: "0.34.0"}'


@pytest.mark.parametrize("place", PLACES)
def test_an_engine_release_of_yours_is_known_to_the_engine_checks(
    cli: CliRunner, workdir: Writer, place: str
) -> None:
    select = ("compatibility.engine-*",)
    assert _audit(cli, workdir, place, None, VLLM_034, select=select) == (0, [
        "inv/servers.yaml:12:98: warning compatibility.engine-release-unknown server s1: vLLM 0.34.0 is not a"
        " release the engine tables know, so its torch pin, CUDA and driver checks were not made",
        summary(warning=1, verdict="pass"),
    ], "")
    # The row's torch pin is checked: 2.14.0 pinned, 2.13.0 declared (12:98: the vllm version).
    assert _audit(cli, workdir, place, ENGINES, VLLM_034, select=select) == (1, [
        "inv/servers.yaml:12:98: error compatibility.engine-torch-mismatch server s1: vLLM 0.34.0 pins torch"
        " 2.14.0, but the server declares torch 2.13.0+cu130: pip replaces it with 2.14.0, or the engine's"
        " kernels do not load",
        summary(error=1),
    ], "")


def test_a_framework_release_of_yours_is_known_to_the_framework_checks(
    cli: CliRunner, workdir: Writer
) -> None:
    releases = """\
        kind: Frameworks
        as_of: 2027-01-01
        sources:
          pt-2.15: "PyTorch 2.15 release notes (illustrative)"
        frameworks:
          - name: pytorch
            variants: true
            releases:
              - {release: "2.15", cuda: ["13.0", "13.2"], pypi_default: "13.0", source: [pt-2.15]}
        """
    software = '{driver: "620.10.01", cuda: "13.2", frameworks: {pytorch: "2.15.0+cu132"}}'
    select = ("compatibility.framework-*",)
    assert _audit(cli, workdir, "inventory", None, software, select=select) == (0, [
        "inv/servers.yaml:12:73: warning compatibility.framework-release-unknown server s1: pytorch "
        "2.15.0+cu132 is not a release the compatibility tables know, so its build, driver and GPU checks "
        "were not made",
        summary(warning=1, verdict="pass"),
    ], "")
    assert _audit(cli, workdir, "inventory", releases, software, select=select) == (
        0, [summary(verdict="pass")], "")
    # A build the team's row does not list is missing, as for a built-in release.
    missing = software.replace("+cu132", "+cu126")
    code, lines, err = _audit(cli, workdir, "inventory", releases, missing, select=select)
    assert (code, err, lines[-1]) == (1, "", summary(error=1))
    assert " error compatibility.framework-build-missing server s1: " in lines[0]


# ---------------------------------------------------------------- (c) a bad row
# (document, where and what: the same in both places; the inventory's is a schema finding).
BAD_ROWS = [
    pytest.param(DRIVERS.replace("eol: 2028-03", "eol: 2028-13"),
                 "6:42", "schema.invalid",
                 "branches.0.eol: '2028-13' is not a month (YYYY-MM) (got '2028-13')",
                 id="bad-month"),
    pytest.param(DRIVERS.replace(", source: [acme-qual]", ""),
                 "6:5", "schema.missing-field", "missing required field 'branches.0.source'", id="no-source"),
    pytest.param(DRIVERS.replace("source: [acme-qual]", "source: [acme]"),
                 "1:1", "schema.invalid", "document: unknown source key(s) acme; known: acme-qual",
                 id="unknown-source"),
    pytest.param(DRIVERS.replace("branch: 640", "branch: 0"),
                 "6:14", "schema.invalid",
                 "branches.0.branch: Input should be greater than or equal to 1 (got 0)",
                 id="branch-0"),
    pytest.param(DRIVERS.replace("eol:", "end_of_life:"),
                 "6:37", "schema.unknown-field", "unknown field 'branches.0.end_of_life'",
                 id="unknown-field"),
]


@pytest.mark.parametrize(("text", "where", "rule", "message"), BAD_ROWS)
def test_a_bad_row_of_yours_is_a_located_input_error(
    cli: CliRunner, workdir: Writer, text: str, where: str, rule: str, message: str
) -> None:
    software = '{driver: "640.10.01"}'
    assert _audit(cli, workdir, "inventory", text, software) == (2, [
        f"inv/ours.yaml:{where}: error {rule} {message}", summary(error=1)], "")
    # In a rule folder a problem stops the run with one line, as a bad rule does.
    assert _audit(cli, workdir, "rules", text, software) == (2, [], f"team/ours.yaml:{where}: {message}\n")


# Problems only the merge with the built-in rows (or the other documents) shows.
MERGE_PROBLEMS = [
    pytest.param(
        "kind: CudaReleases\nas_of: 2027-01-01\nsources: {x: \"x (illustrative)\"}\nreleases:\n"
        '  - {cuda: "12.8.9", driver: "570.200.01", mvc_floor: "525", source: [x]}\n'
        '  - {cuda: "12.77.1", driver: "570.200.01", mvc_floor: "525", source: [x]}\n',
        "inv/ours.yaml:1:1: error schema.invalid with the built-in CudaReleases rows: CUDA 12.77.1 is an "
        "update of 12.77, which has no row",
        id="update-without-ga"),
    pytest.param(
        "kind: Frameworks\nas_of: 2027-01-01\nsources: {x: \"x (illustrative)\"}\nframeworks:\n"
        '  - {name: pytorch, variants: false, releases: [{release: "2.15", source: [x]}]}\n',
        "inv/ours.yaml:5:21: error schema.invalid Frameworks name pytorch: variants is true in the built-in "
        "row at rules/knowledge/frameworks.yaml:39; a document that adds to it cannot change it",
        id="framework-variants"),
    pytest.param(
        "kind: Frameworks\nas_of: 2027-01-01\nsources: {x: \"x (illustrative)\"}\nframeworks:\n"
        '  - {name: torch, variants: true, releases: [{release: "2.15", source: [x]}]}\n',
        "inv/ours.yaml:1:1: error schema.invalid with the built-in Frameworks rows: 'torch' names both "
        "framework torch and framework pytorch",
        id="framework-alias"),
    pytest.param(
        DRIVERS.replace("acme-qual", "dc-drivers"),
        "inv/ours.yaml:4:3: error schema.invalid source key 'dc-drivers' of DriverBranches is defined with "
        "another text in rules/knowledge/drivers.yaml: give yours another key",
        id="source-key-taken"),
    pytest.param(
        DRIVERS + "---\n" + DRIVERS.replace("production", "long-term"),
        "inv/ours.yaml:13:5: error schema.duplicate-name DriverBranches branch 640 is given twice: first at "
        "inv/ours.yaml:6",
        id="twice"),
]


@pytest.mark.parametrize(("text", "expected"), MERGE_PROBLEMS)
def test_a_row_that_cannot_join_the_built_in_table_is_a_located_input_error(
    cli: CliRunner, workdir: Writer, text: str, expected: str
) -> None:
    assert _audit(cli, workdir, "inventory", text, '{driver: "640.10.01"}') == (
        2, [expected, summary(error=1)], "")


def test_a_row_given_in_the_rule_folder_and_the_inventory_is_refused(cli: CliRunner, workdir: Writer) -> None:
    # Two statements of the team's about one branch: neither may silently win.
    workdir("team/ours.yaml", DRIVERS)
    workdir("inv/ours.yaml", DRIVERS.replace("2028-03", "2028-06"))
    workdir("inv/servers.yaml", servers('{driver: "640.10.01"}'))
    workdir("inv/facility.yaml", (FIXTURES / "minimal" / "facility.yaml").read_text())
    run = cli("audit", "inv", "--rules", "team", *AS_OF)
    assert (run.code, run.lines, run.err) == (2, [
        "inv/ours.yaml:6:5: error schema.duplicate-name DriverBranches branch 640 is given twice: first at "
        "team/ours.yaml:6",
        summary(error=1),
    ], "")


# ---------------------------------------------------------------- (d) a built-in row replaced
R570 = """\
kind: DriverBranches
as_of: 2027-01-01
sources:
  acme-support: "Acme's extended support contract for R570, to June 2027 (illustrative)"
branches:
  - {branch: 570, type: production, eol: 2027-06, forward_compatible: true, source: [acme-support]}
"""
OVERRIDE = (
    "{file}:6:5: warning knowledge.override DriverBranches branch 570 replaces the built-in row at "
    "rules/knowledge/drivers.yaml:51: eol 2026-02 -> 2027-06, verified false -> true, unverified [type, eol, "
    "forward_compatible] -> [] (yours: source acme-support; built in: source ngc-26.05, cuda-compat, "
    "dc-drivers)"
)


@pytest.mark.parametrize("place", PLACES)
def test_a_row_of_yours_with_a_built_in_key_replaces_it_and_the_audit_says_so(
    cli: CliRunner, workdir: Writer, place: str
) -> None:
    software = '{driver: "570.133.20"}'
    assert _audit(cli, workdir, place, None, software, select=("support.driver-*",)) == (1, [
        "inv/servers.yaml:12:16: error support.driver-branch-eol server s1: driver 570.133.20 is on R570 "
        "(production branch), which reached end of life in 2026-02, before 2027-02-01 (the tables mark that "
        "lifecycle unverified)",
        summary(error=1),
    ], "")
    code, lines, err = _audit(cli, workdir, place, R570, software, select=("support.driver-*", "knowledge.*"))
    ends_soon = (
        "inv/servers.yaml:12:16: warning support.driver-branch-ends-soon server s1: driver 570.133.20 is on "
        "R570 (production branch), which reaches end of life in 2027-06, 149 days after 2027-02-01 (horizon "
        "365 days)"
    )
    override = OVERRIDE.format(file=PLACES[place][0])
    found = [override, ends_soon] if place == "inventory" else [ends_soon, override]  # by file and line
    assert (code, lines, err) == (0, [*found, summary(warning=2, verdict="pass")], "")


def test_a_row_that_restates_a_built_in_row_is_not_reported(cli: CliRunner, workdir: Writer) -> None:
    same = R570.replace(
        "eol: 2027-06, forward_compatible: true, source: [acme-support]",
        "eol: 2026-02, forward_compatible: true, source: [acme-support], verified: false, "
        "unverified: [type, eol, forward_compatible]")
    assert _audit(cli, workdir, "inventory", same, '{driver: "570.133.20"}', select=("knowledge.*",)) == (
        0, [summary(verdict="pass")], "")


def test_an_image_row_of_yours_used_instead_of_a_built_in_one_is_reported(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    run = cli("audit", "tests/fixtures/knowledge", "--select", "compatibility.container-*", *AS_OF)
    assert (run.code, run.lines, run.err) == (0, [
        "tests/fixtures/knowledge/servers.yaml:26:20: warning compatibility.container-driver-minor-version "
        "server s2: container image nvcr.io/nvidia/pytorch:26.09-py3 brings CUDA 13.3, which runs on driver "
        "580.95.05 only with limitations (minor-version compatibility); every feature needs 610.43.02 (the "
        "tables mark that minimum unverified)",
        "tests/fixtures/knowledge/servers.yaml:26:56: info compatibility.container-image-overridden server "
        "s2: container image nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 is resolved by your row at "
        "tests/fixtures/knowledge/knowledge.yaml:22, not by the built-in row at "
        "rules/knowledge/containers.yaml:39 that matches it too",
        summary(warning=1, info=1, verdict="pass"),
    ], "")


# ---------------------------------------------------------------- the cache and the reference
def test_a_changed_document_of_yours_is_read_again_with_the_cache_on(cli: CliRunner, workdir: Writer) -> None:
    software = '{driver: "640.10.01"}'
    assert _audit(cli, workdir, "inventory", DRIVERS, software)[0] == 0
    runs = []
    for eol in ("2028-03", "2027-01", "2028-03"):
        workdir("inv/ours.yaml", DRIVERS.replace("2028-03", eol))
        run = cli("audit", "inv", "--cache-dir", "cache", "--select", "support.*", *AS_OF)
        runs.append((run.code, run.lines[-1]))
    assert runs == [(0, summary(verdict="pass")), (1, summary(error=1)), (0, summary(verdict="pass"))]


def test_explain_and_facts_show_what_your_rows_change(cli: CliRunner) -> None:
    run = cli("explain", "knowledge.override")
    assert (run.code, run.lines[:4]) == (0, [
        "knowledge.override: A row of yours that replaces a built-in knowledge row is reported",
        "  severity: warning",
        "  category: compatibility",
        "  defined in: built in",
    ])
    facts = cli("facts", "container").lines
    shown = [line.split()[0] for line in facts if "image_row" in line]
    assert shown == ["image_row_from", "image_row_overrides"]


def test_a_gpu_model_of_yours_may_stand_in_a_rule_folder_too(cli: CliRunner, workdir: Writer) -> None:
    gpus = """\
        kind: GpuModels
        gpus:
          - {name: acme-x1, description: Acme X1, vendor: NVIDIA, architecture: Hopper,
             compute_capability: "9.0", min_cuda: "11.8", memory_gb: 80, tdp_w: 700, form_factor: sxm,
             interconnect: nvlink, forward_compatible: true, source: "Acme X1 datasheet (illustrative)"}
        """
    text = servers('{driver: "580.95.05"}').replace("h100-sxm-80gb", "acme-x1")
    workdir("inv/servers.yaml", text)
    workdir("inv/facility.yaml", (FIXTURES / "minimal" / "facility.yaml").read_text())
    run = cli("audit", "inv", *AS_OF)
    assert (run.code, run.lines) == (2, [
        "inv/servers.yaml:10:18: error schema.reference unknown GPU model 'acme-x1'", summary(error=1)])
    workdir("team/knowledge/gpus.yaml", gpus)
    run = cli("audit", "inv", "--rules", "team", "--select", "compatibility.*", *AS_OF)
    assert (run.code, run.lines, run.err) == (0, [summary(verdict="pass")], "")
    # A built-in name is a duplicate, as with the inventories: a catalog entry is not replaced.
    workdir("team/knowledge/gpus.yaml", gpus.replace("acme-x1", "h100-sxm-80gb"))
    run = cli("audit", "inv", "--rules", "team", *AS_OF)
    duplicate = [line for line in run.lines if " schema.duplicate-name " in line]
    assert run.code == 2 and len(duplicate) == 1 and duplicate[0].startswith(
        "team/knowledge/gpus.yaml:3:12: error schema.duplicate-name duplicate GPU model name 'h100-sxm-80gb' "
        "(first defined at ")
