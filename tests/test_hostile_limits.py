"""Work that grows with the input: linear, not with its square (issue 17, "Resources")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.rules_test import write_rules
from benchmarks.waivers import audit_waivers, waivers_and_findings
from checker.evaluate import ruletest
from checker.evaluate.rulebook import load_rulebook
from tests.conftest import CliRunner


def _rules(folder: Path, count: int) -> Path:
    folder.mkdir()
    write_rules(folder, count)  # the benchmark's own generated rules
    return folder


def test_rules_test_matches_each_example_against_its_own_group_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3,000 rules once took 3.4 GB: every example went to every rule. Now the
    # engine is asked rules x examples of one group at a time: linear in rules.
    book = load_rulebook([_rules(tmp_path / "r", 350)], builtin=False)
    offered: list[int] = []
    real = ruletest.match

    def counting(rules: Any, facts: Any) -> Any:
        offered.append(len(rules) * len(facts))
        return real(rules, facts)

    monkeypatch.setattr(ruletest, "match", counting)
    report, ok = ruletest.run_rule_tests(book.rules)
    assert ok, report
    assert report.endswith("350 passed, 0 failed\n")
    assert sum(offered) <= 350 * 2 * ruletest.GROUP  # not 350 x 700


def test_a_rule_that_fires_on_another_rules_example_is_not_confused(tmp_path: Path, cli: CliRunner) -> None:
    # Rule 0's pass example (memory_gb: 0) ... and rule 5's fail example (6) would make
    # rule 0 fire: only a rule's own examples count for it.
    run = cli("rules", "test", str(_rules(tmp_path / "r", 10)))
    assert run.code == 0 and run.out.endswith("10 passed, 0 failed\n"), run.out


def _counted(function: Any, calls: list[int]) -> Any:
    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return function(*args, **kwargs)

    return counting


DEPTH = 500  # deeper, shutil.rmtree (pytest's clean-up of old runs) reaches its recursion limit


def test_a_deep_folder_is_walked_in_work_linear_in_its_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder 1,000 deep once took a real path per folder (a lookup per level above
    # it: 500 x 250 on average here) and a copy of its ancestors: quadratic. Now a
    # stat per folder and entry, and one real path per file.
    import os

    from checker.load.build import find_files

    monkeypatch.chdir(tmp_path)
    for _ in range(DEPTH):
        os.mkdir("d")
        os.chdir("d")
    Path("w.yaml").write_text("kind: Waivers\nwaivers: []\n")
    os.chdir(tmp_path)
    looked_up = [0]
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name in ("stat", "lstat"):  # realpath lstats each level; pathlib stats
                patch.setattr(os, name, _counted(getattr(os, name), looked_up))
            files, problems = find_files([Path("d")])
        assert (len(files), problems) == (1, [])
        assert files[0].parts.count("d") == DEPTH
        assert looked_up[0] <= 6 * DEPTH, looked_up  # was over DEPTH ** 2 / 2
    finally:  # rmtree recurses once per level: pytest would fail to remove it later
        os.chdir(Path("d/" * (DEPTH - 1) + "d"))
        os.remove("w.yaml")
        for _ in range(DEPTH):
            os.chdir("..")
            os.rmdir("d")
        os.chdir(tmp_path)


def test_waivers_are_matched_in_work_linear_in_waivers_and_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each waiver tried on each finding, to waive it and again to count what it
    # waived for the report: thousands of each took minutes. Now an index looks
    # exact names up; the fnmatch calls left are a waiver's own (is its rule known?).
    import fnmatch

    calls = [0]
    monkeypatch.setattr(fnmatch, "fnmatchcase", _counted(fnmatch.fnmatchcase, calls))

    def work(n: int) -> int:
        calls[0] = 0
        audit_waivers(*waivers_and_findings(n))  # checks every finding waived, every waiver used once
        return calls[0]

    small, large = work(200), work(2_000)
    assert large <= 12 * small, (small, large)  # each against each: 100x
