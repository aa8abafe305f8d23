"""The rulebook: YAML rules validated with pydantic, `when` compiled for durable-rules.

A rule's metadata lives next to it (id, title, severity, category, rationale,
examples); `checker rules list/show`, `checker explain` and the docs read it.
Every problem names the rule file, line and column; none is a traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fnmatch
import functools
import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from checker.core.builtin import BUILTIN_CHECKS
from checker.core.carried import Carried
from checker.core.errors import UserError, at
from checker.core.findings import Category, Severity
from checker.core.resources import rules_dir
from checker.core.rulemeta import RuleMeta
from checker.core.suggest import did_you_mean
from checker.derive.facts import REGISTRY, FactKind
from checker.derive.knowledge import TABLE_KINDS, validate_document
from checker.evaluate.expr import CompiledWhen, ExprError, compile_when
from checker.evaluate.message import MessageError, MessageTemplate, render_message
from checker.load import cache
from checker.load.build import KINDS, discover, without_anchors
from checker.load.cache import open_cache
from checker.source.parse import Document, Src, scalar_position
from checker.source.reader import display_path, read_file, validate_lines

if TYPE_CHECKING:
    from checker.evaluate.sandbox import MessageEnvironment

# At most 200 characters, as names: an id is printed with every finding of the rule.
RuleId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+$", max_length=200)]


class _Strict(BaseModel):
    # Validators built at first use, as checker.load.models.Model.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class Examples(_Strict):
    fail: list[dict[str, Any]] = []
    pass_: list[dict[str, Any]] = Field(default=[], alias="pass")


class Rule(_Strict):
    id: RuleId
    title: Annotated[str, Field(min_length=1)]
    category: Category
    severity: Severity
    on: str
    when: Annotated[str, Field(min_length=1)]
    message: Annotated[str, Field(min_length=1)]
    remediation: Annotated[str, Field(min_length=1)]
    rationale: str | None = None
    locate: str | None = None
    references: list[str] = []
    # Read by nothing, but part of the rule file format since the first rulebook
    # (rule files are strict: an unknown key is an error). Dropping it would fail
    # every user rule file that has `tags:`; the format is only ever extended.
    tags: list[str] = []
    examples: Examples = Examples()


class RuleFile(_Strict):
    rules: list[Rule]


def _jinja() -> MessageEnvironment:
    """The messages' sandboxed environment (checker.evaluate.sandbox), imported when a
    message is first compiled or rendered: a rulebook from the cache that renders
    no message never imports Jinja."""
    from checker.evaluate.sandbox import environment

    return environment()


@dataclass(frozen=True)
class CompiledRule:
    rule: Rule
    file: str
    src: Src
    when: CompiledWhen
    template: MessageTemplate
    # The fact fields the message reads (all below the names it uses), in
    # field order: only these are nested for rendering.
    message_fields: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.rule.id

    @cached_property
    def locate_path(self) -> tuple[str, ...]:
        """The path its findings point at in their fact's source (`locate`); () : the entity."""
        return tuple(self.rule.locate.split(".")) if self.rule.locate else ()

    @cached_property
    def meta(self) -> RuleMeta:
        r = self.rule
        return RuleMeta(
            r.id,
            r.title,
            r.category,
            r.severity,
            r.remediation,
            r.rationale or "",
            tuple(r.references),
            r.on,
            r.when,
            f"{self.file}:{self.src.line}",
            tuple(r.examples.fail),
            tuple(r.examples.pass_),
        )

    @cached_property
    def _nesting(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """Each message field's parents and leaf, split once (`nest`, a field at a time,
        was half the cost of a message: 48 of 105 µs)."""
        return tuple(_split(k) for k in self.message_fields)

    def render(self, values: Mapping[str, Any], entity: str = "") -> str:
        """The message for one fact; a template that fails is this rule's error (exit 2)."""
        try:
            # One lookup a field (get, not `in` then [], on a fact's row).
            return render_message(self.template, _nested(self._nesting, map(values.get, self.message_fields)))
        except MessageError as exc:
            where = f" for {entity}" if entity else ""
            line, column = self.src.locate(["message"], key=False)
            message = f"rule {self.id}: message fails{where}: {exc}"
            raise UserError(at(self.file, line, column, message)) from None


def nest(values: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted fact fields as nested mappings, so templates write `{{ power_w.max }}`."""
    return _nested(tuple(map(_split, values)), values.values(), keep_none=True)


def _split(name: str) -> tuple[tuple[str, ...], str]:
    *parents, leaf = name.split(".")
    return tuple(parents), leaf


def _nested(
    plan: Sequence[tuple[tuple[str, ...], str]], values: Iterable[Any], *, keep_none: bool = False
) -> dict[str, Any]:
    """`nest` of the fields `plan` splits, with their `values` (in order; a None
    is a field the fact does not have, unless `keep_none`)."""
    out: dict[str, Any] = {}
    for (parents, leaf), value in zip(plan, values, strict=True):
        if value is None and not keep_none:
            continue
        node: Any = out
        for p in parents:
            node = node.setdefault(p, {}) if isinstance(node, dict) else None
        if isinstance(node, dict):  # `gpu` and `gpu.count` cannot both be there; the first wins
            node.setdefault(leaf, value)
    return out


def flatten(example: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Examples may be written nested (`support: {level: none}`) or dotted."""
    out: dict[str, Any] = {}
    for key, value in example.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            # Facts hold dates as ISO text: `until: 2027-01-01` unquoted means the same.
            out[name] = value.isoformat() if isinstance(value, dt.date) else value
    return out


_EXAMPLE_SCALARS = (str, int, float, bool, type(None))


def _check_example_values(
    kind: FactKind, example: Mapping[str, Any], errors: _Errors, path: list[str | int], what: str
) -> None:
    """Each value a scalar of its field's type: the engine compares a quoted
    number as text ("10" < "4"), so a mistyped example would pass or fail its
    `checker rules test` for the wrong reason."""
    types = kind.field_types()
    for name, value in flatten(example).items():
        if not isinstance(value, _EXAMPLE_SCALARS):
            got = "a list" if isinstance(value, list) else type(value).__name__
            message = f"{what}: {name} is {got}; a fact field is a number, string, boolean or date"
            errors.add([*path, *name.split(".")], message)
        elif name in types and value is not None and not _of_type(value, types[name]):
            shown = "true" if value is True else "false" if value is False else repr(value)
            message = f"{what}: {name} is {shown}, but {kind.name} facts hold a {types[name]} there"
            errors.add([*path, *name.split(".")], message)


def _of_type(value: Any, field_type: str) -> bool:
    if field_type == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if field_type == "boolean":
        return isinstance(value, bool)
    if field_type == "date":  # facts hold dates as ISO text (flatten writes a date so)
        return isinstance(value, str) and _is_iso_date(value)
    return isinstance(value, str)


def _is_iso_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


class _Errors:
    def __init__(self, file: str, src: Src, text: list[str]) -> None:
        self.file, self.src, self.text, self.lines = file, src, text, list[str]()

    def add(
        self,
        path: Sequence[str | int],
        message: str,
        *,
        key: bool = False,
        offset: tuple[int, int] | None = None,
    ) -> None:
        position = self.src.locate(path, key=key)
        if offset is not None:
            position = scalar_position(self.text, position, offset)
        self.lines.append(at(self.file, *position, message))


def _check_fields(
    kind: FactKind, names: Iterable[str], errors: _Errors, path: Sequence[str | int], what: str
) -> None:
    known = kind.field_types()
    for name in names:
        if name not in known:
            errors.add(
                path, f"{what}: '{name}' is not a field of {kind.name} facts{did_you_mean(name, known)}"
            )


def _compile(rule: Rule, index: int, file: str, src: Src, errors: _Errors) -> CompiledRule | None:
    base: list[str | int] = ["rules", index]
    if rule.category == "schema":  # it would make the exit code 2 and bypass --ignore
        errors.add([*base, "category"], f"rule {rule.id}: category schema is for the built-in input checks")
        return None
    kind = REGISTRY.get(rule.on)
    if kind is None:
        hint = did_you_mean(rule.on, REGISTRY)
        known = ", ".join(REGISTRY)
        errors.add([*base, "on"], f"rule {rule.id}: unknown fact kind '{rule.on}'{hint}; known: {known}")
        return None
    try:
        when = compile_when(rule.when, kind.field_types())
    except ExprError as exc:
        errors.add([*base, "when"], f"rule {rule.id}: {exc.message}", offset=(exc.line, exc.column))
        return None
    from jinja2 import TemplateSyntaxError

    try:
        template = _jinja().compile_message(rule.message)
        used = template.names
    except TemplateSyntaxError as exc:
        errors.add([*base, "message"], f"rule {rule.id}: bad message template: {exc.message}")
        return None
    except MessageError as exc:
        errors.add([*base, "message"], f"rule {rule.id}: bad message template: {exc}")
        return None
    except (RecursionError, MemoryError):  # Python's parser and compiler stop at some depth
        errors.add([*base, "message"], f"rule {rule.id}: bad message template: nested too deeply")
        return None
    tops = {f.name.split(".")[0] for f in kind.fields}
    _check_fields(kind, sorted(used - tops), errors, [*base, "message"], f"rule {rule.id} message")
    if rule.locate is not None and not kind.has_path(rule.locate):
        errors.add(
            [*base, "locate"],
            f"rule {rule.id}: locate '{rule.locate}' is not a field of a {kind.name} in the inventory",
        )
    for label, examples in (("fail", rule.examples.fail), ("pass", rule.examples.pass_)):
        for i, example in enumerate(examples):
            at_example: list[str | int] = [*base, "examples", label, i]
            _check_fields(kind, flatten(example), errors, at_example, f"rule {rule.id} example")
            _check_example_values(kind, example, errors, at_example, f"rule {rule.id} example")
    shown = tuple(f.name for f in kind.fields if f.name.split(".")[0] in used)
    return CompiledRule(rule, file, src.descend("rules", index), when, template, shown)


def _knowledge_kind(value: Any) -> str | None:
    """The kind of a knowledge document (a table's or the catalog's), which a
    rule folder may hold beside its rules (docs/knowledge.md); else None."""
    kind = value.get("kind") if isinstance(value, dict) and "rules" not in value else None
    if kind in TABLE_KINDS or (kind in KINDS and KINDS[kind].catalog):
        return str(kind)
    return None


def _misplaced(value: Any) -> str | None:
    """Why a document of an inventory kind is not rules, in one line that says
    where it belongs (rather than "unknown field 'kind'")."""
    kind = value.get("kind") if isinstance(value, dict) and "rules" not in value else None
    if kind in KINDS:
        return f"a {kind} document is an inventory, not rules: put it with the inventories"
    return None


def _knowledge_problems(kind: str, doc: Document, shown: str) -> list[str]:
    """A knowledge document validated by its kind's model, as far as it can be
    alone: the audit merges it with the built-in tables and checks the rest."""
    value = without_anchors(doc.value)
    if kind in TABLE_KINDS:
        found = validate_document(kind, value, doc.src)[1]
        return [at(shown, *where, message) for _, where, message in found]
    return validate_lines(KINDS[kind].model, Document(value, doc.src), shown)[1]


@dataclass(frozen=True)
class _Read:
    """What one rule file holds: rules, knowledge documents, and what is wrong."""

    rules: list[CompiledRule]
    knowledge: list[tuple[str, Document]]
    lines: list[str]


def _load_file(path: Path, data: bytes | None = None) -> _Read:
    try:
        file = read_file(path, data=data)
    except UserError as exc:
        return _Read([], [], list(exc.lines))
    shown, text = file.shown, file.text.splitlines()
    out = _Read([], [], [])
    for doc in file.documents:
        errors = _Errors(shown, doc.src, text)
        kind = _knowledge_kind(doc.value)
        if kind is not None:
            out.knowledge.append((shown, doc))
            out.lines.extend(_knowledge_problems(kind, doc, shown))
            continue
        misplaced = _misplaced(doc.value)
        if misplaced is not None:
            errors.add(["kind"], misplaced, key=True)
            out.lines.extend(errors.lines)
            continue
        parsed, invalid = validate_lines(RuleFile, doc, shown)
        if parsed is None:
            out.lines.extend(invalid)
            continue
        for i, rule in enumerate(parsed.rules):
            compiled = _compile(rule, i, shown, doc.src, errors)
            if compiled is not None:
                out.rules.append(compiled)
        out.lines.extend(errors.lines)
    return out


def rule_files(folder: Path) -> list[Path]:
    """Rule files of a folder, found as inventories are (a folder or file that cannot
    be read is an error). The built-in rulebook's knowledge/ folder is data, read on
    its own (checker/derive/knowledge.py, the catalog with the inventories); in a
    user's folder every YAML file is read, and a document of a knowledge kind in it
    is knowledge (docs/knowledge.md), wherever it stands."""
    builtin = folder.resolve() == rules_dir().resolve()
    return [
        path for path in discover([folder])
        if not (builtin and "knowledge" in path.relative_to(folder).parts[:-1])
    ]


@dataclass(frozen=True)
class Rulebook:
    rules: tuple[CompiledRule, ...]
    # The knowledge documents of the rule folders, (file as shown, document), in
    # the order read: the audit reads them with the inventories' (checker.load.build).
    knowledge: tuple[tuple[str, Document], ...] = ()

    def get(self, rule_id: str) -> CompiledRule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def ids(self) -> list[str]:
        return [r.id for r in self.rules]

    def metadata(self) -> tuple[RuleMeta, ...]:
        """Every rule and built-in check, by id: what `rules list` and the formats describe."""
        return tuple(sorted((*(r.meta for r in self.rules), *BUILTIN_CHECKS), key=lambda m: m.id))

    def selected(self, select: Sequence[str], ignore: Sequence[str]) -> Rulebook:
        chosen = tuple(r for r in self.rules if matches(r.id, select) and not matches(r.id, ignore))
        return Rulebook(chosen, self.knowledge)


def matches(rule_id: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rule_id, g) for g in globs)


_BUILTIN_IDS = frozenset(c.id for c in BUILTIN_CHECKS)
# Input and waiver checks are built in; a rule there would be mistaken for one (and
# a `schema` finding makes the exit code 2).
_RESERVED = frozenset(c.split(".")[0] for c in _BUILTIN_IDS)


def load_rulebook(
    extra: Sequence[Path] = (),
    *,
    builtin: bool = True,
    cache_dir: Path | None = None,
    carried: Carried | None = None,
) -> Rulebook:
    """The built-in rules plus every folder in `extra`; any problem -> UserError.
    `cache_dir`: a cache folder (checker.load.cache) that keeps the compiled
    rulebook, read back while its files' bytes and the code are the same.
    `carried`: the resident process's (checker.core.carried), which holds the
    last command's compiled rulebook, used again while its files' bytes are."""
    files = _files(([rules_dir()] if builtin else []) + [Path(p) for p in extra])
    store = open_cache(cache_dir) if cache_dir is not None else None
    read = _read_all(files) if store is not None or carried is not None else None
    key = _book_key(read) if read is not None else None
    if carried is not None and key is not None:
        return carried.get("rulebook", bytes.fromhex(key), Rulebook, lambda: _stored(files, read, store, key))
    return _stored(files, read, store, key)


def _stored(
    files: Sequence[Path],
    read: Sequence[tuple[Path, bytes]] | None,
    store: cache.Cache | None,
    key: str | None,
) -> Rulebook:
    """The rulebook of these files: from the cache folder's entry, else compiled (and kept there)."""
    if store is not None and key is not None:
        book = _cached(store, key)
        if book is not None:
            return book
    book = _compiled(files, read)
    if store is not None and key is not None and not book.knowledge:
        with contextlib.suppress(cache.Unencodable):
            store.put(key, _book_out(book))
    return book


def _files(folders: Sequence[Path]) -> list[Path]:
    """Every rule file of the folders, each folder read once however often it is named."""
    files: list[Path] = []
    seen_folders: set[Path] = set()
    for folder in folders:
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "rule folder not found"
            raise UserError(f"{display_path(folder)}: {what}")
        # The same folder named twice (config `rules:` and --rules) is read once.
        if folder.resolve() in seen_folders:
            continue
        seen_folders.add(folder.resolve())
        files += rule_files(folder)
    return files


def _compiled(files: Sequence[Path], read: Sequence[tuple[Path, bytes]] | None = None) -> Rulebook:
    rules: list[CompiledRule] = []
    knowledge: list[tuple[str, Document]] = []
    lines: list[str] = []
    data = dict(read or ())
    ahead = builtin_rules(files, data)
    if ahead is not None:  # the built-in rules as compiled ahead: the other files compiled here
        rules += ahead
        files = [path for path in files if not is_builtin(path)]
    for path in files:
        got = _load_file(path, data.get(path))
        rules += got.rules
        knowledge += got.knowledge
        lines += got.lines
    seen: dict[str, CompiledRule] = {}
    for rule in rules:
        if rule.id in _BUILTIN_IDS or rule.id.split(".")[0] in _RESERVED:
            what = "a built-in check" if rule.id in _BUILTIN_IDS else "reserved for built-in checks"
            lines.append(at(rule.file, rule.src.line, rule.src.column, f"rule id {rule.id} is {what}"))
            continue
        if rule.id in seen:
            first = seen[rule.id]
            lines.append(
                at(
                    rule.file,
                    rule.src.line,
                    rule.src.column,
                    f"rule id {rule.id} already defined at {first.file}:{first.src.line}",
                )
            )
        seen.setdefault(rule.id, rule)
    if lines:
        raise UserError(lines)
    return Rulebook(tuple(sorted(seen.values(), key=lambda r: r.id)), tuple(knowledge))


# ---------------------------------------------------------------- the cached rulebook
# Compiling the rulebook (reading its YAML, validating 127 rules, compiling each
# `when` and parsing each message) is most of a small audit's work after the
# imports. The compiled rules are kept as one entry of the cache folder, signed
# and opened as every entry is (checker.load.cache), in a format of plain values
# checked type by type as it is read (never pickle), and keyed by the files'
# names and bytes, the cache's own salt (checker and Python versions, the
# parser) and BOOK_SALT's: the versions of Jinja and pydantic, whose checks and
# names a compiled rule holds, and the checker package's sources (their sizes
# and times, so an edited development install compiles afresh). An entry holds
# no code: a message's Python source is generated from its text when it is first
# rendered (MessageTemplate). A rulebook with errors is never kept.
BOOK_FORMAT = 1


def _read_all(files: Sequence[Path]) -> list[tuple[Path, bytes]] | None:
    """Each file and its bytes (compiled from those same bytes), or None if one
    cannot be read: then the rulebook is compiled, and says why."""
    try:
        return [(path, path.read_bytes()) for path in files]
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def code_salt() -> bytes:
    """What a compiled rulebook, or an outcome or message kept between runs,
    depends on in the code: checker's modules and pydantic (cache.code_salt),
    the rulebook's format and Jinja."""
    digest = hashlib.sha256(cache.code_salt())
    digest.update(f"rulebook {BOOK_FORMAT}\x00".encode())
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(f"jinja2 {metadata.version('jinja2')}\x00".encode())
    return digest.digest()


def _book_key(read: Sequence[tuple[Path, bytes]]) -> str:
    digest = hashlib.sha256(code_salt())
    for path, data in read:
        digest.update(display_path(path).encode("utf-8", "surrogateescape") + b"\x00")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _cached(store: cache.Cache, key: str) -> Rulebook | None:
    return store.decoded(key, _book_in)  # a miss, or anything wrong with it: compiled again


def _book_out(book: Rulebook) -> bytes:
    rules = [
        (
            cache.value_out(r.rule.model_dump()),
            r.file,
            cache.src_out(_shallow(r.src)),
            r.when.source,
            _condition_out(r.when.condition),
            sorted(r.when.fields),
            sorted(r.template.names),
            list(r.message_fields),
        )
        for r in book.rules
    ]
    return cache.pack(("rulebook", BOOK_FORMAT, rules))


def _book_in(body: Any) -> Rulebook:
    if type(body) is not tuple or len(body) != 3 or body[:2] != ("rulebook", BOOK_FORMAT):
        raise cache.BadEntry("not a rulebook")
    if type(body[2]) is not list:
        raise cache.BadEntry("not a list of rules")
    return Rulebook(tuple(_rule_in(item) for item in body[2]))


def _rule_in(item: Any) -> CompiledRule:
    if type(item) is not tuple or len(item) != 8:
        raise cache.BadEntry("not a rule")
    fields, file, src, source, condition, used, names, shown = item
    values = cache.value_in(fields)
    if type(values) is not dict or values.keys() != Rule.model_fields.keys():
        raise cache.BadEntry("not a rule's fields")
    shown_examples = values.pop("examples")
    if type(shown_examples) is not dict or shown_examples.keys() != Examples.model_fields.keys():
        raise cache.BadEntry("not a rule's examples")
    # Written from a validated rule and signed: built as they were, not validated again.
    rule = Rule.model_construct(**values, examples=Examples.model_construct(**shown_examples))
    when = CompiledWhen(_str(source), _condition_in(condition), frozenset(_strs(used)))
    template = MessageTemplate(_jinja, rule.message, frozenset(_strs(names)))
    return CompiledRule(rule, _str(file), cache.src_in(src), when, template, tuple(_strs(shown)))


def _shallow(src: Src) -> Src:
    """A rule's source map down to its fields (`message`, `when`, ...), not within
    them: what a compiled rule is asked for (its line, its message's position);
    the positions deeper in a rule are for errors, and a rulebook with errors is
    never kept."""
    children, keys = src.children, src.keys
    if not isinstance(children, dict) or keys is None:
        return Src(src.line, src.column)
    return Src(src.line, src.column, {k: Src(c.line, c.column) for k, c in children.items()}, dict(keys))


_JSON_SCALARS = (str, int, float, bool, type(None))


def _condition_out(value: Any) -> Any:
    """A durable-rules condition (JSON values) as payload data: marshal writes them as they are."""
    return _json_values(value, cache.Unencodable)


def _condition_in(raw: Any) -> Any:
    return _json_values(raw, cache.BadEntry)


def _json_values(value: Any, error: type[Exception]) -> Any:
    """`value` if it is JSON data (dicts with str keys, lists, scalars), else `error`."""
    if type(value) is dict:
        if not all(type(k) is str for k in value):
            raise error("a condition's mapping with a key that is not a string")
        return {k: _json_values(v, error) for k, v in value.items()}
    if type(value) is list:
        return [_json_values(v, error) for v in value]
    if type(value) in _JSON_SCALARS:
        return value
    raise error(f"unexpected {type(value).__name__} in a condition")


def _str(value: Any) -> str:
    if type(value) is not str:
        raise cache.BadEntry(f"expected str, got {type(value).__name__}")
    return value


def _strs(value: Any) -> list[str]:
    if type(value) is not list:
        raise cache.BadEntry(f"expected a list, got {type(value).__name__}")
    return [_str(v) for v in value]


# ---------------------------------------------------------------- the built-in rules, compiled ahead
# The built-in rule files are compiled when checker is built, not on every run
# (about 90 ms of a run without a cache: their YAML, each `when` and each
# message checked): builtin_rulebook.json holds them in BOOK_FORMAT, written by
# `CHECKER_REGENERATE_GOLDEN=1 pytest tests/evaluate/test_rulebook_ahead.py`,
# which fails when the file is not what compiling the rules gives now. It is
# used only while its key, the files' names and bytes, is theirs (a rule edited
# in a checkout is compiled, not read stale), and it is read like a cache
# entry, type by type (JSON, never code); anything wrong with it and the rules
# are compiled as before. The files are checker's own, installed with it.
AHEAD = Path(__file__).with_name("builtin_rulebook.json")
AHEAD_FORMAT = 1


def is_builtin(path: Path) -> bool:
    """A file of the built-in rulebook (rules/, installed or in a checkout)."""
    return path.resolve().is_relative_to(rules_dir().resolve())


def _builtin_files(files: Sequence[Path]) -> list[Path]:
    return [path for path in files if is_builtin(path)]


def _ahead_key(named: Sequence[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256(f"ahead {AHEAD_FORMAT} rulebook {BOOK_FORMAT}\x00".encode())
    for name, data in named:
        digest.update(name.encode() + b"\x00" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _named_bytes(files: Sequence[Path], data: Mapping[Path, bytes]) -> list[tuple[str, bytes]] | None:
    """Each built-in file as (its name within the rules folder, its bytes); None if one cannot be read."""
    base = rules_dir().resolve()
    try:
        return [
            (path.resolve().relative_to(base).as_posix(), data[path] if path in data else path.read_bytes())
            for path in files
        ]
    except OSError:
        return None


def ahead_text(files: Sequence[Path]) -> str:
    """builtin_rulebook.json for the built-in rule files among `files`, compiled now."""
    builtin = _builtin_files(files)
    named = _named_bytes(builtin, {})
    if named is None:
        raise UserError("the built-in rule files cannot be read")
    rules: list[CompiledRule] = []
    lines: list[str] = []
    for path, (name, _) in zip(builtin, named, strict=True):
        got = _load_file(path)
        rules += [dataclasses.replace(r, file=name) for r in got.rules]
        lines += got.lines
    if lines:
        raise UserError(lines)
    body = cache.unpack(_book_out(Rulebook(tuple(sorted(rules, key=lambda r: r.id)))))
    stored = {"d": [["book", _json_out(body)], ["key", _ahead_key(named)]]}
    return json.dumps(stored, indent=0) + "\n"


def builtin_rules(files: Sequence[Path], data: Mapping[Path, bytes]) -> list[CompiledRule] | None:
    """The built-in rules among `files` as compiled ahead, or None: not all of them
    there, no file, another key, or anything wrong with it."""
    builtin = _builtin_files(files)
    if not builtin:
        return None
    named = _named_bytes(builtin, data)
    if named is None:
        return None
    try:
        stored = json.loads(AHEAD.read_bytes(), object_hook=_json_tag)
        if type(stored) is not dict or stored.get("key") != _ahead_key(named):
            return None
        book = _book_in(stored["book"])
    except Exception:  # no file, not JSON, a BadEntry: compiled as before
        return None
    shown = {name: display_path(rules_dir() / name) for name, _ in named}
    if any(r.file not in shown for r in book.rules):
        return None
    return [dataclasses.replace(r, file=shown[r.file]) for r in book.rules]


def _json_out(value: Any) -> Any:
    """Plain values (as _book_out writes them) as JSON: tuples, dicts and bytes tagged."""
    if type(value) is tuple:
        return {"t": [_json_out(v) for v in value]}
    if type(value) is list:
        return [_json_out(v) for v in value]
    if type(value) is dict:
        return {"d": [[_json_out(k), _json_out(v)] for k, v in value.items()]}
    if type(value) is bytes:
        return {"b": value.hex()}
    if type(value) is float and not math.isfinite(value):
        return {"f": repr(value)}
    if value is None or type(value) in (str, int, bool, float):
        return value
    raise cache.Unencodable(f"{type(value).__name__} in a compiled rulebook")


def _json_tag(obj: dict[str, Any]) -> Any:
    """json.loads' object hook: every object of the file is one of _json_out's tags."""
    if len(obj) == 1:
        ((tag, value),) = obj.items()
        if tag == "t" and type(value) is list:
            return tuple(value)
        if tag == "d" and type(value) is list and all(type(p) is list and len(p) == 2 for p in value):
            return {key: item for key, item in value}
        if tag == "b" and type(value) is str:
            return bytes.fromhex(value)
        if tag == "f" and value in ("inf", "-inf", "nan"):
            return float(value)
    raise cache.BadEntry("an unknown tag")
