from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from checker.core.errors import UserError
from checker.evaluate import rulebook
from checker.evaluate.rulebook import Rulebook, flatten, load_rulebook, matches, nest
from checker.load import cache
from checker.load.cache import open_cache

VALID = """\
rules:
  - id: acme.big-rack
    title: Big racks
    category: power
    severity: warning
    on: rack
    when: load_kw > 30
    message: "rack {{ name }} draws {{ load_kw }} kW"
    remediation: Split it.
    examples:
      fail: [{name: A, load_kw: 31}]
      pass: [{name: A, load_kw: 30}]
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "r.yaml").write_text(text)
    return tmp_path


def test_builtin_rulebook_loads_sorted_with_unique_ids() -> None:
    book = load_rulebook()
    ids = book.ids()
    assert ids == sorted(set(ids)) and "power.rack-capacity" in ids


def test_custom_folder_adds_rules(tmp_path: Path) -> None:
    book = load_rulebook([_write(tmp_path, VALID)])
    rule = book.get("acme.big-rack")
    assert rule is not None and not rule.meta.builtin and rule.src.line == 2
    assert rule.render({"name": "A", "load_kw": 31}) == "rack A draws 31 kW"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("when: load_kw > 30", "when: __import__('os')", ":7:"),
        ("when: load_kw > 30", "when: (lambda: 1)()", ":7:"),
        ("when: load_kw > 30", "when: lod_kw > 30", "(did you mean 'load_kw'?)"),
        ("category: power", "category: powr", "r.yaml:4:15: "),
        ("on: rack", "on: racks", "unknown fact kind 'racks'"),
        ("severity: warning", "severity: fatal", "r.yaml:5:15: "),
        ('message: "rack {{ name }} draws {{ load_kw }} kW"', 'message: "{{ name "', "bad message template"),
        (
            'message: "rack {{ name }} draws {{ load_kw }} kW"',
            'message: "{{ nmae }}"',
            "'nmae' is not a field",
        ),
        ("    examples:", "    locate: nope\n    examples:", "locate 'nope'"),
        ("fail: [{name: A, load_kw: 31}]", "fail: [{nam: A}]", "example: 'nam' is not a field"),
        ("id: acme.big-rack", "id: Big Rack", "r.yaml:2:9: "),
        ("    remediation: Split it.\n", "", "missing required field 'rules.0.remediation'"),
    ],
)
def test_invalid_rules_name_file_and_line(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in VALID
    with pytest.raises(UserError) as exc:
        load_rulebook([_write(tmp_path, VALID.replace(old, new))], builtin=False)
    text = "\n".join(exc.value.lines)
    assert "r.yaml:" in text and expected in text


@pytest.mark.parametrize(
    ("example", "where", "says"),
    [
        # A quoted number compares as text in the engine: "31" > 30 would not hold.
        ("{name: A, load_kw: '31'}", "11:33", "load_kw is '31', but rack facts hold a number there"),
        ("{name: A, load_kw: true}", "11:33", "load_kw is true, but rack facts hold a number there"),
        ("{name: 7, load_kw: 31}", "11:21", "name is 7, but rack facts hold a string there"),
        # YAML 1.1 reads an unquoted yes as true.
        ("{name: A, load_kw: 31, cooling: yes}", "11:46", "cooling is true, but rack facts hold a string"
         " there"),
    ],
)
def test_example_values_have_their_fields_types(tmp_path: Path, example: str, where: str, says: str) -> None:
    text = VALID.replace("fail: [{name: A, load_kw: 31}]", f"fail: [{example}]")
    with pytest.raises(UserError) as exc:
        load_rulebook([_write(tmp_path, text)], builtin=False)
    file = (tmp_path / "r.yaml").as_posix()
    assert list(exc.value.lines) == [f"{file}:{where}: rule acme.big-rack example: {says}"]


def test_an_example_may_leave_a_field_empty_and_write_a_date(tmp_path: Path) -> None:
    server = VALID.replace("on: rack", "on: server").replace("when: load_kw > 30", "when: power_w.max > 30")
    server = server.replace('"rack {{ name }} draws {{ load_kw }} kW"', '"{{ name }}"')
    fail = "fail: [{name: A, power_w: {max: 31}, support: {until: 2027-01-01}}]"
    server = server.replace("fail: [{name: A, load_kw: 31}]", fail)
    server = server.replace("pass: [{name: A, load_kw: 30}]", "pass: [{name: A, power_w: {max: null}}]")
    assert [r.id for r in load_rulebook([_write(tmp_path, server)], builtin=False).rules] == ["acme.big-rack"]


def test_expression_error_points_into_the_when_line(tmp_path: Path) -> None:
    with pytest.raises(UserError) as exc:
        load_rulebook(
            [_write(tmp_path, VALID.replace("load_kw > 30", "load_kw > 30 and lod_kw > 1"))], builtin=False
        )
    (line,) = exc.value.lines
    assert line.startswith(f"{tmp_path / 'r.yaml'}:7:28: rule acme.big-rack: ") or ":7:" in line


def test_a_folder_named_twice_is_read_once(tmp_path: Path) -> None:
    folder = _write(tmp_path, VALID)
    assert load_rulebook([folder, Path(str(folder) + "/")], builtin=False).ids() == ["acme.big-rack"]


def test_duplicate_rule_ids_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID)
    with pytest.raises(UserError, match="already defined"):
        load_rulebook([tmp_path], builtin=False)


def test_missing_rule_folder_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="rule folder not found"):
        load_rulebook([tmp_path / "nope"])


@pytest.mark.parametrize(
    ("rule_id", "globs", "expected"),
    [
        ("power.rack-capacity", ["power.*"], True),
        ("power.rack-capacity", ["*"], True),
        ("support.missing", ["power.*"], False),
        ("support.missing", [], False),
    ],
)
def test_glob_selection(rule_id: str, globs: list[str], expected: bool) -> None:
    assert matches(rule_id, globs) is expected


def test_nest_and_flatten_round_trip() -> None:
    flat = {"name": "s", "support.level": "nbd", "power_w.max": 10}
    assert flatten(nest(flat)) == flat
    assert nest(flat)["support"] == {"level": "nbd"}


def test_a_rule_file_with_tags_still_loads(tmp_path: Path) -> None:
    """`tags` is read by nothing, but rule files have been allowed to carry it
    since the first rulebook: removing the field would fail them (docs/architecture.md)."""
    text = VALID.replace("remediation: Split it.\n", "remediation: Split it.\n    tags: [power, q3]\n")
    assert "tags:" in text
    assert load_rulebook([_write(tmp_path, text)], builtin=False).ids() == ["acme.big-rack"]


def test_missing_message_field_renders_unknown(tmp_path: Path) -> None:
    rule = load_rulebook([_write(tmp_path, VALID)], builtin=False).get("acme.big-rack")
    assert rule is not None
    assert rule.render({"name": "A"}) == "rack A draws unknown kW"


def test_missing_parent_of_a_message_field_renders_unknown() -> None:
    rule = load_rulebook().get("workload-fit.fabric")
    assert rule is not None
    values = {"name": "s1", "workload": "llm", "workload_servers": 4}  # no network at all
    assert "over unknown at unknown Gb/s" in rule.render(values)


# ---------------------------------------------------------------- the requirements map
REQUIREMENTS = Path(__file__).resolve().parents[2] / "docs" / "requirements.md"


def _requirement_rows() -> dict[int, str]:
    rows = re.findall(r'^\| <a id="(\d+)"></a>(\d+) \|(.*)$', REQUIREMENTS.read_text(encoding="utf-8"), re.M)
    assert all(a == b for a, b, _ in rows)
    return {int(a): rest for a, _, rest in rows}


def test_requirements_map_has_one_row_per_requirement_in_order() -> None:
    assert list(_requirement_rows()) == list(range(1, 23))


def test_every_rule_id_in_the_requirements_map_exists() -> None:
    known = set(load_rulebook().ids())
    cited = {i for row in _requirement_rows().values() for i in re.findall(r"`([a-z-]+\.[a-z0-9.-]+)`", row)}
    cited = {i for i in cited if not i.startswith(("rules/", "checker.")) and not i.endswith(".yaml")}
    assert cited and cited <= known, sorted(cited - known)


def test_builtin_rules_cite_requirements_by_their_place_in_the_map() -> None:
    rows = _requirement_rows()
    for rule in load_rulebook().rules:
        for ref in rule.rule.references:
            assert not re.search(r"seed requirement|S[12] ?§", ref), (rule.id, ref)
            if ref.startswith("docs/requirements.md"):
                assert int(ref.removeprefix("docs/requirements.md#")) in rows, (rule.id, ref)


def test_builtin_remediations_are_plain_text() -> None:
    # Only `message` is a template; a remediation is shown as written.
    for rule in load_rulebook().rules:
        assert "{{" not in rule.rule.remediation and "{%" not in rule.rule.remediation, rule.id


BUILTIN = load_rulebook()


@pytest.mark.parametrize("rule_id", BUILTIN.ids())
def test_builtin_messages_render_on_their_fail_examples(rule_id: str) -> None:
    rule = BUILTIN.get(rule_id)
    assert rule is not None
    for example in rule.rule.examples.fail:
        text = rule.render(flatten(example))
        assert text and "{{" not in text, (rule_id, text)
        # Built-in examples are complete facts, so the generated docs show whole messages.
        assert "unknown" not in text or "unknown" in rule_id, (rule_id, text)


def test_nest_keeps_the_first_of_a_field_and_its_subfields() -> None:
    assert nest({"gpu": 1, "gpu.a.b": 2, "x.y": 3, "x.z.w": 4}) == {"gpu": 1, "x": {"y": 3, "z": {"w": 4}}}


@pytest.mark.parametrize(
    "values",
    [
        {"gpu.model": "h100-pcie", "gpu.count": 8, "gpu.link": "pcie", "gpu.link_domain_gpus": 1},
        {"gpu.model": "h100-nvl", "gpu.link": "nvlink-bridge", "gpu.link_domain_assumed": True},
        {"gpu": "x", "gpu.count": 4, "gpu.link": None},  # a field and its subfields: the first wins
        {},
    ],
)
def test_a_message_nests_the_fields_its_fact_has(values: dict[str, object]) -> None:
    """The rule's split fields, nested as `nest` nests the fields the fact has
    (a None is a field it does not have: `is defined` in the template is false)."""
    rule = next(r for r in load_rulebook().rules if r.id == "workload-fit.nvlink")
    present = {k: values[k] for k in rule.message_fields if values.get(k) is not None}
    wanted = rulebook.render_message(rule.template, nest(present))
    assert rule.render(values) == wanted


def test_flatten_writes_dates_as_facts_hold_them() -> None:
    import datetime as dt

    assert flatten({"support": {"until": dt.date(2027, 1, 1)}}) == {"support.until": "2027-01-01"}


# ---------------------------------------------------------------- the cached rulebook
def _rules(tmp_path: Path, text: str) -> Path:
    (tmp_path / "rules").mkdir()
    return _write(tmp_path / "rules", text)


def _same_rules(a: Rulebook, b: Rulebook) -> None:
    assert a.ids() == b.ids() and a.metadata() == b.metadata()
    for x, y in zip(a.rules, b.rules, strict=True):
        assert (x.rule, x.file, x.when, x.template.names, x.message_fields) == (
            y.rule, y.file, y.when, y.template.names, y.message_fields
        ), x.id
        assert (x.src.line, x.src.column) == (y.src.line, y.src.column)
        for field in ("message", "when", "id"):
            for key in (True, False):
                assert x.src.locate([field], key=key) == y.src.locate([field], key=key), (x.id, field)
        for example in x.rule.examples.fail:
            assert x.render(flatten(example)) == y.render(flatten(example)), x.id


def test_a_rulebook_from_the_cache_is_the_compiled_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _rules(tmp_path, VALID)
    uncached = load_rulebook([folder])
    compiled = load_rulebook([folder], cache_dir=tmp_path / "cache")
    monkeypatch.setattr(rulebook, "_compiled", _never)  # read back, not compiled again
    cached = load_rulebook([folder], cache_dir=tmp_path / "cache")
    assert all(r.template._code is None for r in cached.rules)  # generated when first rendered
    _same_rules(compiled, cached)
    _same_rules(uncached, cached)


def _never(*args: object) -> Rulebook:
    raise AssertionError("compiled again")


def test_a_changed_rule_file_is_compiled_again(tmp_path: Path) -> None:
    folder = _rules(tmp_path, VALID)
    load_rulebook([folder], builtin=False, cache_dir=tmp_path / "cache")
    (folder / "r.yaml").write_text(VALID.replace("draws {{ load_kw }} kW", "uses {{ load_kw }} kW"))
    rule = load_rulebook([folder], builtin=False, cache_dir=tmp_path / "cache").get("acme.big-rack")
    assert rule is not None and rule.render({"name": "A", "load_kw": 31}) == "rack A uses 31 kW"
    assert len(list((tmp_path / "cache" / "files").iterdir())) == 2


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # a flipped bit: the signature no longer holds
        lambda data: data[: len(data) // 2],
        lambda data: b"",
    ],
)
def test_a_damaged_rulebook_entry_is_compiled_again(
    tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    folder = _rules(tmp_path, VALID)
    first = load_rulebook([folder], cache_dir=tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / "files").iterdir()
    entry.write_bytes(damage(entry.read_bytes()))
    _same_rules(first, load_rulebook([folder], cache_dir=tmp_path / "cache"))


@pytest.mark.parametrize(
    "body",
    [
        ("rulebook", 2, []),  # another format
        ("rulebook", rulebook.BOOK_FORMAT, [("not", "a", "rule")]),
        ("rulebook", rulebook.BOOK_FORMAT, "rules"),
        ["rulebook"],
    ],
)
def test_a_signed_entry_that_is_no_rulebook_is_compiled_again(tmp_path: Path, body: object) -> None:
    folder = _rules(tmp_path, VALID)
    first = load_rulebook([folder], builtin=False, cache_dir=tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / "files").iterdir()
    store = open_cache(tmp_path / "cache")
    assert store is not None
    store.put(entry.name, cache.pack(body))  # signed with the folder's key: only its format is wrong
    _same_rules(first, load_rulebook([folder], builtin=False, cache_dir=tmp_path / "cache"))


def test_a_rulebook_with_errors_is_not_kept(tmp_path: Path) -> None:
    folder = _rules(tmp_path, VALID.replace("when: load_kw > 30", "when: lod_kw > 30"))
    for _ in range(2):
        with pytest.raises(UserError, match="did you mean 'load_kw'"):
            load_rulebook([folder], cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache" / "files").iterdir()) == []


def test_the_key_is_the_files_names_and_bytes_and_the_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.yaml"
    data = VALID.encode()
    key = rulebook._book_key([(path, data)])
    assert rulebook._book_key([(path, data + b"\n")]) != key
    assert rulebook._book_key([(tmp_path / "s.yaml", data)]) != key
    monkeypatch.setattr(rulebook.metadata, "version", lambda name: "0")  # another Jinja
    rulebook.code_salt.cache_clear()
    try:
        assert rulebook._book_key([(path, data)]) != key
    finally:
        monkeypatch.undo()
        rulebook.code_salt.cache_clear()
    assert rulebook._book_key([(path, data)]) == key


CACHED_AUDIT = """
import sys
from checker.cli import main
code = main(sys.argv[1:])
print(code, "jinja2" in sys.modules, file=sys.stderr)
"""


def test_an_audit_with_the_rulebook_cached_imports_no_jinja_until_a_message_is_shown(tmp_path: Path) -> None:
    """Audits read the compiled rulebook (the built-in rules compiled ahead, the
    cache's after the first): a passing audit never imports Jinja, even the first;
    one with findings generates their messages' code, with the same bytes."""
    minimal = Path(__file__).resolve().parents[1] / "fixtures" / "minimal"
    fleet = Path(__file__).resolve().parents[1] / "fixtures" / "fleet"
    env = {k: v for k, v in os.environ.items() if k != "CHECKER_NO_CACHE"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")

    def audit(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        args = ["audit", str(folder), "--as-of", "2027-01-15", *extra]
        run = [sys.executable, "-c", CACHED_AUDIT, *args]
        return subprocess.run(run, capture_output=True, text=True, env=env, check=False)

    cached = ("--cache-dir", str(tmp_path / "cache"))
    first, second = audit(minimal, *cached), audit(minimal, *cached)
    assert first.stdout == second.stdout and (first.stderr, second.stderr) == ("0 False\n", "0 False\n")
    uncached, warm = audit(fleet, "--no-cache", "--format", "json"), audit(fleet, *cached, "--format", "json")
    assert warm.stdout == uncached.stdout and json.loads(warm.stdout)["findings"]
    assert "True" in warm.stderr
    assert audit(fleet, "--no-cache").stdout == audit(fleet, *cached).stdout
