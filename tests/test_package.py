"""The package itself: `python -m checker`, and what importing it sets."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _python(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    run = subprocess.run(
        [sys.executable, "-c", code], env=clean | env, capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


def test_python_m_checker_is_the_command() -> None:
    run = subprocess.run([sys.executable, "-m", "checker", "--version"], capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "checker 0.1.0")


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
