"""The built wheel carries rules/ and templates/ and works from any directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A wheel built and installed (about 14 s): with the other package installs, in
# CI's `make test-slow`, not in every `make test`.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(ROOT)],
        check=True,
    )
    (built,) = out.glob("checker-*.whl")
    return built


def test_wheel_ships_rules_knowledge_and_templates(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "checker/_data/rules/power.yaml" in names
    assert "checker/evaluate/builtin_rulebook.json" in names  # the built-in rules compiled ahead
    assert "checker/_data/rules/knowledge/gpus.yaml" in names
    assert any(n.startswith("checker/_data/templates/") for n in names)


def test_installed_wheel_audits_a_copy_of_the_examples_from_elsewhere(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
    )
    work = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "inventories", work / "inventories")
    script = (
        "import checker, sys; from checker.cli import main; "
        "print(checker.__file__); sys.exit(main(sys.argv[1:]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, "audit", "--as-of", "2027-01-15"],
        cwd=work,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    first, *rest = run.stdout.splitlines()
    assert first.startswith(str(site)), "the wheel's copy must be the one imported"
    assert run.returncode in (0, 1), run.stderr
    assert rest[-1].startswith("checker: ") and "inventories/sh1/" in run.stdout
