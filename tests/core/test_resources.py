from __future__ import annotations

from checker.core.resources import knowledge_dir, rules_dir, templates_dir


def test_data_folders_exist_in_the_checkout() -> None:
    assert (rules_dir() / "power.yaml").is_file()
    assert (knowledge_dir() / "gpus.yaml").is_file()
    assert (templates_dir() / "rules.md.j2").is_file()
