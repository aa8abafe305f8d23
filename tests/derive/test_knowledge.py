"""Knowledge tables: loading, validation, provenance and version numbers."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from checker.core.errors import UserError
from checker.core.resources import knowledge_dir
from checker.derive import knowledge
from checker.derive.knowledge import (
    _FILES,
    builtin,
    extend,
    load_knowledge,
    parse_version,
    release_line,
    version_number,
)
from checker.load.build import Placed
from checker.source.reader import display_path, parse_text

KB = builtin()


@pytest.mark.parametrize(("higher", "lower"), [
    ("535.129.03", "535.54.03"),
    ("12.10", "12.9"),
    ("570.133.20", "570.26"),
    ("580", "575.51.03"),
    ("2.10", "2.9"),
    ("6.2.4", "6.2"),
    ("13.0", "12.9.1"),
])
def test_version_numbers_order_like_packaging(higher: str, lower: str) -> None:
    assert Version(higher) > Version(lower)
    assert version_number(higher) > version_number(lower)  # type: ignore[operator]


@pytest.mark.parametrize(("text", "number"), [
    ("535.129.03", 535_129_003_000),
    ("12.2", 12_002_000_000),
    ("580", 580_000_000_000),
    ("2.3.1+cu121", 2_003_001_000),  # the build variant is not part of the order
    ("999.999.999.999", 999_999_999_999),
])
def test_version_number_layout(text: str, number: int) -> None:
    assert version_number(text) == number


@pytest.mark.parametrize("text", ["1000.1", "1.2.3.4.5", "1.0-foo", "v12x", None])
def test_versions_that_do_not_fit_are_unknown(text: str | None) -> None:
    assert version_number(text) is None


RELEASE = st.lists(st.integers(0, 999), min_size=1, max_size=4)


@given(RELEASE, RELEASE)
def test_version_numbers_order_exactly_like_packaging(a: list[int], b: list[int]) -> None:
    va, vb = ".".join(map(str, a)), ".".join(map(str, b))
    na, nb = version_number(va), version_number(vb)
    assert na is not None and nb is not None
    assert (na < nb, na == nb) == (Version(va) < Version(vb), Version(va) == Version(vb))


def test_release_line() -> None:
    assert release_line("12.4.1") == Version("12.4")
    assert release_line("2.3.1+cu121") == Version("2.3")
    assert release_line("12") == Version("12.0")
    assert release_line("nope") is None and parse_version("nope") is None


def test_cuda_floor_is_never_above_the_full_driver() -> None:
    rows = {r.cuda: r for r in KB.cuda.releases}
    assert rows["11.0"].floor == "450.51.05" and rows["11.8"].floor == "450.80.02"
    assert rows["13.0"].floor == "580"


def test_cuda_rows_are_found_by_release_line() -> None:
    row = KB.cuda.row("12.4")
    assert row is not None and row.driver == "550.54.14"
    assert KB.cuda.row("12.4.0") is row
    assert KB.cuda.row("12.7") is None  # there is no CUDA 12.7
    assert KB.cuda.row(None) is None


@pytest.mark.parametrize(("cuda", "row", "driver", "listed"), [
    ("12.8.1", "12.8.1", "570.124.06", True),  # Update 1 needs more than 12.8's 570.26
    ("12.2.2", "12.2.2", "535.104.05", True),
    ("12.2.1", "12.2.1", "535.86.09", True),
    ("13.0.2", "13.0.2", "580.95.05", True),
    ("12.6.3", "12.6.3", "560.35.05", True),
    ("12.2.3", "12.2.2", "535.104.05", False),  # an update the table does not list: the one before it
    ("11.7.1", "11.7", "515.43.04", False),
    ("13.2", "13.2", "595.45.04", True),
])
def test_update_releases_have_their_own_driver(cuda: str, row: str, driver: str, listed: bool) -> None:
    found = KB.cuda.row(cuda)
    assert found is not None and (found.cuda, found.driver) == (row, driver)
    assert KB.cuda.update_listed(cuda) is listed


def test_wheel_tags_name_ga_releases() -> None:
    assert [r.cuda for r in KB.cuda.ga()].count("12.8") == 1
    assert all(len(Version(r.cuda).release) == 2 for r in KB.cuda.ga())


def test_the_tables_are_dated() -> None:
    # The oldest of the tables' dates: JAX's, whose newest release is 0.12.0.1 (2026-10-21).
    assert KB.as_of.isoformat() == "2026-10-21"
    assert (KB.engines.as_of.isoformat(), KB.cuda.as_of.isoformat()) == ("2026-11-02", "2026-12-01")


@pytest.mark.parametrize(("release", "cuda", "platform", "min_cc", "excludes"), [
    ("2.9.1", "12.6", None, ["5.0"], []),
    ("2.10.0", "12.8", None, ["7.0"], []),
    ("2.11.0", "12.8", None, ["7.5"], []),
    ("2.9.1", "13.0", None, ["7.5"], []),
    ("2.14.0", "13.2", None, ["7.5"], []),
    ("2.7.1", "12.8", None, [], []),  # the build script notes say nothing of 2.7's cu128
    ("2.9.1", "12.6", "aarch64", ["5.0"], ["7.0", "7.5", "8.6"]),
])
def test_wheel_architectures_per_release_and_variant(
    release: str, cuda: str, platform: str | None, min_cc: list[str], excludes: list[str]
) -> None:
    torch = KB.frameworks.get("pytorch")
    assert torch is not None
    rows = torch.wheel_rows(release, cuda, platform)
    assert [w.min_cc for w in rows if w.min_cc] == min_cc
    assert [x for w in rows for x in w.excludes] == excludes


def test_pypi_default_builds() -> None:
    torch = KB.frameworks.get("pytorch")
    assert torch is not None
    defaults = {r.release: r.pypi_default for r in torch.releases}
    assert (defaults["2.9"], defaults["2.11"], defaults["2.12"], defaults["2.14"]) == (
        "12.8", None, "13.0", "13.2")
    assert defaults["2.4"] is None  # the reference gives none before 2.5


def test_every_row_names_a_known_source() -> None:
    for table in (KB.cuda, KB.frameworks, KB.rocm, KB.fit):
        for row in table.rows():
            assert row.source and set(row.source) <= set(table.sources)


def test_unverified_planning_defaults_are_flagged() -> None:
    assert KB.fit.estimate.verified is False and KB.fit.estimate.unverified == ["mfu"]
    assert all(not t.verified for t in KB.fit.tasks.values())


def test_frameworks_by_name_or_alias() -> None:
    torch = KB.frameworks.get("torch")
    assert torch is not None and torch.name == "pytorch" and KB.frameworks.get("PyTorch") is torch
    release = torch.release("2.7.1+cu128")
    assert release is not None and "12.8" in release.cuda
    assert torch.architecture("Blackwell") is not None and torch.architecture("Ampere") is None
    assert KB.frameworks.get("jax") is None


def test_rocm_releases_are_known_by_line() -> None:
    assert KB.rocm.known("6.1.3") and not KB.rocm.known("9.9") and not KB.rocm.known(None)


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), folder)
    return folder


@pytest.mark.parametrize(("file", "old", "new", "message"), [
    ("cuda.yaml", "source: [cuda-rn], notes", "source: [nvidia], notes", "unknown source key(s) nvidia"),
    ("cuda.yaml", '{cuda: "12.2", driver: "535.54.03"', '{cuda: "12.2", driver: "r535"',
     "'r535' is not a version"),
    ("fit.yaml", "mfu: 0.35", "mfu: 3.5", "less than or equal to 1"),
    ("frameworks.yaml", "variants: true", "variants: true\n    extra: 1", "unknown field"),
    ("rocm.yaml", '{rocm: "7.1", source: [pytorch-prev]}',
     '{rocm: "7.1", source: [pytorch-prev], verified: false}', "list the unverified fields"),
    ("rocm.yaml", "as_of: 2026-12-01\n", "", "as_of"),
    ("cuda.yaml", '{cuda: "12.0", driver', '{cuda: "12.0.9", driver', "an update of 12.0, which has no row"),
    ("frameworks.yaml", '{release: "2.11", cuda', '{release: "2.10", cuda', "2.10 listed more than once"),
    ("frameworks.yaml", '{cuda: "13.0", min_cc', '{cuda: "13.0", platform: aarch64, min_cc',
     "give `cuda` (a wheel variant) or `platform`"),
])
def test_bad_tables_are_located_user_errors(
    tmp_path: Path, file: str, old: str, new: str, message: str
) -> None:
    folder = _copy(tmp_path)
    path = folder / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(UserError) as err:
        load_knowledge(folder)
    line = err.value.lines[0]
    assert line.startswith(f"{path}:") or file in line
    assert message in line


def test_missing_table_is_a_user_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "rocm.yaml").unlink()
    with pytest.raises(UserError, match="cannot read the knowledge table"):
        load_knowledge(folder)


# ---------------------------------------------------------------- a user's tables (docs/knowledge.md)
def _user(text: str, file: str = "ours.yaml") -> Placed[dict[str, Any]]:
    doc = parse_text(textwrap.dedent(text))[0]
    return Placed(doc.value, file, doc.src)


def _copy_of(name: str) -> Placed[dict[str, Any]]:
    file = _FILES[name][0]
    return _user((knowledge_dir() / file).read_text(encoding="utf-8"), f"copy/{file}")


def test_without_documents_the_built_in_tables_are_used_as_they_are() -> None:
    extended = extend(KB, [])
    assert extended.knowledge is KB and extended.problems == [] and extended.overrides == []


@pytest.mark.parametrize("name", list(_FILES))
def test_a_copy_of_a_built_in_table_changes_nothing(name: str) -> None:
    # Every table kind, those added later too: a row of the same key and facts is no override.
    extended = extend(KB, [_copy_of(name)])
    assert (extended.problems, extended.overrides) == ([], [])
    merged, built_in = getattr(extended.knowledge, name), getattr(KB, name)
    assert len(list(merged.rows())) == len(list(built_in.rows()))
    assert all(row.origin is not None and not row.origin.builtin for row in merged.rows())


def test_every_row_model_has_a_key() -> None:
    for _, model in _FILES.values():
        for row, shape in knowledge._row_models(model):
            assert shape != "list" or row.key_fields(), row


def test_built_in_rows_know_where_they_are_written() -> None:
    row = KB.drivers.get(570)
    assert row is not None and row.origin is not None and row.origin.builtin
    assert row.origin.where() == f"{display_path(knowledge_dir() / 'drivers.yaml')}:51"


def test_a_release_added_to_a_built_in_framework_keeps_its_releases() -> None:
    extended = extend(KB, [_user("""\
        kind: Frameworks
        as_of: 2027-01-01
        sources: {x: "illustrative"}
        frameworks:
          - name: pytorch
            variants: true
            releases:
              - {release: "2.15", cuda: ["13.0"], source: [x]}
        """)])
    assert extended.problems == [] and extended.overrides == []
    before, after = KB.frameworks.get("torch"), extended.knowledge.frameworks.get("torch")
    assert before is not None and after is not None
    assert len(after.releases) == len(before.releases) + 1
    assert after.release("2.15.0") is not None and after.release("2.9.1") == before.release("2.9.1")
    # The architecture and wheel rows are the built-in ones, untouched.
    assert (after.architectures, after.wheels) == (before.architectures, before.wheels)


def test_a_changed_planning_figure_is_one_override_the_rest_restated() -> None:
    fit = (knowledge_dir() / "fit.yaml").read_text(encoding="utf-8")
    assert fit.count("mfu: 0.35") == 1
    extended = extend(KB, [_user(fit.replace("mfu: 0.35", "mfu: 0.5"), "fit.yaml")])
    assert extended.problems == []
    assert [f.message.split(": ", 1)[1].split(" (")[0] for f in extended.overrides] == ["mfu 0.35 -> 0.5"]
    assert extended.knowledge.fit.estimate.mfu == 0.5
    restated = extended.knowledge.fit.model_dump(exclude={"estimate"})
    assert restated == KB.fit.model_dump(exclude={"estimate"})


def test_a_users_image_row_is_matched_before_the_built_in_ones() -> None:
    extended = extend(KB, [_user("""\
        kind: ContainerImages
        as_of: 2027-01-01
        sources: {x: "illustrative"}
        images:
          - {repositories: [nvidia/cuda], tag: '12\\.4\\.1-.*', cuda: "12.4.1", min_driver: "550",
             source: [x]}
        """)])
    images = extended.knowledge.containers
    found = images.resolve("nvidia/cuda", "12.4.1-cudnn-runtime-ubuntu22.04")
    assert found is not None and found[1]["cuda"] == "12.4.1" and found[0].min_driver == "550"
    shadowed = images.overridden(found[0], "nvidia/cuda", "12.4.1-cudnn-runtime-ubuntu22.04")
    assert shadowed is KB.containers.images[0]
    # Another image of the repository is still the built-in row's, which no user's row shadows.
    other = images.resolve("nvidia/cuda", "13.0.2-runtime-ubuntu24.04")
    assert other is not None and other[0] is KB.containers.images[0]
    assert images.overridden(other[0], "nvidia/cuda", "13.0.2-runtime-ubuntu24.04") is None


def test_a_users_as_of_counts_towards_the_tables_date() -> None:
    older = _user("""\
        kind: RocmReleases
        as_of: 2025-06-01
        sources: {x: "illustrative"}
        releases:
          - {rocm: "9.0", source: [x]}
        """)
    assert extend(KB, [older]).knowledge.as_of == dt.date(2025, 6, 1) < KB.as_of


# ---------------------------------------------------------------- docs/knowledge.md
DOC = Path(__file__).resolve().parents[2] / "docs" / "knowledge.md"


def test_the_docs_hold_the_reference_of_every_table() -> None:
    expected = knowledge.tables_reference()
    assert expected in DOC.read_text(encoding="utf-8"), (
        f"docs/knowledge.md: put this in place of its reference:\n{expected}")


def test_the_docs_examples_are_tables_a_user_may_add() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    docs = [_user(block) for block in blocks]
    assert sorted({d.value["kind"] for d in docs}) == ["ContainerImages", "DriverBranches", "Frameworks"]
    extended = extend(KB, docs)
    assert extended.problems == []
    # Only the correction to R570 replaces a built-in row.
    assert [f.message.split(" replaces")[0] for f in extended.overrides] == ["DriverBranches branch 570"]


def test_merging_leaves_the_built_in_tables_as_they_are() -> None:
    # The built-in tables are read once per process and shared by every audit in it.
    before = KB.model_dump()
    docs = [_user(block) for block in re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)]
    assert extend(KB, docs).overrides
    assert KB.model_dump() == before and builtin() is KB
    assert all(row.origin is not None and row.origin.builtin for table in KB.tables() for row in table.rows())
