"""Progress: one escaped line on a terminal after a delay; nothing in CI logs or pipes."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from checker.cli import main
from checker.core import progress
from checker.core.progress import Progress, State, shown, wanted
from checker.core.terminal import SafeStream
from tests.conftest import AS_OF, FIXTURES


class Terminal(io.StringIO):
    """What a terminal was sent; isatty() as a terminal answers."""

    def isatty(self) -> bool:
        return True


CLEAR = "\r\x1b[K"


@pytest.mark.parametrize(("state", "line"), [
    (State(), "checker: starting"),
    (State("reading", 3, 28, 0, "pod-03.yaml"), "checker: reading, 3/28 files (pod-03.yaml)"),
    (State("checking", 28, 28, 10_000), "checker: checking, 28/28 files, 10,000 servers"),
])
def test_the_line(state: State, line: str) -> None:
    assert state.line() == line


@pytest.mark.parametrize(("tty", "environ", "expected"), [
    (True, {}, True),
    (True, {"CI": "true"}, False),  # GitHub Actions, GitLab CI and others set CI
    (True, {"TERM": "dumb"}, False),  # no cursor control
    (False, {}, False),  # piped or redirected
])
def test_wanted_only_by_a_person_at_a_terminal(tty: bool, environ: dict[str, str], expected: bool) -> None:
    stream = Terminal() if tty else io.StringIO()
    assert wanted(stream, environ) is expected


def test_a_file_name_cannot_reach_the_terminal_raw() -> None:
    term = Terminal()
    with Progress(SafeStream(term), delay_s=0, interval_s=0.01) as shown_now:
        shown_now.update(stage="reading", files_done=1, files_total=2, file="evil\x1b]0;owned\x07.yaml")
        drawn = threading.Event()
        real = shown_now.out.write_status

        def spy(text: str) -> None:
            real(text)
            if "evil" in text:
                drawn.set()

        shown_now.out.write_status = spy  # type: ignore[method-assign]
        assert drawn.wait(5)
    out = term.getvalue()
    assert "checker: reading, 1/2 files (evil\\x1b]0;owned\\x07.yaml)" in out
    assert "\x1b]" not in out and "\x07" not in out
    assert out.endswith(CLEAR)  # the report starts on a clean line


def test_a_quick_run_draws_nothing() -> None:
    term = Terminal()
    with Progress(SafeStream(term), delay_s=60) as shown_now:
        shown_now.update(stage="reading")
    assert term.getvalue() == ""


@pytest.mark.parametrize("environ", [{"CI": "1"}, {}], ids=["ci", "piped"])
def test_nothing_in_ci_logs_or_pipes(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 0)
    stream = SafeStream(Terminal() if environ else io.StringIO())
    with shown(stream, environ):
        progress.stage("reading")
        assert progress._CURRENT.get() is None  # nothing draws: updates go nowhere
    assert stream.getvalue() == ""


def _audit_on(stderr: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(progress, "DELAY_S", 0)
    monkeypatch.setattr(progress, "INTERVAL_S", 0)
    monkeypatch.setattr("sys.stderr", stderr)
    monkeypatch.chdir(FIXTURES)
    assert main(["audit", "minimal", *AS_OF]) == 0
    return stderr.getvalue()


def test_an_audit_shows_progress_at_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    err = _audit_on(Terminal(), monkeypatch)
    assert err.startswith("\rchecker: ") and err.endswith(CLEAR)
    assert "\n" not in err
    assert capsys.readouterr().out.endswith(": pass\n")


@pytest.mark.parametrize("tty", [True, False], ids=["ci-terminal", "piped"])
def test_an_audit_in_ci_or_piped_shows_none(monkeypatch: pytest.MonkeyPatch, tty: bool) -> None:
    if tty:
        monkeypatch.setenv("CI", "true")
    else:
        monkeypatch.delenv("CI", raising=False)
    assert _audit_on(Terminal() if tty else io.StringIO(), monkeypatch) == ""


def test_suspended_stops_the_drawing_thread() -> None:
    with Progress(SafeStream(Terminal()), delay_s=0, interval_s=0.01) as shown_now:
        assert any(t.name == "checker-progress" for t in threading.enumerate())
        with shown_now.suspended():
            assert not any(t.name == "checker-progress" for t in threading.enumerate())
        assert any(t.name == "checker-progress" for t in threading.enumerate())


def test_loading_reports_its_stages(tmp_path: Path) -> None:
    from checker.load.build import load

    seen: list[State] = []
    term = SafeStream(Terminal())
    shown_now = Progress(term, delay_s=60)
    real = shown_now.update

    def record(**changes: str | int) -> None:
        real(**changes)
        seen.append(shown_now.state)

    shown_now.update = record  # type: ignore[method-assign]
    token = progress._CURRENT.set(shown_now)
    try:
        load([FIXTURES / "minimal"])
    finally:
        progress._CURRENT.reset(token)
    stages = [s.stage for s in seen]
    assert stages[0] == "reading" and stages[-1] == "checking"
    assert "validating" in stages
    assert seen[-1].servers >= 1 and seen[-1].files_done == seen[-1].files_total > 0
