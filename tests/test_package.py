"""The package itself: `python -m checker`, and what importing it sets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.fleet import write


def _python(code: str, *args: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    run = subprocess.run(
        [sys.executable, "-c", code, *args], env=clean | env, capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


# The command line called in a process of its own, as a library caller does: Python ends it.
MAIN = "import sys; from checker.cli import main; sys.exit(main(sys.argv[1:]))"


def test_python_m_checker_is_the_command() -> None:
    run = subprocess.run([sys.executable, "-m", "checker", "--version"], capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "checker 0.1.0")


@pytest.mark.parametrize("args", [["--help"], ["rules", "list"], ["audit", "--format", "xml"]])
def test_the_command_flushes_what_it_wrote_before_it_ends(args: list[str]) -> None:
    """`checker` ends the process without Python's own teardown (cli.run), which
    would flush a buffered stdout (argparse's help is printed, never flushed)."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    command = [sys.executable, "-m", "checker", *args]
    run = subprocess.run(command, capture_output=True, text=True, env=buffered)
    inside = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=buffered)
    assert (run.returncode, run.stdout, run.stderr) == (inside.returncode, inside.stdout, inside.stderr)
    assert run.stdout or run.stderr


READ = "import checker, numpy, os; print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['MKL_NUM_THREADS'])"


@pytest.mark.parametrize(("given", "seen"), [({}, "1 1"), ({"OPENBLAS_NUM_THREADS": "4"}, "4 1")])
def test_numpys_blas_pool_is_one_thread_unless_the_user_says(given: dict[str, str], seen: str) -> None:
    assert _python(READ, **given) == seen


THREADS = "import checker, numpy, os; print(len(os.listdir('/proc/self/task')))"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc")
def test_importing_numpy_through_checker_starts_no_thread() -> None:
    assert _python(THREADS) == "1"
    if (os.cpu_count() or 1) > 1:  # the pool it spares: one thread per core
        assert int(_python(THREADS, OPENBLAS_NUM_THREADS=str(os.cpu_count()))) > 1


def test_the_command_writes_every_byte_and_its_exit_code(tmp_path: Path) -> None:
    """`checker` ends without tearing the interpreter down (cli.run): what it
    wrote still reaches a pipe whole (3 MB, far past a pipe's buffer), and the
    exit code is main()'s."""
    write(2000, tmp_path / "fleet")
    args = ["audit", str(tmp_path / "fleet"), "--as-of", "2027-01-15", "--format", "json", "--no-cache"]
    run = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, check=False)
    inside = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, check=False)
    assert run.returncode == inside.returncode == 1 and run.stderr == inside.stderr == b""
    assert len(run.stdout) > 1_000_000 and run.stdout == inside.stdout
    assert json.loads(run.stdout)["verdict"] == "fail"


LAZY = """
import gc, io, sys
from checker.cli import main
heavy = ("numpy", "pydantic", "jinja2", "yaml", "ryml", "durable", "checker.audit", "checker.load.models")
print(sorted(m for m in heavy if m in sys.modules))
# Where each collection starts: the frame whose allocation set it off.
where = []
gc.callbacks.append(lambda phase, info: phase == "start" and where.append(sys._getframe(1).f_code.co_name))
sys.stdout, out = io.StringIO(), sys.stdout
code = main(["audit", sys.argv[1], "--as-of", "2027-01-15", "--format", "text:-"])
sys.stdout = out
print(code, where)
print(sorted(m for m in sys.modules if m.startswith(("checker.render.", "checker.importers."))))
"""


def test_a_command_imports_what_it_runs_with_the_collector_paused() -> None:
    """Importing the command line imports no stage; an audit then imports its
    stages (parsing `--format` the first of them) and one format, with the
    cycle collector paused throughout: a pass would find nothing to free."""
    minimal = str(Path(__file__).parent / "fixtures" / "minimal")
    heavy, counts, modules = _python(LAZY, minimal).splitlines()
    assert heavy == "[]"
    # The fixture passes; one collection, set off as the pause ends (gc.enable).
    assert counts == "0 ['__exit__']"
    assert modules == str(["checker.render.context", "checker.render.groups", "checker.render.output",
                           "checker.render.step_summary", "checker.render.text"])


ENDING = """
import gc, os, sys
from checker import cli
from checker.core import perf
where = []
gc.callbacks.append(lambda phase, info: phase == "start" and where.append(sys._getframe(1).f_code.co_name))
ends = os._exit
def ended(code):
    held = [type(value).__name__ for value in perf._kept or ()]
    print(code, where, gc.isenabled(), held, file=sys.stderr, flush=True)
    ends(code)
os._exit = ended
sys.argv = ["checker", "audit", sys.argv[1], "--as-of", "2027-01-15", "--quiet"]
cli.run()
"""


def test_the_command_ends_without_collecting_or_freeing_what_the_audit_built() -> None:
    """cli.run ends the process itself: the collector stays paused to the end (no
    last pass, as main() makes when its pause ends: above) and the audit's inventory and result
    are held to the end, not freed object by object (checker.core.perf.ending_process)."""
    minimal = str(Path(__file__).parent / "fixtures" / "minimal")
    run = subprocess.run([sys.executable, "-c", ENDING, minimal], capture_output=True, text=True, check=False)
    assert (run.returncode, run.stderr.splitlines()[-1]) == (0, "0 [] False ['Inventory', 'AuditResult']")


def test_a_library_call_keeps_nothing() -> None:
    """main(argv) in a process that goes on: what the audit built is freed as it returns."""
    code = "import sys; from checker.cli import main; from checker.core import perf; main(sys.argv[1:]); " \
        "print(perf._kept)"
    minimal = str(Path(__file__).parent / "fixtures" / "minimal")
    assert _python(code, "audit", minimal, "--as-of", "2027-01-15", "--quiet").splitlines()[-1] == "None"


BROKEN = (
    "import sys; sys.modules['checker._vendor.durable_rules_engine'] = None; "  # its import now fails
    "from checker.__main__ import main; sys.exit(main())"
)


@pytest.mark.parametrize(
    ("env", "repair"),
    [
        ({}, f"{sys.executable} -m pip install --force-reinstall --no-cache-dir "),
        ({"PRE_COMMIT": "1"}, "pre-commit clean"),
    ],
)
def test_a_broken_install_exits_3_with_the_command_that_repairs_it(env: dict[str, str], repair: str) -> None:
    """Not 1 (the findings code) with a traceback: a compiled module that does not load."""
    clean = {k: v for k, v in os.environ.items() if k != "PRE_COMMIT"}
    command = [sys.executable, "-c", BROKEN, "audit"]
    run = subprocess.run(command, env=clean | env, capture_output=True, text=True, check=False)
    assert (run.returncode, run.stdout) == (3, "")
    (line,) = run.stderr.splitlines()
    assert line.startswith(
        "checker: this installation is broken (ModuleNotFoundError: import of"
        " checker._vendor.durable_rules_engine halted; None in sys.modules); reinstall it: " + repair
    ), line
