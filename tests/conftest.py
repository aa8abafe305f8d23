"""Shared helpers: run the CLI in-process and write small inventories."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from checker.cli import main
from tests.gitrepo import repo  # noqa: F401  (a fixture: a git repository for diff tests)
from tests.helpers import write_file

FIXTURES = Path(__file__).parent / "fixtures"
MINIMAL = FIXTURES / "minimal"
AS_OF = ("--as-of", "2027-01-15")


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        """Output lines without the text format's "findings by rule" block (see `by_rule`):
        tests of findings assert the finding lines and the verdict line exactly."""
        lines = self.out.splitlines()
        if "findings by rule:" not in lines:
            return lines
        start = lines.index("findings by rule:") - 1  # the blank line before it
        return lines[:start] + lines[-1:]

    @property
    def by_rule(self) -> list[str]:
        lines = self.out.splitlines()
        return lines[lines.index("findings by rule:") + 1 : -1] if "findings by rule:" in lines else []


def summary(error: int = 0, warning: int = 0, info: int = 0, waived: int = 0, verdict: str = "fail") -> str:
    """The text formatter's last line."""
    def n(count: int, word: str) -> str:
        return f"{count} {word}" if count == 1 or word == "info" else f"{count} {word}s"

    return (f"checker: {n(error, 'error')}, {n(warning, 'warning')}, {n(info, 'info')}, "
            f"{waived} waived: {verdict}")


CliRunner = Callable[..., Run]


@pytest.fixture(autouse=True, scope="session")
def _no_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite never reads or writes the user's cache: audits run with no cache,
    and tests of the cache give --cache-dir (or a Cache) in their own tmp_path. No
    command is sent to a resident process the user started (tests/test_resident.py
    starts its own)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CHECKER_NO_CACHE", "1")
        env.setenv("CHECKER_NO_RESIDENT", "1")
        env.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        env.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))  # the cache's keys
        env.delenv("CHECKER_CACHE_DIR", raising=False)
        yield


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CliRunner:
    """`cli("audit", ...)` -> Run. main() returns the exit code for every outcome, usage errors,
    --help and --version included: a SystemExit escaping it fails the test."""

    def run(*argv: str) -> Run:
        code = main(list(argv))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def in_fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES)
    return FIXTURES


Writer = Callable[..., Path]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Writer:
    """Work in tmp_path: `write("bad.yaml", text, minimal=("facility",))` writes a dedented file
    (or bytes as they are) and copies the named files of the minimal fixture beside it."""
    monkeypatch.chdir(tmp_path)

    def write(name: str, content: str | bytes, *, minimal: tuple[str, ...] = ()) -> Path:
        for part in minimal:
            shutil.copy(MINIMAL / f"{part}.yaml", tmp_path / f"{part}.yaml")
        return write_file(tmp_path / name, content)

    return write


# The golden fixture: a waived 2N overload, an nbd-support warning and an
# expiring waiver, so every format shows every severity and a waived finding.
GOLDEN_ARGS = ("overload", "waivers/expiring.yaml", *AS_OF)


@pytest.fixture
def golden_run(cli: CliRunner, in_fixtures: Path) -> Callable[[str], Run]:
    """`golden_run("sarif")` -> the CLI run of the golden fixture in that format."""
    return lambda fmt: cli("audit", *GOLDEN_ARGS, "--format", fmt)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files parsed in this process (not read from the cache)."""
    from checker.load import reading
    from checker.source.fastpath import Trees
    from checker.source.reader import read

    names: list[str] = []

    def counting(path: Path, data: bytes | None = None, trees: Trees | None = None) -> object:
        names.append(path.name)
        return read(path, data, trees)

    monkeypatch.setattr(reading, "read", counting)
    return names
