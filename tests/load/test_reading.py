"""Reading files: from the cache, parsed here, or parsed in a pool; always in the order given."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from checker.load import reading
from checker.load.reading import ReadOptions, read_all, workers
from checker.source.parse import YamlProblem

FACILITY = (
    "kind: Facility\nname: f{n}\nracks:\n  - {{name: R01, feeds: [{{name: A, voltage: 230, amps: 32}}]}}\n"
)


ANCHORED = (
    "x-feed: &feed {{name: A, voltage: 230, amps: 32}}\n"
    "kind: Facility\nname: f{n}\nracks:\n  - {{name: R01, feeds: [*feed]}}\n"
)


def write_files(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        path = folder / f"f{n}.yaml"
        path.write_text(FACILITY.format(n=n))
        paths.append(path)
    return paths


def test_a_second_read_comes_from_the_cache(tmp_path: Path, parsed: list[str]) -> None:
    paths = write_files(tmp_path / "inv", 3)
    options = ReadOptions(cache_dir=tmp_path / "cache")
    cold = read_all(paths, options)
    assert parsed == ["f0.yaml", "f1.yaml", "f2.yaml"]
    assert read_all(paths, options) == cold
    assert len(parsed) == 3


def test_only_a_changed_file_is_parsed_again(tmp_path: Path, parsed: list[str]) -> None:
    paths = write_files(tmp_path / "inv", 3)
    options = ReadOptions(cache_dir=tmp_path / "cache")
    read_all(paths, options)
    paths[1].write_text(FACILITY.format(n=9))
    warm = read_all(paths, options)
    assert parsed[3:] == ["f1.yaml"]
    assert warm == read_all(paths, ReadOptions())  # the same as with no cache


def test_a_yaml_problem_is_cached_too(tmp_path: Path, parsed: list[str]) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [\n")
    options = ReadOptions(cache_dir=tmp_path / "cache")
    first, second = (read_all([tmp_path / "bad.yaml"], options)[0] for _ in range(2))
    assert isinstance(first, YamlProblem) and isinstance(second, YamlProblem)
    assert (first.line, first.column, first.message) == (second.line, second.column, second.message)
    assert parsed == ["bad.yaml"]


def test_an_unreadable_file_is_reported_not_cached(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    for options in (ReadOptions(), ReadOptions(cache_dir=tmp_path / "cache")):
        [outcome] = read_all([tmp_path / "dir.yaml"], options)
        assert isinstance(outcome, IsADirectoryError)


def test_an_unusable_cache_folder_is_no_cache(tmp_path: Path) -> None:
    paths = write_files(tmp_path / "inv", 2)
    (tmp_path / "taken").write_text("")
    assert read_all(paths, ReadOptions(cache_dir=tmp_path / "taken")) == read_all(paths, ReadOptions())


@pytest.mark.parametrize(("jobs", "sizes", "expected"), [
    (1, [5_000_000, 5_000_000], 1),  # --jobs 1: never a pool
    (4, [50_000_000], 1),  # one file: nothing to share
    (4, [400_000, 500_000], 1),  # under POOL_MIN_BYTES: start-up would cost more than it saves
    (2, [600_000, 600_000], 2),
    (8, [600_000, 600_000, 600_000], 3),  # no more processes than files
])
def test_when_a_pool_pays(jobs: int, sizes: list[int], expected: int) -> None:
    assert workers(jobs, sizes) == expected


def test_a_pool_gives_the_same_outcomes_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_files(tmp_path / "inv", 6)
    for n, path in enumerate(paths):  # an alias: the event parser reads these, so workers do
        path.write_text(ANCHORED.format(n=n))
    (tmp_path / "inv" / "f3.yaml").write_text("kind: Facility\nkind: Facility\n")  # a duplicate key
    (tmp_path / "inv" / "f4.yaml").unlink()  # gone between listing and reading
    monkeypatch.setattr(reading, "POOL_MIN_BYTES", 0)
    pools: list[int] = []
    real: Callable[..., object] = reading.ProcessPoolExecutor

    def counting(count: int, **kwargs: object) -> object:
        pools.append(count)
        return real(count, **kwargs)

    monkeypatch.setattr(reading, "ProcessPoolExecutor", counting)
    parallel = read_all(paths, ReadOptions(jobs=3, cache_dir=tmp_path / "cache"))
    assert pools == [2]  # two workers, and this process
    serial = read_all(paths, ReadOptions(jobs=1))
    assert [type(o) for o in parallel] == [list, list, list, YamlProblem, FileNotFoundError, list]
    assert [o for o in parallel if isinstance(o, list)] == [o for o in serial if isinstance(o, list)]
    problem = parallel[3]
    assert isinstance(problem, YamlProblem) and problem.message.startswith("duplicate key 'kind'")
    # What the workers parsed was cached: read again, nothing is parsed.
    assert read_all(paths, ReadOptions(jobs=3, cache_dir=tmp_path / "cache"))[0] == serial[0]
    assert pools == [2]


def test_default_jobs_is_at_least_one() -> None:
    assert reading.default_jobs() >= 1


def test_files_the_fast_path_takes_stay_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Decoding what a worker sends back costs about what the fast path costs.
    paths = write_files(tmp_path / "inv", 6)
    monkeypatch.setattr(reading, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(reading, "ProcessPoolExecutor", lambda *a, **k: pytest.fail("no pool wanted"))
    assert read_all(paths, ReadOptions(jobs=3)) == read_all(paths, ReadOptions(jobs=1))


def test_a_file_is_read_once_and_its_entry_is_of_the_bytes_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parsed from the bytes its key was made of: no second read, and no window
    # in which the file could change between hashing and parsing.
    paths = write_files(tmp_path / "inv", 3)
    reads: list[str] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        # The inventory files only: the cache's salt reads the built-in knowledge
        # files once per process, in whichever test comes first.
        if self.parent == tmp_path / "inv":
            reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    cold = read_all(paths, ReadOptions(cache_dir=tmp_path / "cache"))
    assert sorted(reads) == ["f0.yaml", "f1.yaml", "f2.yaml"]
    assert read_all(paths, ReadOptions(cache_dir=tmp_path / "cache")) == cold
