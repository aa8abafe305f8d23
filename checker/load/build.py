"""Files -> validated models, a source map for every entity, and schema findings.

Input problems never stop the load at the first one: each becomes a finding of
category `schema` (so every output format shows them) and the audit exits 2.
"""

from __future__ import annotations

import datetime as dt
import errno
import fnmatch
import functools
import hashlib
import itertools
import operator
import os
import stat
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from checker.core import progress
from checker.core.builtin import (
    SCHEMA_DOCUMENT,
    SCHEMA_DUPLICATE_NAME,
    SCHEMA_FEED_SIDES,
    SCHEMA_FILE,
    SCHEMA_INVALID,
    SCHEMA_LIMIT,
    SCHEMA_MISSING_FIELD,
    SCHEMA_REFERENCE,
)
from checker.core.carried import Carried
from checker.core.entity import entity_id
from checker.core.errors import MAX_LISTED, UserError, clip
from checker.core.findings import Finding, Location, by_place, located
from checker.core.made import made, setter
from checker.core.perf import gc_paused
from checker.core.resources import knowledge_dir
from checker.core.suggest import did_you_mean
from checker.load import models as m
from checker.load import validated
from checker.load.cache import Cache, Parsed, Unencodable
from checker.load.reading import Kept, ReadOptions, read_files
from checker.load.validated import Shape
from checker.source import fastpath
from checker.source.parse import Document, LazySrc, Src, YamlProblem
from checker.source.reader import (
    PIECE,
    display_path,
    inner_models,
    not_a_file,
    validate_pieces,
)
from checker.source.reader import problems as validation_problems

M = TypeVar("M")
YAML_SUFFIXES = (".yaml", ".yml")


@functools.cache
def _servers() -> TypeAdapter[list[m.Server]]:
    """Built when servers are first validated (a model's build is deferred: models.Model)."""
    return TypeAdapter(list[m.Server])


def _part_models(model: type[BaseModel]) -> tuple[tuple[str, type[BaseModel]], ...]:
    """The fields of `model` that hold one model of their own (`psu: Psu | None`)."""
    parts = []
    for name, info in model.model_fields.items():
        inner = list(inner_models(info.annotation))
        if len(inner) == 1 and typing.get_origin(info.annotation) in (None, typing.Union, types.UnionType):
            parts.append((name, inner[0]))
    return tuple(parts)


_SERVER_PARTS = _part_models(m.Server)


class _SharedParts:
    """A server's parts (psu, gpu, software, ...) validated once per distinct
    content, and the one frozen model shared by every server that wrote it.

    A rollout repeats the same few configurations thousands of times: each
    distinct part is validated once (its Python validators run once, not per
    server), and held once in memory. A part that fails on its own is left
    as written, so the server's validation reports it where it is. The key
    holds each value's type (Strict fields refuse `true` where 1 is valid,
    and 1 == True in Python); a part holding a zero (0.0 and -0.0 are equal)
    or an unhashable value (a list, a mapping) is validated with its server.

    A part that proves to differ from server to server (a measured power draw
    per server, say) is no longer looked up: after TRIAL parts of a name, it
    is kept only if at least one in four was seen before. Either way each
    server validates to the same model."""

    TRIAL = 256

    def __init__(self) -> None:
        self._seen: dict[tuple[Any, ...], BaseModel | None] = {}
        self._parts = list(_SERVER_PARTS)
        self._tried = dict.fromkeys([name for name, _ in _SERVER_PARTS], 0)
        self._hits = dict.fromkeys(self._tried, 0)

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        # The hot loop of validation: up to 9 parts x every server, kept flat.
        seen, tried, hits = self._seen, self._tried, self._hits
        shared: dict[str, Any] | None = None
        for name, model in self._parts:
            raw = value.get(name)
            if raw.__class__ is not dict:
                continue
            values = raw.values()
            if 0 in values:
                continue
            key = (name, *raw, *values, *map(type, values))  # flat: no (key, value) pair made
            tried[name] += 1
            try:
                part = seen[key]
                hits[name] += 1
            except KeyError:
                part = seen[key] = _validated(model, raw)
            except TypeError:  # a mapping or a list in it (software.frameworks): keyed by its whole content
                nested = _nested_key(name, raw)
                if nested is None:
                    continue
                if nested in seen:
                    part = seen[nested]
                    hits[name] += 1
                else:
                    part = seen[nested] = _validated(model, raw)
            if part is not None:
                shared = shared or dict(value)
                shared[name] = part
            if tried[name] == self.TRIAL and hits[name] * 4 < self.TRIAL:
                self._parts = [(n, m) for n, m in self._parts if n != name]
        return shared or value


def _nested_key(name: str, raw: dict[str, Any]) -> tuple[Any, ...] | None:
    """A part's key where it holds mappings or lists: each value with its type,
    each mapping's keys in order, all the way down; None where a value is a zero
    (0.0 and -0.0 are equal), as _SharedParts keys a flat part, or unhashable."""
    def frozen(value: Any) -> Any:
        kind = value.__class__
        if kind is dict:
            return (dict, *((k, frozen(v)) for k, v in value.items()))
        if kind is list:
            return (list, *map(frozen, value))
        if value == 0:
            raise _Unkeyed
        hash(value)  # TypeError for anything else unhashable
        return (kind, value)

    try:
        return (name, frozen(raw))
    except (_Unkeyed, TypeError):
        return None


class _Unkeyed(Exception):
    """A value no part is keyed by (a zero)."""


def _validated(model: type[BaseModel], raw: dict[str, Any]) -> BaseModel | None:
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


@dataclass(frozen=True, slots=True)
class Placed(Generic[M]):
    """A validated model and where it was written."""

    value: M
    file: str
    src: Src

    def at(self, path: Sequence[str | int] = (), *, key: bool = True) -> Location:
        return Location(self.file, *self.src.locate(path, key=key))


@dataclass(frozen=True, slots=True)
class ServerEntry:
    server: m.Server
    facility: str
    rollout_date: dt.date | None
    place: Placed[m.Server]


_Run = validated.ServerRun | validated.TableRun[Any]  # models placed by their columns


class _KeptPlace(Placed[Any]):
    """Where a kept server, rack or feed is written, placed by its document's
    columns (_Builder._placed_by_columns, _Builder._place_kept_racks): its
    model made from the entry when first read."""

    __slots__ = ("_at", "_run")
    _run: _Run
    _at: int

    @property  # a field of Placed, read-only here: made when asked
    def value(self) -> Any:
        return self._run.model(self._at)


class _KeptEntry(ServerEntry):
    """A kept server placed by its document's columns (its place a _KeptPlace):
    its model made when first read, its fields read a column at a time by
    server_fields."""

    __slots__ = ()

    @property  # a field of ServerEntry, read-only here: made when asked
    def server(self) -> m.Server:
        return self.place.value


_SET_ENTRY = tuple(setter(ServerEntry, name) for name in ("facility", "rollout_date", "place"))
_SET_PLACE = (setter(Placed, "file"), setter(Placed, "src"))
_SET_KEPT = (setter(_KeptPlace, "_run"), setter(_KeptPlace, "_at"))


def _kept_entries(
    run: validated.ServerRun, facility: str, rollout: dt.date | None, file: str, ctx: _KeptContext
) -> list[ServerEntry]:
    """Each server of `run`, its entry, place and source map."""
    count, at, each = len(run), range(len(run)), itertools.repeat
    set_node, set_ctx, set_at = _SET_SRC
    srcs = made(_KeptServerSrc, count, ((set_node, each(None)), (set_ctx, each(ctx)), (set_at, at)))
    places = _run_placed(run, file, srcs)
    set_facility, set_rollout, set_place = _SET_ENTRY
    slots = ((set_facility, each(facility)), (set_rollout, each(rollout)), (set_place, places))
    return made(_KeptEntry, count, slots)


def _run_placed(run: _Run, file: str, srcs: Sequence[Src]) -> list[Placed[Any]]:
    """Each model of `run` placed in `file` at its source map of `srcs`."""
    set_file, set_src = _SET_PLACE
    place_run, place_at = _SET_KEPT
    each = itertools.repeat
    slots = ((set_file, each(file)), (set_src, srcs), (place_run, each(run)), (place_at, range(len(run))))
    return made(_KeptPlace, len(run), slots)


def _follow(places: Sequence[Placed[Any]], run: _Run, at: int) -> bool:
    """Whether `places` are those of `run`'s models from `at` on, in order (checked at C speed)."""
    if not {_KeptPlace}.issuperset(map(type, places)):
        return False
    kept = typing.cast(Sequence[_KeptPlace], places)
    return all(map(operator.is_, map(_RUN_OF, kept), itertools.repeat(run))) and list(
        map(_AT_OF, kept)
    ) == list(range(at, at + len(kept)))


_RUN_OF, _AT_OF = operator.attrgetter("_run"), operator.attrgetter("_at")
_PLACE_OF = operator.attrgetter("place")


def placed_fields(places: Sequence[Placed[Any]], *names: str) -> list[list[Any]]:
    """For each field of `names`, its value on each model placed at `places`, in
    their order: a kept document's servers, racks or feeds placed by their
    columns read a column at a time (validated.ServerRun.column,
    validated.TableRun.column: no model made), the others of their models."""
    out: list[list[Any]] = [[] for _ in names]
    i, count = 0, len(places)
    kinds = list(map(type, places))
    while i < count:
        place = places[i]
        j = i + 1
        if kinds[i] is _KeptPlace:
            run, first = _RUN_OF(place), _AT_OF(place)
            start = first - i  # places[j] is model start + j of the run
            j = min(count, len(run) - start)  # the rest of its run, when its places follow (they mostly do)
            if not _follow(places[i:j], run, first):
                j = i + 1
                while j < count and _follow(places[j : j + 1], run, start + j):
                    j += 1
            for column, name in zip(out, names, strict=True):
                column += run.column(name)[start + i : start + j]
        else:
            try:  # the next kept place, looked for at C speed
                j = kinds.index(_KeptPlace, j)
            except ValueError:
                j = count
            models = [p.value for p in places[i:j]]
            for column, name in zip(out, names, strict=True):
                column += map(operator.attrgetter(name), models)
        i = j
    return out


def server_fields(entries: Sequence[ServerEntry], *names: str) -> list[list[Any]]:
    """placed_fields of the servers of `entries`."""
    return placed_fields(list(map(_PLACE_OF, entries)), *names)


@dataclass
class Inventory:
    facilities: dict[str, Placed[m.Facility]] = field(default_factory=dict)
    racks: dict[tuple[str, str], Placed[m.Rack]] = field(default_factory=dict)
    feeds: dict[tuple[str, str, str], Placed[m.Feed]] = field(default_factory=dict)
    cooling_units: dict[tuple[str, str], Placed[m.CoolingUnit]] = field(default_factory=dict)
    cdus: dict[tuple[str, str], Placed[m.Cdu]] = field(default_factory=dict)
    ups_blocks: dict[tuple[str, str], Placed[m.UpsBlock]] = field(default_factory=dict)
    panels: dict[tuple[str, str], Placed[m.Panel]] = field(default_factory=dict)
    servers: dict[str, ServerEntry] = field(default_factory=dict)
    # The power shelves of rack-scale systems, keyed (facility, rack, server, number).
    shelves: dict[tuple[str, str, str, str], Placed[m.PowerShelf]] = field(default_factory=dict)
    workloads: dict[str, Placed[m.Workload]] = field(default_factory=dict)
    waivers: list[Placed[m.Waiver]] = field(default_factory=list)
    gpu_models: dict[str, Placed[m.GpuModel]] = field(default_factory=dict)
    language_models: dict[str, Placed[m.LanguageModel]] = field(default_factory=dict)
    server_models: dict[str, Placed[m.ServerModel]] = field(default_factory=dict)
    # Raw catalog fields, merged under a server's own fields when it names a model.
    server_model_fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A user's documents of the knowledge tables' kinds, in the order read, as
    # written: checker.derive.knowledge validates them and merges them in.
    tables: list[Placed[dict[str, Any]]] = field(default_factory=list)
    # The files read as an earlier run validated them (checker.load.validated).
    kept: list[KeptFile] = field(default_factory=list)

    def keep_positions(self) -> None:
        """Keep the positions this run worked out in its kept files, for the next run
        (once the findings are located: checker.audit)."""
        for holder in self.kept:
            holder.positions.save()

    def entities(self) -> Mapping[str, Location]:
        """Every entity id (docs/architecture.md "Entity ids") and where it is written;
        a location is worked out only when looked up (most never are)."""
        ids: dict[str, Placed[Any]] = {}
        for kind, entity in ENTITIES.items():
            for key, value in getattr(self, entity.table).items():
                ids[entity_id(kind, key)] = value.place if isinstance(value, ServerEntry) else value
        return _Entities(ids)


@dataclass(frozen=True)
class Entity:
    """A kind of entity: findings name it and waivers point at it by its id,
    `kind/<key>/...` (`rack/sh1/A07`)."""

    table: str  # the Inventory table whose keys spell the ids
    key: tuple[str, ...]  # what each part of the key is, for the docs


ENTITIES: dict[str, Entity] = {
    "facility": Entity("facilities", ("facility",)),
    "rack": Entity("racks", ("facility", "rack")),
    "feed": Entity("feeds", ("facility", "rack", "feed")),
    "cooling_unit": Entity("cooling_units", ("facility", "unit")),
    "cdu": Entity("cdus", ("facility", "cdu")),
    "ups": Entity("ups_blocks", ("facility", "block")),
    "panel": Entity("panels", ("facility", "panel")),
    "server": Entity("servers", ("server",)),
    "shelf": Entity("shelves", ("facility", "rack", "server", "shelf")),
    "workload": Entity("workloads", ("workload",)),
}


def entity_forms() -> str:
    """`facility/<facility>`, `rack/<facility>/<rack>`, ...: the contract's list."""
    return ", ".join(f"`{kind}/{'/'.join(f'<{k}>' for k in e.key)}`" for kind, e in ENTITIES.items())


class _Entities(Mapping[str, Location]):
    """Entity ids in a fixed order, each located on lookup."""

    def __init__(self, places: dict[str, Placed[Any]]) -> None:
        self._places = places

    def __getitem__(self, entity: str) -> Location:
        return self._places[entity].at()

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def __contains__(self, entity: object) -> bool:
        return entity in self._places


@dataclass
class _Doc:
    """One parsed document of a known kind, before validation."""

    file: str
    value: dict[str, Any]
    src: Src
    index: int = 0  # the document's place in its file


MAX_MESSAGE = 1_000  # characters of a message: every value in one is clipped already; this is the last guard


class _Problems:
    """Collects schema findings; identical ones (e.g. from shared defaults) once,
    at most MAX_LISTED of a file, and how many more there were."""

    def __init__(self) -> None:
        self._seen: dict[tuple[object, ...], Finding] = {}
        self._listed: dict[str, int] = {}
        self._unlisted: dict[str, tuple[int, Location]] = {}  # file -> (count, where the first is)
        self._raised: dict[str, int] = {}  # file -> problems raised, duplicates and unlisted ones too

    def raised(self, file: str) -> int:
        """How many problems were raised in `file` so far (a change says one was)."""
        return self._raised.get(file, 0)

    def add(self, rule: str, loc: Location, message: str) -> None:
        self._raised[loc.file] = self._raised.get(loc.file, 0) + 1
        finding = located(rule, "schema", loc, clip(message, MAX_MESSAGE))
        key = finding.sort_key()
        if key in self._seen:
            return
        if self.full(loc.file):
            self.unlisted(loc.file, 1, lambda: loc)
            return
        self._seen[key] = finding
        self._listed[loc.file] = self._listed.get(loc.file, 0) + 1

    def full(self, file: str) -> bool:
        """Whether the file's problems are no longer listed, only counted."""
        return self.room(file) <= 0

    def room(self, file: str) -> int:
        """How many more of the file's problems are listed."""
        return MAX_LISTED - self._listed.get(file, 0)

    def unlisted(self, file: str, count: int, where: Callable[[], Location]) -> None:
        """`count` more problems of `file`; `where` the first is, asked for only if it is the first."""
        self._raised[file] = self._raised.get(file, 0) + count
        before, first = self._unlisted[file] if file in self._unlisted else (0, where())
        self._unlisted[file] = (before + count, first)

    def findings(self) -> list[Finding]:
        found = list(self._seen.values())
        for count, first in self._unlisted.values():
            message = (f"{count:,} more problems in this file, from here on, not listed (the first"
                       f" {MAX_LISTED:,} are): fix those and run again")
            found.append(located(SCHEMA_LIMIT, "schema", first, message))
        return sorted(found, key=by_place)


def is_yaml(name: str) -> bool:
    return name.lower().endswith(YAML_SUFFIXES)





_LOOP = "symbolic link loop: leads back to a folder it is in; not followed"


_Id = tuple[int, int]  # a folder's (device, inode)
MAX_FOLDERS = 100_000  # folders one path may hold: a link to / stops here, not after minutes


class _Walk:
    """File discovery (inventories/README.md, "Which files are read"): every folder
    below a given path is read or reported, symbolic links are followed, a link
    that leads back to a folder it is in is reported as a loop, entries whose
    name starts with a dot are skipped, and so is the config file."""

    def __init__(self, exclude: Path | None) -> None:
        self.skip = os.path.realpath(exclude) if exclude else None
        self.files: dict[str, Path] = {}  # real path -> first path it was reached by
        self.parents: dict[_Id, _Id | None] = {}  # each folder walked -> the one it was reached from
        self.problems: list[tuple[Path, str]] = []

    def top(self, path: Path) -> None:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            if not path.is_symlink():
                raise UserError(f"{display_path(path)}: no such file or directory") from None
            self.problems.append((path, "broken symbolic link: not read"))
            return
        except OSError as exc:
            self.problems.append((path, f"cannot read: {exc.strerror}"))
            return
        if stat.S_ISDIR(mode):
            self.folder(path)
        elif stat.S_ISREG(mode):
            self.file(path)  # a file named on the command line is read whatever its name
        else:
            self.problems.append((path, not_a_file(mode)))

    def folder(self, top: Path) -> None:
        # A stack, not recursion: a tree 2,000 folders deep is legal on Linux. A
        # folder is known by its device and inode (one stat, where its real path
        # costs a lookup per level: a 1,000-deep tree was quadratic), and by the
        # folder it was reached from, so a loop is told from a folder reached twice.
        stack: list[tuple[Path, _Id | None]] = [(top, None)]
        while stack:
            path, parent = stack.pop()
            try:
                info = path.stat()
            except OSError as exc:
                self.problems.append((path, f"cannot read: {exc.strerror}"))
                continue
            ident = (info.st_dev, info.st_ino)
            if ident in self.parents:
                if self._below(parent, ident):
                    self.problems.append((path, _LOOP))
                continue  # the same folder reached twice (through a link) is read once
            self.parents[ident] = parent
            if len(self.parents) > MAX_FOLDERS:
                raise UserError(
                    f"{display_path(top)}: more than {MAX_FOLDERS:,} folders below it (a link to / or"
                    " /proc?); name the folders that hold the YAML files"
                )
            # Names starting with a dot are skipped: .git, .github, .venv, editor files.
            for name in self.names(path):
                if not name.startswith(".") and self.entry(path / name):
                    stack.append((path / name, ident))

    def _below(self, folder: _Id | None, ancestor: _Id) -> bool:
        """`folder` is `ancestor` or below it (walked only when a folder is met twice)."""
        while folder is not None:
            if folder == ancestor:
                return True
            folder = self.parents[folder]
        return False

    def seen(self, path: Path) -> bool:
        try:
            info = path.stat()
        except OSError:
            return False
        return (info.st_dev, info.st_ino) in self.parents

    def names(self, folder: Path) -> list[str]:
        try:
            with os.scandir(folder) as it:
                return sorted(entry.name for entry in it)
        except OSError as exc:
            self.problems.append((folder, f"cannot read folder: {exc.strerror}"))
            return []

    def entry(self, path: Path) -> bool:
        """Read or report one entry of a folder; True if it is a folder to walk."""
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            loop = exc.errno == errno.ELOOP
            if (loop or isinstance(exc, FileNotFoundError)) and path.is_symlink():
                what = "symbolic link loop" if loop else "broken symbolic link"
                self.problems.append((path, f"{what}: not followed"))
            else:
                self.problems.append((path, f"cannot read: {exc.strerror}"))
            return False
        if stat.S_ISDIR(mode):
            return True
        if not is_yaml(path.name):
            return False  # README.md and the like: only YAML files are inventories
        if stat.S_ISREG(mode):
            self.file(path)
        else:
            self.problems.append((path, not_a_file(mode)))
        return False

    def file(self, path: Path) -> None:
        real = os.path.realpath(path)
        if real != self.skip:
            self.files.setdefault(real, path)


def discover(paths: Sequence[Path], exclude: Path | None = None) -> list[Path]:
    """Every YAML file below `paths` but `exclude`; anything that could not be read
    or followed is a UserError (for rule folders and the built-in knowledge base)."""
    files, problems = find_files(paths, exclude)
    if problems:
        lines = [f"{display_path(path)}: {message}" for path, message in problems[:MAX_PROBLEMS]]
        if len(problems) > MAX_PROBLEMS:
            lines.append(f"checker: {len(problems) - MAX_PROBLEMS:,} more such problems not shown")
        raise UserError(lines)
    return files


MAX_PROBLEMS = 20  # lines of a folder's problems shown


Unread = list[tuple[Path, str]]  # (path, why it was not read)


def find_files(paths: Sequence[Path], exclude: Path | None = None) -> tuple[list[Path], Unread]:
    """Every YAML file below `paths` but `exclude` (the config file, if any), and
    (path, problem) for everything that could not be read or was not followed."""
    walk = _Walk(exclude)
    for path in paths:
        real = os.path.realpath(path)
        again = walk.seen(path) or real in walk.files  # `checker audit inv inv`
        before = (len(walk.files), len(walk.problems))
        walk.top(path)
        if not again and (len(walk.files), len(walk.problems)) == before:
            # A path that holds no inventory is a typo or a wrong folder, not a pass.
            walk.problems.append((path, "no .yaml or .yml file here: nothing to check"))
    return sorted(walk.files.values()), sorted(walk.problems)


def _report_validation(
    problems: _Problems,
    exc: ValidationError,
    model: type[BaseModel],
    file: str,
    src: Src,
    prefix: tuple[str | int, ...] = (),
) -> None:
    """Each error of `exc` as a finding; `exc` is of the value at `prefix` in a
    document of `model` whose source map is `src`."""
    def here() -> Location:
        return Location(file, *src.locate(prefix, key=False))

    room = problems.room(file)
    if room <= 0:  # counted, not described: describing one costs ~1 KB, placing it a source map
        problems.unlisted(file, exc.error_count(), here)
        return
    for rule, where, message in validation_problems(exc, model, src, prefix, room + 1):
        problems.add(rule, Location(file, *where), message)  # the one past the room: where the rest start
    if exc.error_count() > room + 1:
        problems.unlisted(file, exc.error_count() - room - 1, here)


B = TypeVar("B", bound=BaseModel)


def _validate(problems: _Problems, model: type[B], doc: _Doc) -> B | None:
    def report(exc: ValidationError, prefix: tuple[str | int, ...]) -> None:
        _report_validation(problems, exc, model, doc.file, doc.src, prefix)

    return validate_pieces(model, doc.value, report)


# ---------------------------------------------------------------- reading
class KeptFile:
    """A file an earlier run kept the validated documents of (checker.load.validated).

    What it works out is a pure function of the file's name and bytes and of
    the entry's (the source maps, the positions asked, the places of its
    servers): a resident process carries it to the next command that reads
    the same (_kept_file), which `renew`s it with its own reading of the file."""

    def __init__(self, file: str, kept: Kept, digest: bytes) -> None:
        self.file = file
        self.kept = kept
        self.digest = digest  # of the catalog its servers were merged with
        self._roots: dict[int, Src] = {}
        self._sources: dict[tuple[int, bool], Src] = {}
        self._places: dict[int, list[Placed[m.Server]]] = {}  # each servers document's, by its index
        # Each servers document's entries, where placing them raised nothing (_Placing):
        # kept only by a holder a resident process carries (`carried`), the one that can use them.
        self.placings: dict[int, _Placing] = {}
        # Each facility document's racks, feeds and other entries, likewise (_FacilityPlacing).
        self.facility_placings: dict[int, _FacilityPlacing] = {}
        self.carried = False
        # The positions earlier runs worked out in this file, and this run's.
        self.positions = validated.Positions(kept.cache, kept.key)

    def renew(self, kept: Kept) -> None:
        """This command's reading of the same bytes: what it keeps goes to its cache
        folder. A source map worked out answers for itself, not through the
        positions memo: with another folder they are made afresh, so that it
        is asked and keeps what a process of its own keeps there."""
        if kept.cache != self.kept.cache:
            self._sources.clear()
            self._places.clear()
            self.placings.clear()
            self.facility_placings.clear()
        self.kept = kept
        self.positions.renew(kept.cache)

    def source(self, index: int, deferred: bool) -> Src:
        """The source map of the file's document `index`, worked out when first
        asked (a fast-parsed document's from the text, another's from the file's
        parsed entry), and the positions asked of it kept for the next run."""
        got = self._sources.get((index, deferred))
        if got is None:
            got = self._sources[(index, deferred)] = _KeptPath(self, index, deferred, ())
        return got

    def places(self, index: int, make: Callable[[], list[Placed[m.Server]]]) -> list[Placed[m.Server]]:
        """The places of servers document `index`'s servers, made once (they are
        used only with the catalog the entry was made with: _add_kept_servers)."""
        got = self._places.get(index)
        if got is None:
            got = self._places[index] = make()
        return got

    def root(self, index: int, deferred: bool) -> Src:
        got = self._roots.get(index)
        if got is None:
            got = self._roots[index] = self._deferred(index) if deferred else _ReadSrc(self, index)
        return got

    @functools.cached_property
    def _deferred(self) -> Callable[[int], Src]:
        return fastpath.deferred_sources(self.kept.text(), self.kept.trees)

    @functools.cached_property
    def documents(self) -> Parsed | OSError:
        """The file's documents, read once: a position asked in a document the event
        parser read, or a document whose kept form cannot be used."""
        return self.kept.documents()


@dataclass(frozen=True)
class _Placing:
    """A kept servers document's servers as they were placed with nothing to report,
    and all that placing them read of the rest of the inventory (_Builder._place_server):
    while that is as it was, they are placed so again, with no check repeated.
    Documents with rack-scale systems (whose power shelves read their rack's
    cabling and place) are placed afresh each time."""

    names: tuple[str, ...]
    entries: tuple[ServerEntry, ...]
    racks: frozenset[tuple[str, str]]  # (facility, rack) of each server
    cabled: tuple[tuple[tuple[str, str], m.Rack], ...]  # each rack whose feeds a psu.feeds names, its model
    workloads: frozenset[str]
    gpus: frozenset[str]

    @classmethod
    def of(cls, entries: Sequence[ServerEntry], inv: Inventory) -> _Placing | None:
        """What placing these entries in `inv` read, or None where they are not to be carried."""
        read = server_fields(entries, "name", "rack", "trays", "psu", "workload", "gpu")
        name, rack, trays, psu, workload, gpu = read
        names = tuple(name)
        if not names or len(set(names)) != len(names) or any(t is not None for t in trays):
            return None
        racks = [(e.facility, r) for e, r in zip(entries, rack, strict=True)]
        cabled = {
            key: inv.racks[key].value
            for key, p in zip(racks, psu, strict=True)
            if p is not None and p.feeds is not None
        }
        return cls(
            names,
            tuple(entries),
            frozenset(racks),
            tuple(cabled.items()),
            frozenset(w for w in workload if w is not None),
            frozenset(g.model for g in gpu if g is not None),
        )

    def holds(self, inv: Inventory) -> bool:
        """Whether `inv` is, for these servers, what it was when they were placed."""
        racks, servers = inv.racks, inv.servers
        return (
            servers.keys().isdisjoint(self.names)
            and racks.keys() >= self.racks
            and all(racks[key].value is model for key, model in self.cabled)
            and inv.workloads.keys() >= self.workloads
            and inv.gpu_models.keys() >= self.gpus
        )


@dataclass(frozen=True)
class _FacilityNames:
    """What a facility's checks look names up in, made once per facility (made
    per rack or per CDU, a facility of 25,000 racks and 500 panels read 12.5
    million panels on each run)."""

    blocks: list[str]  # its UPS blocks
    panels: dict[str, m.Panel]
    fed_from: dict[str, str | None]  # each panel's UPS block
    racks: list[str]
    rack_set: frozenset[str]
    rows: list[str]  # sorted
    by_row: dict[str, list[str]]  # each row's racks, in order

    @classmethod
    def of(cls, fac: m.Facility, racks: list[str], rows: Sequence[str | None]) -> _FacilityNames:
        """`fac`'s names, its racks' names and rows given (read a column at a time where kept)."""
        ups = fac.power.ups if fac.power else None
        panels = {p.name: p for p in fac.power.panels} if fac.power else {}
        by_row: dict[str, list[str]] = {}
        for rack, row in zip(racks, rows, strict=True):
            if row is not None:
                by_row.setdefault(row, []).append(rack)
        return cls(
            [b.name for b in ups.blocks] if ups else [], panels, {n: p.ups for n, p in panels.items()},
            racks, frozenset(racks), sorted(by_row), by_row,
        )


# What placing a facility document adds to: _Builder._add_facility reads nothing
# else of the inventory (each entry is checked against its own facility alone).
FACILITY_TABLES = ("facilities", "cooling_units", "ups_blocks", "panels", "racks", "feeds", "cdus")


@dataclass(frozen=True)
class _FacilityPlacing:
    """A kept facility document's entries (its racks, feeds, UPS blocks, panels,
    CDUs and cooling units) as they were placed with nothing to report. Placing
    them checked each against its own facility alone and each name against
    the entries placed before it: while those names are free, they are placed
    so again, with no check repeated."""

    model: m.Facility
    added: tuple[tuple[str, tuple[tuple[Any, Placed[Any]], ...]], ...]  # (table, its new entries in order)

    @classmethod
    def of(cls, model: m.Facility, inv: Inventory, sizes: Mapping[str, int]) -> _FacilityPlacing:
        """What placing `model` added to `inv`'s tables, of `sizes` entries before it."""
        added = tuple(
            (table, tuple(list(getattr(inv, table).items())[sizes[table]:])) for table in FACILITY_TABLES
        )
        return cls(model, added)

    def holds(self, inv: Inventory, model: m.Facility) -> bool:
        """Whether these entries can be placed in `inv` as they were: the same
        document's, and none of their names taken."""
        return model is self.model and all(
            getattr(inv, table).keys().isdisjoint(key for key, _ in entries) for table, entries in self.added
        )

    def place(self, inv: Inventory) -> None:
        for table, entries in self.added:
            getattr(inv, table).update(entries)


@dataclass(frozen=True)
class _KeptDoc:
    """One kept document, built in its place among the documents as a read one is."""

    holder: KeptFile
    doc: validated.KeptDoc
    src: Src

    @property
    def file(self) -> str:
        return self.holder.file

    @property
    def value(self) -> Mapping[str, Any]:  # what _order reads of a document
        kind = self.doc.kind if isinstance(self.doc, validated.KeptModel) else "Servers"
        return {"kind": kind}


class _RememberedSrc(LazySrc):
    """A lazy map of a kept file whose positions are looked up in the file's
    positions memo first (validated.Positions): a warm run then works out no
    source map of a file where every position asked was asked before (a
    facility's racks and feeds, a finding on each; a finding on each server).
    `_memo` says where: the memo, and the document and path the position is
    kept under."""

    __slots__ = ()

    def _memo(self) -> tuple[validated.Positions, int, tuple[str | int, ...]]:
        raise NotImplementedError

    def _remembered(self, path: tuple[str | int, ...], key: bool | None) -> tuple[int, int]:
        memo, index, descended = self._memo()
        at = (index, descended, path, key)
        got = memo.get(at)
        if got is None:
            node = self.resolved()  # a kept server's: a merge, walked along the path alone (_MergedSrc)
            worked_out = node.position() if key is None else node.locate(path, key=key)
            got = memo.put(at, worked_out)
        return got

    def locate(self, path: Sequence[str | int] = (), *, key: bool = True) -> tuple[int, int]:
        return self._remembered(tuple(path), key)

    def position(self) -> tuple[int, int]:
        return self._remembered((), None)

    @property
    def line(self) -> int:
        return self.position()[0]

    @property
    def column(self) -> int:
        return self.position()[1]


class _KeptPath(_RememberedSrc):
    """A place in a kept document (its path from the document's root)."""

    __slots__ = ("_deferred", "_holder", "_index", "_path")
    _holder: KeptFile
    _index: int
    _deferred: bool
    _path: tuple[str | int, ...]

    def __init__(self, holder: KeptFile, index: int, deferred: bool, path: tuple[str | int, ...]) -> None:
        super().__init__()
        object.__setattr__(self, "_holder", holder)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_deferred", deferred)
        object.__setattr__(self, "_path", path)

    def _compute(self) -> Src:
        return Src.descend(self._holder.root(self._index, self._deferred), *self._path)

    def descend(self, *path: str | int) -> Src:
        return _KeptPath(self._holder, self._index, self._deferred, self._path + path)

    def _memo(self) -> tuple[validated.Positions, int, tuple[str | int, ...]]:
        return self._holder.positions, self._index, self._path

    def __reduce__(self) -> tuple[Any, ...]:
        return (_KeptPath, (self._holder, self._index, self._deferred, self._path))


_SET_PATH = tuple(setter(cls, name) for cls, name in (
    (LazySrc, "_node"), (_KeptPath, "_holder"), (_KeptPath, "_index"), (_KeptPath, "_deferred"),
    (_KeptPath, "_path"),
))


def _descended(src: _KeptPath, paths: Iterable[tuple[str | int, ...]]) -> list[Src]:
    """`src.descend(*path)` of each of `paths`, each made with a few calls in C
    (a kept facility's 75,000 racks and feeds on each warm run)."""
    set_node, set_holder, set_index, set_deferred, set_path = _SET_PATH
    base, each = src._path, itertools.repeat
    full = list(map(operator.add, each(base), paths))
    slots = (
        (set_node, each(None)), (set_holder, each(src._holder)), (set_index, each(src._index)),
        (set_deferred, each(src._deferred)), (set_path, full),
    )
    descended: list[Src] = made(_KeptPath, len(full), slots)
    return descended


class _ReadSrc(LazySrc):
    """A kept document's source map, from its file's parsed entry (or the file)."""

    __slots__ = ("_file", "_index")
    _file: KeptFile
    _index: int

    def __init__(self, file: KeptFile, index: int) -> None:
        super().__init__()
        object.__setattr__(self, "_file", file)
        object.__setattr__(self, "_index", index)

    def _compute(self) -> Src:
        docs = self._file.documents
        # The same bytes gave these documents when they were kept: anything else is a bug.
        assert isinstance(docs, list) and self._index < len(docs), "a kept file's documents changed"
        return docs[self._index].src

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ReadSrc, (self._file, self._index))


@dataclass
class _Keeping:
    """The files whose validated documents may be kept for the next run."""

    cache: Cache | None
    known: Sequence[str]
    # file -> (content key, its number of documents): each of a kind that keeps, typed cleanly
    offered: dict[str, tuple[str, int]] = field(default_factory=dict)
    files: list[KeptFile] = field(default_factory=list)  # those read as kept


Built = _Doc | _KeptDoc  # a document as the builder takes it


def _documents(
    problems: _Problems, files: Sequence[Path], options: ReadOptions, known: Sequence[str]
) -> tuple[list[list[Built]], _Keeping]:
    """Each file's documents of a known kind (_KeptDoc where an earlier run's
    validated ones stand for them); what is wrong with the others is a problem."""
    docs: list[list[Built]] = []
    read = read_files(files, options)
    keeping = _Keeping(read.cache, known)
    # In the order of `files`, however they were read: the findings do not depend on it.
    for path, outcome, key in zip(files, read.outcomes, read.keys, strict=True):
        shown = display_path(path)
        if isinstance(outcome, Kept):
            kept = _kept_docs(shown, outcome, keeping.files, options.carried)
            if kept is not None:
                keeping.offered[shown] = (outcome.key, len(kept))
                docs.append(list(kept))
                continue
            outcome = outcome.documents()  # an entry that does not decode: the file read as usual
        docs.append(list(_typed_all(problems, shown, outcome, keeping, key)))
    return docs, keeping


def _kept_docs(
    file: str, kept: Kept, kept_files: list[KeptFile], carried: Carried | None
) -> list[_KeptDoc] | None:
    """The documents of a kept file's entry, or None if it does not decode;
    decoded once for a resident process while the entry's bytes stay the same
    (its models are immutable: the same objects serve the next command)."""
    try:
        if carried is None:
            digest, docs = validated.decode(kept.payload)
        else:
            entry = hashlib.blake2b(kept.payload).digest()
            digest, docs = carried.get("validated", entry, tuple, lambda: validated.decode(kept.payload))
    except Exception:  # BadEntry, or anything else wrong with it
        return None
    # A model of the kind's own class: one of another class would be built as if it were.
    if not all(isinstance(d, validated.KeptServers) or _kind_of(d) for d in docs):
        return None
    holder = _kept_file(file, kept, digest, carried)
    kept_files.append(holder)
    return [_KeptDoc(holder, d, holder.source(d.index, d.deferred)) for d in docs]


def _kept_file(file: str, kept: Kept, digest: bytes, carried: Carried | None) -> KeptFile:
    """The holder of a kept file: in a resident process, the one the last
    commands used for the same name, content and entry (what it holds is made
    from those alone), renewed with this command's reading."""
    if carried is None:
        return KeptFile(file, kept, digest)
    bytes_ = hashlib.blake2b(file.encode() + b"\x00" + kept.key.encode() + b"\x00" + kept.payload).digest()
    holder = carried.get("kept file", bytes_, KeptFile, lambda: KeptFile(file, kept, digest))
    holder.renew(kept)
    holder.carried = True
    return holder


def _keeps(kind: str) -> bool:
    return kind in KINDS and KINDS[kind].keeps


def _kind_of(doc: validated.KeptModel) -> bool:
    """Whether a kept model is of its document's kind, and that kind keeps."""
    return _keeps(doc.kind) and type(doc.model) is KINDS[doc.kind].model


def _typed_all(
    problems: _Problems, shown: str, outcome: Parsed | OSError, keeping: _Keeping, key: str | None
) -> list[_Doc]:
    """A file's documents of a known kind; the file is offered for keeping
    (_Keeping.offered) when each is of a kind that keeps, read cleanly."""
    if isinstance(outcome, YamlProblem):
        problems.add(outcome.rule, Location(shown, outcome.line, outcome.column), outcome.message)
        return []
    if isinstance(outcome, OSError):
        problems.add(SCHEMA_FILE, Location(shown, 1, 1), f"cannot read: {outcome.strerror}")
        return []
    before = problems.raised(shown)
    every = [_typed(problems, shown, doc, keeping.known, i) for i, doc in enumerate(outcome)]
    typed = [d for d in every if d]
    if (
        key is not None
        and keeping.cache is not None
        and outcome
        and problems.raised(shown) == before
        and len(typed) == len(outcome)
        and all(_keeps(d.value["kind"]) for d in typed)
    ):
        keeping.offered[shown] = (key, len(typed))
    return typed


_YAML_TYPES = {
    "list": "a list",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "WrittenFloat": "a number",
    "bool": "a boolean",
    "date": "a date",
    "datetime": "a timestamp",
}


def without_anchors(value: dict[str, Any]) -> dict[str, Any]:
    """A document without its top-level `x-` keys, which hold anchors only (as in Docker Compose)."""
    return {k: v for k, v in value.items() if not k.startswith("x-")}


def _typed(
    problems: _Problems, file: str, doc: Document, known: Sequence[str], index: int = 0
) -> _Doc | None:
    if not isinstance(doc.value, dict):
        got = _YAML_TYPES.get(type(doc.value).__name__, "a scalar")
        message = f"a document must be a mapping with a `kind`, not {got}"
        problems.add(SCHEMA_DOCUMENT, _at(file, doc.src), message)
        return None
    value = without_anchors(doc.value)
    kind = value.get("kind")
    if kind is None:
        message = f"missing `kind` (one of {', '.join(known)})"
        problems.add(SCHEMA_DOCUMENT, _at(file, doc.src), message)
        return None
    if not isinstance(kind, str):  # `kind: [Facility]` is a list, not a kind
        got = _YAML_TYPES.get(type(kind).__name__, "a mapping")
        problems.add(SCHEMA_DOCUMENT, _at(file, doc.src, ["kind"]),
                     f"`kind` must be one of {', '.join(known)}, not {got}")
        return None
    if kind not in known:
        hint = did_you_mean(kind, known)
        problems.add(SCHEMA_DOCUMENT, _at(file, doc.src, ["kind"]), f"unknown kind '{clip(kind)}'{hint}")
        return None
    return _Doc(file, value, doc.src, index)


def _distinct(parts: Sequence[Any]) -> Iterator[Any]:
    """The distinct objects of `parts` (a document's servers share a few parts)."""
    return iter({id(part): part for part in parts}.values())


def _catalog_models_known(run: validated.ServerRun, fields: Mapping[str, Any]) -> bool:
    """Whether every kept server merged with a catalog model names one the catalog has."""
    merged = zip(run.catalogs, run.column("model"), strict=True)
    return all(model in fields for shape, model in merged if shape is not None)


def _at(file: str, src: Src, path: Sequence[str | int] = ()) -> Location:
    """Where a document (or the value at `path` in it) is written."""
    return Location(file, *src.locate(path, key=False))


def _kept_places(
    doc: _KeptDoc, kept: validated.KeptServers, fields: Mapping[str, dict[str, Any]]
) -> list[Placed[m.Server]]:
    """Where each kept server is written: the source maps _Builder._add_servers
    makes, the same merges of the same lazy maps (`fields`: the catalog's)."""
    defaults_src = doc.src.descend("defaults")
    return [
        Placed(one.server, doc.file, _kept_src(doc.src, defaults_src, one.index, one.defaults, one.catalog,
                                               one.server.model, fields))
        for one in kept.servers
    ]


def _kept_src(
    src: Src, defaults_src: Src, index: int, defaults: Shape, catalog: Shape | None, model: str | None,
    fields: Mapping[str, dict[str, Any]],
) -> Src:
    """A kept server's source map: its merge under its defaults, and under its catalog model's fields."""
    merged: Src = _MergedSrc(defaults, defaults_src, src.descend("servers", index))
    if catalog is not None:
        assert model is not None  # checked by the caller
        merged = _MergedSrc(catalog, _CatalogSrc(fields[model], merged), merged)
    return merged


# What a kept servers document's servers' source maps are made of (_KeptServerSrc).
_KeptContext = tuple["_KeptDoc", Src, validated.ServerRun, Mapping[str, dict[str, Any]]]


class _KeptServerSrc(_RememberedSrc):
    """The source map of a kept server placed by its document's columns (_kept_src),
    made when a position never asked before is asked: of its document's context
    (the document, the source map of its defaults, its servers, the catalog's
    fields) and its server's number there. Made by _kept_entries."""

    __slots__ = ("_at", "_ctx")
    _ctx: _KeptContext
    _at: int

    def _compute(self) -> Src:
        doc, defaults, run, fields = self._ctx
        at = self._at
        return _kept_src(doc.src, defaults, run.indexes[at], run.defaults[at], run.catalogs[at],
                         run.column("model")[at], fields)

    def _memo(self) -> tuple[validated.Positions, int, tuple[str | int, ...]]:
        # Kept apart from the document's own paths (a step -1 no path has), and
        # under the catalog it was merged with where it was (the entry's servers
        # are used only under the catalog they were kept with; the positions
        # entry is the file's). A finding on each of 10,000 servers once worked
        # out each one's merged map on every warm run: 4.8 of the rules' 5 s.
        doc, _, run, _ = self._ctx
        at = self._at
        merged: tuple[str | int, ...] = ("servers", run.indexes[at], -1)
        if run.catalogs[at] is not None:
            merged += (doc.holder.digest.hex(),)
        return doc.holder.positions, doc.doc.index, merged

    def __reduce__(self) -> str | tuple[Any, ...]:
        return self.resolved().__reduce__()  # pickled as the map it makes


_SET_SRC = (setter(LazySrc, "_node"), setter(_KeptServerSrc, "_ctx"), setter(_KeptServerSrc, "_at"))


# ---------------------------------------------------------------- building
class _Builder:
    def __init__(self, problems: _Problems) -> None:
        self.p = problems
        self.inv = Inventory()
        self._server_docs: list[tuple[_Doc, m.ServersDoc] | _KeptDoc] = []
        # Files whose validated documents are kept for the next run (checker.load.validated):
        # those offered, the documents recorded of each, those spoilt by a problem of
        # their own, those read afresh (whose entry is written).
        self.keeping = _Keeping(None, ())
        self._recorded: dict[str, list[validated.KeptDoc]] = {}
        self._spoilt: set[str] = set()
        self._fresh: set[str] = set()
        self._digest: bytes | None = None
        self._shared_parts = _SharedParts()
        # Servers mostly share their keys: one tuple for each set this load
        # reads, not one a server (_merge_values).
        self._key_tuples: KeyTuples = {}
        # Names written in documents that failed validation: a reference to one
        # is not reported again as dangling; that document's own error says why.
        self._unvalidated: set[tuple[str, str]] = set()

    def unique(self, table: dict[Any, Any], key: Any, what: str, new: Placed[Any]) -> bool:
        """Whether `key` is new in `table`; a duplicate is reported at `new`'s name."""
        if key in table:
            first = table[key]
            place = first.place if isinstance(first, ServerEntry) else first
            name = key if isinstance(key, str) else key[-1]
            self.p.add(
                SCHEMA_DUPLICATE_NAME,
                new.at(["name"], key=False),
                f"duplicate {what} name '{name}' (first defined at {place.file}:{place.src.line})",
            )
            return False
        return True

    def add(self, doc: Built) -> None:
        if isinstance(doc, _KeptDoc):
            self._add_kept(doc)
            return
        kind = doc.value["kind"]
        if kind not in KINDS:  # a knowledge table's: validated where the tables are merged
            self.inv.tables.append(Placed(doc.value, doc.file, doc.src))
            return
        self._fresh.add(doc.file)
        before = self.p.raised(doc.file)
        model = _validate(self.p, KINDS[kind].model, doc)
        if self.p.raised(doc.file) != before:
            self._spoilt.add(doc.file)
        if model is None:
            self._unvalidated.update((kind, name) for name in _written_names(doc.value))
            return
        before = self.p.raised(doc.file)
        KINDS[kind].add(self, doc, model)
        if kind != "Servers" and doc.file in self.keeping.offered:
            placed = self.p.raised(doc.file) == before
            kept = validated.KeptModel(*_place_in_file(doc), kind, model, placed)
            self._recorded.setdefault(doc.file, []).append(kept)

    def _add_kept(self, doc: _KeptDoc) -> None:
        """A document an earlier run validated, built as a read one is."""
        self._recorded.setdefault(doc.file, []).append(doc.doc)
        if isinstance(doc.doc, validated.KeptServers):
            self._server_docs.append(doc)  # built in finish(), as servers documents are
            return
        if isinstance(doc.doc, validated.KeptFacility):
            self._add_kept_facility(doc, doc.doc)
            return
        kind = doc.doc.kind
        KINDS[kind].add(self, _Doc(doc.file, {"kind": kind}, doc.src, doc.doc.index), doc.doc.model)

    def _add_kept_facility(self, doc: _KeptDoc, kept: validated.KeptFacility) -> None:
        """A kept facility document, placed as it was last time while it can be
        (_FacilityPlacing), else as a read one is: with no check of its racks
        and feeds where placing it reported nothing when it was kept and its
        name is free (what they are checked for is of the document alone), its
        racks and feeds placed by their columns (no model made)."""
        model = kept.model
        assert isinstance(model, m.Facility)
        placing = doc.holder.facility_placings.get(kept.index)
        if placing is not None and placing.holds(self.inv, model):
            placing.place(self.inv)
            return
        before = self.p.raised(doc.file)
        sizes = {table: len(getattr(self.inv, table)) for table in FACILITY_TABLES}
        clean = kept if kept.placed and model.name not in self.inv.facilities else None
        self._add_facility(_Doc(doc.file, {"kind": kept.kind}, doc.src, kept.index), model, clean)
        if doc.holder.carried and self.p.raised(doc.file) == before:
            doc.holder.facility_placings[kept.index] = _FacilityPlacing.of(model, self.inv, sizes)
        else:
            doc.holder.facility_placings.pop(kept.index, None)

    def missing(self, kind: str, name: str, table: dict[str, Any]) -> bool:
        """A reference to report as dangling: not defined, nor written in a broken document."""
        return name not in table and (kind, name) not in self._unvalidated

    def _defer_servers(self, doc: _Doc, shell: m.ServersDoc) -> None:
        # Servers are placed in finish(): they refer to every other kind.
        self._server_docs.append((doc, shell))

    def _add_facility(self, doc: _Doc, fac: m.Facility, kept: validated.KeptFacility | None = None) -> None:
        """A facility's entries placed, each checked against its facility alone;
        `kept`: a kept facility whose racks and feeds would report nothing, and
        are placed by their columns unchecked (_add_kept_facility)."""
        place = Placed(fac, doc.file, doc.src)
        if not self.unique(self.inv.facilities, fac.name, "facility", place):
            return
        self.inv.facilities[fac.name] = place
        units = fac.cooling.units if fac.cooling else 1
        for i, unit in enumerate(units if isinstance(units, list) else []):
            unit_place = Placed(unit, doc.file, doc.src.descend("cooling", "units", i))
            if self.unique(self.inv.cooling_units, (fac.name, unit.name), "cooling unit", unit_place):
                self.inv.cooling_units[(fac.name, unit.name)] = unit_place
        ups = fac.power.ups if fac.power else None
        for i, block in enumerate(ups.blocks if ups else []):
            block_place = Placed(block, doc.file, doc.src.descend("power", "ups", "blocks", i))
            if self.unique(self.inv.ups_blocks, (fac.name, block.name), "UPS block", block_place):
                self.inv.ups_blocks[(fac.name, block.name)] = block_place
            if ups is not None:
                self._check_mechanical(fac, ups, block, block_place)
        for i, panel in enumerate(fac.power.panels if fac.power else []):
            panel_place = Placed(panel, doc.file, doc.src.descend("power", "panels", i))
            if self.unique(self.inv.panels, (fac.name, panel.name), "panel", panel_place):
                self.inv.panels[(fac.name, panel.name)] = panel_place
            self._check_panel_block(fac, ups, panel, panel_place)
        if kept is not None:
            names = _FacilityNames.of(fac, kept.racks.column("name"), kept.racks.column("row"))
            self._place_kept_racks(doc, fac.name, kept)
        else:
            names = _FacilityNames.of(fac, [r.name for r in fac.racks], [r.row for r in fac.racks])
        for i, rack in enumerate(fac.racks if kept is None else ()):
            rack_place = Placed(rack, doc.file, doc.src.descend("racks", i))
            self._add_rack(fac.name, rack, rack_place)
            self._check_feed_blocks(fac, ups, rack, rack_place, names)
            self._check_feed_panels(fac, rack, rack_place, names)
        room_air = fac.cooling.room_air if fac.cooling else None
        if room_air is not None:
            self._unique_units(room_air, Placed(room_air, doc.file, doc.src.descend("cooling", "room_air")))
        served: dict[str, str] = {}  # rack -> the CDU that serves it
        for i, cdu in enumerate(fac.cdus):
            cdu_place = Placed(cdu, doc.file, doc.src.descend("cdus", i))
            self._unique_units(cdu, cdu_place)
            if self.unique(self.inv.cdus, (fac.name, cdu.name), "CDU", cdu_place):
                self.inv.cdus[(fac.name, cdu.name)] = cdu_place
                self._check_cdu(fac, cdu, cdu_place, served, names)

    def _unique_units(self, units: m.UnitSet, place: Placed[Any]) -> None:
        """A CDU set's or the air handlers' listed units have names of their own
        (the plant's are entities, checked in the entity table)."""
        seen: dict[str, Placed[m.CoolingUnit]] = {}
        for i, unit in enumerate(units.units if isinstance(units.units, list) else []):
            unit_place = Placed(unit, place.file, place.src.descend("units", i))
            if self.unique(seen, unit.name, "unit", unit_place):
                seen[unit.name] = unit_place

    def _check_mechanical(
        self, fac: m.Facility, ups: m.Ups, block: m.UpsBlock, place: Placed[m.UpsBlock]
    ) -> None:
        """What keeps a block's cooling running when it fails is said only where a
        block failure is designed for by moving load (2N, distributed): N+1
        modules share one bus, a catcher's reserve takes the whole block, and N
        designs no failure. A transfer goes to another block of the same UPS."""
        target = block.mechanical_transfer_to
        if target is None and not block.mechanical_redundant:
            return
        field = "mechanical_transfer_to" if target is not None else "mechanical_redundant"
        if ups.redundancy not in ("2N", "distributed"):
            self.p.add(
                SCHEMA_INVALID,
                place.at([field], key=True),
                f"UPS block {block.name}: {field} is for 2N and distributed UPS designs,"
                f" not {ups.redundancy}",
            )
            return
        blocks = [b.name for b in ups.blocks]
        if target is not None and target not in blocks:
            self.p.add(
                SCHEMA_REFERENCE,
                place.at([field], key=False),
                f"facility {fac.name} has no UPS block '{target}'{did_you_mean(target, blocks)}",
            )

    def _check_panel_block(
        self, fac: m.Facility, ups: m.Ups | None, panel: m.Panel, place: Placed[m.Panel]
    ) -> None:
        """A panel's `ups` is a block of its facility's UPS, one that feeds name
        (not a module of an N+1 bus)."""
        if panel.ups is None:
            return
        blocks = [b.name for b in ups.blocks] if ups else []
        if ups is None:
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["ups"], key=True),
                f"panel {panel.name}: facility {fac.name} has no UPS blocks (power.ups)",
            )
        elif panel.ups not in blocks:
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["ups"], key=False),
                f"panel {panel.name}: facility {fac.name} has no UPS block '{panel.ups}'"
                f"{did_you_mean(panel.ups, blocks)}",
            )
        elif ups.redundancy == "N+1":
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["ups"], key=True),
                f"panel {panel.name}: facility {fac.name}'s N+1 UPS is modules on one bus: its panels"
                " name no block",
            )

    def _check_feed_panels(
        self, fac: m.Facility, rack: m.Rack, place: Placed[m.Rack], names: _FacilityNames
    ) -> None:
        """A feed's panel is one of its facility's, and a feed names no other UPS
        block than its panel is fed from: the panel checks would otherwise move
        load onto the wrong distribution."""
        panels = names.panels
        for i, feed in enumerate(rack.feeds):
            if feed.panel is None:
                continue
            panel = panels.get(feed.panel)
            if panel is None:
                hint = did_you_mean(feed.panel, list(panels)) if panels else " (it lists no power.panels)"
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["feeds", i, "panel"], key=False),
                    f"feed {feed.name} of rack {rack.name}: facility {fac.name} has no panel"
                    f" '{feed.panel}'{hint}",
                )
            elif feed.phase == 3 and panel.phase != 3:
                self.p.add(
                    SCHEMA_INVALID,
                    place.at(["feeds", i, "panel"], key=False),
                    f"feed {feed.name} of rack {rack.name} is three-phase, but its panel {panel.name} is"
                    " single-phase: a three-phase feed is a circuit of a three-phase panel",
                )
            elif panel.ups is not None and feed.ups is not None and feed.ups != panel.ups:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["feeds", i, "ups"], key=False),
                    f"feed {feed.name} of rack {rack.name} is on UPS block {feed.ups}, but its panel"
                    f" {panel.name} is fed from {panel.ups}",
                )
        for i, feed in enumerate(rack.feeds):
            if feed.line is not None:
                self._check_feed_line(
                    feed, panels.get(feed.panel or ""), rack, place.at(["feeds", i, "line"], key=False)
                )

    def _check_feed_line(self, feed: m.Feed, panel: m.Panel | None, rack: m.Rack, at: Location) -> None:
        """A feed's `line` is that of a single-phase feed on a three-phase panel,
        and one its voltage hangs from (Panel.lines_for): the panel's line
        figures would otherwise load a line the feed cannot be on."""
        where = f"feed {feed.name} of rack {rack.name}"
        if feed.panel is None:
            problem = "names a line but no panel: a line is one of its panel's"
        elif panel is None:
            return  # its unknown panel is the error
        elif panel.phase != 3:
            problem = f"names a line of panel {panel.name}, which is single-phase"
        elif feed.phase == 3:
            problem = "is three-phase: it is on every line of its panel, and names none"
        elif feed.line not in panel.lines_for(feed.voltage):
            lines = panel.lines_for(feed.voltage)
            how = "line to neutral" if lines == m.LINE_TO_NEUTRAL else "line to line"
            problem = (f"at {feed.voltage:g} V off the {panel.voltage:g} V panel {panel.name} is wired"
                       f" {how}: its line is one of {', '.join(lines)}, not {feed.line}")
        else:
            return
        self.p.add(SCHEMA_INVALID, at, f"{where} {problem}")

    def _check_feed_blocks(
        self, fac: m.Facility, ups: m.Ups | None, rack: m.Rack, place: Placed[m.Rack], names: _FacilityNames
    ) -> None:
        """A feed names a UPS block of its facility where the blocks are mapped
        (Ups.mapped), and only then: an unmapped feed would be on no block, and
        the block checks would pass on less than the load. A feed on a panel
        fed from a block (Panel.ups) is on that block without naming it."""
        blocks, fed_from = names.blocks, names.fed_from
        for i, feed in enumerate(rack.feeds):
            # Placed only when it is a problem: working out every feed's position
            # would work out the whole facility's source map on every run.
            if feed.ups is None:
                if ups is not None and ups.mapped and fed_from.get(feed.panel or "") is None:
                    self.p.add(
                        SCHEMA_MISSING_FIELD,
                        place.at(["feeds", i]),
                        f"feed {feed.name} of rack {rack.name}: say which UPS block feeds it (ups: NAME"
                        f"{', or a panel whose ups names it' if fed_from else ''});"
                        f" facility {fac.name} has {', '.join(blocks)} ({ups.redundancy})",
                    )
            elif ups is None:
                where = place.at(["feeds", i, "ups"], key=True)
                self.p.add(SCHEMA_REFERENCE, where, f"facility {fac.name} has no UPS blocks (power.ups)")
            elif feed.ups not in blocks:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["feeds", i, "ups"], key=False),
                    f"facility {fac.name} has no UPS block '{feed.ups}'{did_you_mean(feed.ups, blocks)}",
                )
            elif ups.redundancy == "N+1":
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["feeds", i, "ups"], key=True),
                    f"facility {fac.name}'s N+1 UPS is modules on one bus: its feeds name no block",
                )

    def _check_cdu(
        self, fac: m.Facility, cdu: m.Cdu, place: Placed[m.Cdu], served: dict[str, str], names: _FacilityNames
    ) -> None:
        """A CDU serves racks and rows of its own facility, and a rack has one CDU (a
        row's several CDUs that share its racks are one entry with `units`)."""
        lists = (
            ("racks", cdu.racks, names.racks, names.rack_set), ("rows", cdu.rows, names.rows, names.by_row)
        )
        for field_name, given, known, kept in lists:
            for i, name in enumerate(given):
                if name not in kept:
                    what = "rack" if field_name == "racks" else "row"
                    self.p.add(
                        SCHEMA_REFERENCE,
                        place.at([field_name, i], key=False),
                        f"CDU {cdu.name}: no {what} '{name}' in facility {fac.name}"
                        f"{did_you_mean(name, known)}",
                    )
        mine = [(i, "racks", name) for i, name in enumerate(cdu.racks)]
        mine += [(i, "rows", rack) for i, row in enumerate(cdu.rows) for rack in names.by_row.get(row, ())]
        for i, field_name, rack in mine:
            other = served.setdefault(rack, cdu.name)
            if other != cdu.name:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at([field_name, i], key=False),
                    f"rack {rack} is served by CDU {other} already: CDUs that share racks are one entry "
                    "with `units` and `redundancy`",
                )

    def _place_kept_racks(self, doc: _Doc, facility: str, kept: validated.KeptFacility) -> None:
        """A kept facility's racks and feeds placed as _add_rack places them, by
        their columns: no model made, and no check (none would report)."""
        racks, feeds, feed_racks, file = kept.racks, kept.feeds, kept.feed_racks, doc.file
        names = racks.column("name")
        root = doc.src
        assert isinstance(root, _KeptPath)  # as every kept document's (KeptFile.source)
        rack_srcs = _descended(root, zip(itertools.repeat("racks"), range(len(racks))))
        at = itertools.repeat
        rack_keys = zip(at(facility), names, strict=False)
        self.inv.racks.update(zip(rack_keys, _run_placed(racks, file, rack_srcs), strict=True))
        feed_srcs = _descended(root, zip(at("racks"), feed_racks, at("feeds"), kept.feed_at, strict=False))
        keys = zip(at(facility), map(names.__getitem__, feed_racks), feeds.column("name"), strict=False)
        self.inv.feeds.update(zip(keys, _run_placed(feeds, file, feed_srcs), strict=True))

    def _add_rack(self, facility: str, rack: m.Rack, place: Placed[m.Rack]) -> None:
        key = (facility, rack.name)
        if not self.unique(self.inv.racks, key, "rack", place):
            return
        self.inv.racks[key] = place
        for i, feed in enumerate(rack.feeds):
            feed_place = Placed(feed, place.file, place.src.descend("feeds", i))
            feed_key = (facility, rack.name, feed.name)
            if self.unique(self.inv.feeds, feed_key, "feed", feed_place):
                self.inv.feeds[feed_key] = feed_place
        if rack.redundancy == "2N":
            self._check_sides(rack, place)
        self._check_ats(rack, place)

    def _check_ats(self, rack: m.Rack, place: Placed[m.Rack]) -> None:
        """An ATS switches between feeds of its own rack, under a name of its own;
        psu_order names the rack's feeds and switches."""
        feeds = [f.name for f in rack.feeds]
        for i, name in enumerate(rack.psu_order or []):
            known = feeds + [a.name for a in rack.ats]
            if name not in known:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["psu_order", i], key=False),
                    f"rack {rack.name} has no feed or ATS '{name}'{did_you_mean(name, known)}",
                )
        for i, ats in enumerate(rack.ats):
            if ats.name in feeds:
                self.p.add(
                    SCHEMA_DUPLICATE_NAME,
                    place.at(["ats", i, "name"], key=False),
                    f"ATS {ats.name} has the name of a feed of rack {rack.name}",
                )
            for end in ("primary", "secondary"):
                name = getattr(ats, end)
                if name not in feeds:
                    self.p.add(
                        SCHEMA_REFERENCE,
                        place.at(["ats", i, end], key=False),
                        f"rack {rack.name} has no feed '{name}'{did_you_mean(name, feeds)}",
                    )

    def _check_sides(self, rack: m.Rack, place: Placed[m.Rack]) -> None:
        for i, feed in enumerate(rack.feeds):
            if feed.side is None:
                self.p.add(
                    SCHEMA_FEED_SIDES,
                    place.at(["feeds", i]),
                    f"rack {rack.name} is 2N: feed {feed.name} needs `side: A` or `side: B`",
                )
        missing = {"A", "B"} - {f.side for f in rack.feeds}
        if missing:
            self.p.add(
                SCHEMA_FEED_SIDES,
                place.at(["redundancy"]),
                f"rack {rack.name} is 2N but has no feed on side {' or '.join(sorted(missing))}",
            )

    def _add_workloads(self, doc: _Doc, wl: m.WorkloadsDoc) -> None:
        for i, w in enumerate(wl.workloads):
            place = Placed(w, doc.file, doc.src.descend("workloads", i))
            if self.unique(self.inv.workloads, w.name, "workload", place):
                self.inv.workloads[w.name] = self._with_shape(place)

    def _with_shape(self, place: Placed[m.Workload]) -> Placed[m.Workload]:
        """The workload with its catalog model's shape where it gives none itself."""
        w = place.value
        if w.model is None:
            return place
        catalog = self.inv.language_models.get(w.model)
        if catalog is None:
            if self.missing("LanguageModels", w.model, self.inv.language_models):
                hint = did_you_mean(w.model, self.inv.language_models)
                where = place.at(["model"], key=False)
                self.p.add(SCHEMA_REFERENCE, where, f"unknown model '{w.model}'{hint}")
            return place
        shaped = with_shape(w, catalog.value)
        if shaped.active_params_b is not None and shaped.active_params_b > shaped.params_b:
            self.p.add(
                SCHEMA_INVALID, place.at(["params_b"], key=False),
                f"params_b {w.params_b:g} is less than the {shaped.active_params_b:g}B active parameters "
                f"of model '{w.model}'",
            )
        return Placed(shaped, place.file, place.src)

    def _add_languagemodels(self, doc: _Doc, lm: m.LanguageModelsDoc) -> None:
        for i, model in enumerate(lm.models):
            place = Placed(model, doc.file, doc.src.descend("models", i))
            if self.unique(self.inv.language_models, model.name, "model", place):
                self.inv.language_models[model.name] = place

    def _add_waivers(self, doc: _Doc, wv: m.WaiversDoc) -> None:
        for i, w in enumerate(wv.waivers):
            self.inv.waivers.append(Placed(w, doc.file, doc.src.descend("waivers", i)))

    def _add_gpumodels(self, doc: _Doc, gm: m.GpuModelsDoc) -> None:
        for i, g in enumerate(gm.gpus):
            place = Placed(g, doc.file, doc.src.descend("gpus", i))
            if self.unique(self.inv.gpu_models, g.name, "GPU model", place):
                self.inv.gpu_models[g.name] = place

    def _add_servermodels(self, doc: _Doc, sm: m.ServerModelsDoc) -> None:
        raw = doc.value["servers"]
        for i, s in enumerate(sm.servers):
            place = Placed(s, doc.file, doc.src.descend("servers", i))
            if self.unique(self.inv.server_models, s.name, "server model", place):
                self.inv.server_models[s.name] = place
                self.inv.server_model_fields[s.name] = {
                    k: v for k, v in raw[i].items() if k not in m.CATALOG_META
                }

    # ------------------------------------------------------------ servers
    def finish(self) -> Inventory:
        for place in self.inv.server_models.values():
            self._check_gpu_ref(place.value.gpu, place.file, place.src)
        # Taken off the list as they are validated: each file's parsed values are
        # freed once its servers are models, not all kept until the last file.
        pending = self._server_docs[::-1]
        self._server_docs = []
        while pending:
            item = pending.pop()
            if isinstance(item, _KeptDoc):
                self._add_kept_servers(item)
            else:
                self._add_servers(*item)
        self._check_waiver_entities()
        self._keep()
        self.inv.kept = self.keeping.files
        return self.inv

    def _add_servers(self, doc: _Doc, shell: m.ServersDoc) -> None:
        # Recorded for the next run if its file may be kept, until a problem of its own shows.
        record: list[validated.KeptServer] | None = [] if doc.file in self.keeping.offered else None
        before = self.p.raised(doc.file)
        if shell.facility not in self.inv.facilities:
            self._spoilt.add(doc.file)
            if not self.missing("Facility", shell.facility, self.inv.facilities):
                return
            hint = did_you_mean(shell.facility, self.inv.facilities)
            loc = Location(doc.file, *doc.src.locate(["facility"], key=False))
            self.p.add(SCHEMA_REFERENCE, loc, f"unknown facility '{shell.facility}'{hint}")
            return
        defaults_src = doc.src.descend("defaults")
        # PIECE servers at a time, merged, validated and placed: what is kept of a
        # piece is its valid servers, never every server's merged values (a
        # million `- {}` once held 500 bytes each, for 7 bytes of YAML).
        for start in range(0, len(shell.servers), PIECE):
            merged = [
                self._merge_server(doc, shell.defaults, defaults_src, raw, doc.src.descend("servers", i))
                for i, raw in enumerate(shell.servers[start : start + PIECE], start)
            ]
            values = [self._shared_parts(v) for v, _ in merged]
            servers: list[m.Server | None]
            try:
                servers = list(_servers().validate_python(values))
            except ValidationError:
                servers = self._valid_only(doc.file, values, merged)
            # Merging and validating are the file's own; placing depends on other files.
            if self.p.raised(doc.file) != before:
                self._spoilt.add(doc.file)
                record = None
            for i, ((_, src), server) in enumerate(zip(merged, servers, strict=True), start):
                if server is not None:
                    if record is not None:
                        record = _recorded(record, i, server, src)
                    place = Placed(server, doc.file, src)
                    self._place_server(shell.facility, shell.rollout_date, server, place)
            before = self.p.raised(doc.file)
        if record is not None:
            done = tuple(record)
            kept = validated.KeptServers(*_place_in_file(doc), shell.facility, shell.rollout_date, done)
            self._recorded.setdefault(doc.file, []).append(kept)

    # ------------------------------------------------------------ kept servers
    def _catalog_digest(self) -> bytes:
        if self._digest is None:
            broken = sorted(name for kind, name in self._unvalidated if kind == "ServerModels")
            self._digest = validated.catalog_digest(self.inv.server_model_fields, broken)
        return self._digest

    def _add_kept_servers(self, doc: _KeptDoc) -> None:
        """The servers an earlier run validated from this very document, placed as
        _add_servers places them; the document is read as usual when they cannot
        be used (made with another catalog, their facility gone)."""
        kept = doc.doc
        assert isinstance(kept, validated.KeptServers)
        run = kept.servers
        assert isinstance(run, validated.ServerRun)  # as validated.decode reads every servers document
        fields = self.inv.server_model_fields
        if (
            doc.holder.digest != self._catalog_digest()
            or kept.facility not in self.inv.facilities
            or not _catalog_models_known(run, fields)
        ):
            self._add_read(doc)
            return
        placing = doc.holder.placings.get(kept.index)
        if placing is not None and placing.holds(self.inv):
            self.inv.servers.update(zip(placing.names, placing.entries, strict=True))
            return
        clean = self._placed_by_columns(doc, kept, run)
        if not clean:  # something to report: one by one, as a read document's servers are placed
            places = doc.holder.places(kept.index, functools.partial(_kept_places, doc, kept, fields))
            before = self.p.raised(doc.file)
            for one, place in zip(run, places, strict=True):
                self._place_server(kept.facility, kept.rollout_date, one.server, place)
            clean = self.p.raised(doc.file) == before
        if doc.holder.carried and clean:
            self._remember_placing(doc.holder, kept.index, run.column("name"))

    def _placed_by_columns(
        self, doc: _KeptDoc, kept: validated.KeptServers, run: validated.ServerRun
    ) -> bool:
        """Place a kept document's servers as _place_server places them, when a
        column at a time shows it would report nothing (their names new, their
        racks, workloads and GPU models there, their power and height given, no
        PSU cabled by `psu.feeds` and no rack-scale system): each server's model
        is then made only when a later stage reads it. False (nothing placed)
        where anything would be reported: they are placed one by one."""
        inv = self.inv
        names, racks, workloads, power, position, height, gpu, psu, trays = map(run.column, (
            "name", "rack", "workload", "power_w", "position", "u_height", "gpu", "psu", "trays"
        ))
        if (
            len(set(names)) != len(names)
            or not inv.servers.keys().isdisjoint(names)
            or not all(map(inv.racks.__contains__, zip(itertools.repeat(kept.facility), racks)))
            or not inv.workloads.keys() >= set(workloads) - {None}
            or not all(map(operator.is_not, power, itertools.repeat(None)))
            or any(h is None for p, h in zip(position, height, strict=True) if p is not None)
            or any(g is not None and g.model not in inv.gpu_models for g in _distinct(gpu))
            or any(p is not None and p.feeds is not None for p in _distinct(psu))
            or any(t is not None for t in trays)
        ):
            return False
        ctx: _KeptContext = (doc, doc.src.descend("defaults"), run, inv.server_model_fields)
        facility, rollout, file = kept.facility, kept.rollout_date, doc.file
        entries = _kept_entries(run, facility, rollout, file, ctx)
        inv.servers.update(zip(names, entries, strict=True))
        return True

    def _remember_placing(self, holder: KeptFile, index: int, names: Sequence[str]) -> None:
        """How a kept document's servers were placed with nothing to report (_Placing)."""
        placing = _Placing.of([self.inv.servers[name] for name in names], self.inv)
        if placing is None:
            holder.placings.pop(index, None)
        else:
            holder.placings[index] = placing

    def _add_read(self, doc: _KeptDoc) -> None:
        """A kept servers document read and built now, in its place."""
        recorded = self._recorded.get(doc.file, [])
        if doc.doc in recorded:
            recorded.remove(doc.doc)  # built afresh: recorded again as it is built
        outcome = doc.holder.documents
        assert isinstance(outcome, list) and doc.doc.index < len(outcome), "a kept file's documents changed"
        typed = _typed(self.p, doc.file, outcome[doc.doc.index], self.keeping.known, doc.doc.index)
        if typed is None:
            return
        self.add(typed)
        while self._server_docs:  # what add deferred, built here in its place
            item = self._server_docs.pop(0)
            assert not isinstance(item, _KeptDoc)
            self._add_servers(*item)

    def _keep(self) -> None:
        """The validated documents of each file offered, read afresh and loaded cleanly,
        kept for the next run."""
        cache = self.keeping.cache
        if cache is None:
            return
        for file in sorted(self._fresh & self._recorded.keys()):
            docs = self._recorded[file]
            key, count = self.keeping.offered.get(file, ("", -1))
            if file in self._spoilt or len(docs) != count:
                continue
            try:
                payload = validated.encode(self._catalog_digest(), docs)
            except Unencodable:
                continue
            cache.put(validated.key(key), payload)

    def _valid_only(
        self, file: str, values: list[dict[str, Any]], merged: list[tuple[Any, Src]]
    ) -> list[m.Server | None]:
        """Each server of a piece that failed, validated alone; the errors of those that fail."""
        out: list[m.Server | None] = []
        for value, (_, src) in zip(values, merged, strict=True):
            try:
                out.append(m.Server.model_validate(value))
            except ValidationError as exc:
                # Relative to the server (`gpu.count`), at its place in the file.
                _report_validation(self.p, exc, m.Server, file, src)
                out.append(None)
        return out

    def _merge_server(
        self,
        doc: _Doc,
        defaults: dict[str, Any],
        defaults_src: Src,
        raw: dict[str, Any],
        src: Src,
    ) -> tuple[dict[str, Any], Src]:
        value, vsrc = _deep_merge((defaults, defaults_src), (raw, src), self._key_tuples)
        model = value.get("model")
        if not isinstance(model, str):
            return value, vsrc
        fields = self.inv.server_model_fields.get(model)
        if fields is None:
            if not self.missing("ServerModels", model, self.inv.server_models):
                return value, vsrc
            hint = did_you_mean(model, self.inv.server_models)
            self.p.add(
                SCHEMA_REFERENCE,
                Location(doc.file, *vsrc.locate(["model"], key=False)),
                f"unknown server model '{clip(model)}'{hint}",
            )
            return value, vsrc
        # Catalog values are blamed on the server's `model:` line, where they came in.
        return _deep_merge((fields, _CatalogSrc(fields, vsrc)), (value, vsrc), self._key_tuples)

    def _place_server(
        self, facility: str, rollout_date: dt.date | None, server: m.Server, place: Placed[m.Server]
    ) -> None:
        if not self.unique(self.inv.servers, server.name, "server", place):
            return
        self.inv.servers[server.name] = ServerEntry(server, facility, rollout_date, place)
        if (facility, server.rack) not in self.inv.racks:
            racks = [r for (f, r) in self.inv.racks if f == facility]
            hint = did_you_mean(server.rack, racks)
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["rack"], key=False),
                f"no rack '{server.rack}' in facility {facility}{hint}",
            )
        if server.workload is not None and self.missing("Workloads", server.workload, self.inv.workloads):
            hint = did_you_mean(server.workload, self.inv.workloads)
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["workload"], key=False),
                f"unknown workload '{server.workload}'{hint}",
            )
        # A device with no position and no u_height is not rack-mounted: it takes no U.
        needed = ("power_w", "u_height") if server.position is not None else ("power_w",)
        for name in needed:
            if getattr(server, name) is None:
                self.p.add(
                    SCHEMA_MISSING_FIELD,
                    place.at(),
                    f"server {server.name}: no `{name}` (give it or a catalog `model` that has it)",
                )
        self._check_gpu_ref(server.gpu, place.file, place.src)
        self._check_psu_feeds(facility, server, place)
        if server.trays is not None and server.psu is not None:
            self._add_shelves(facility, server, server.psu, place)

    def _add_shelves(self, facility: str, server: m.Server, psu: m.Psu, place: Placed[m.Server]) -> None:
        """A rack-scale system's PSUs are its power shelves, each an entity placed
        at the line that cables it: its psu.feeds entry, else its rack's
        psu_order entry, else the server's psu (its `model:` line, from the catalog)."""
        rack = self.inv.racks.get((facility, server.rack))
        names = m.psu_feed_names(psu, rack.value.psu_order if rack is not None else None)
        for i in range(psu.count):
            feed = names[i] if names is not None else None
            if feed is None:
                where = Placed(psu, place.file, place.src.descend("psu"))
            elif psu.feeds is not None:  # at the feed's name (a few systems: worked out now)
                where = Placed(psu, place.file, Src(*place.src.locate(["psu", "feeds", feed], key=True)))
            else:
                assert rack is not None and rack.value.psu_order  # psu_feed_names read it
                where = Placed(psu, rack.file, rack.src.descend("psu_order", i % len(rack.value.psu_order)))
            shelf = m.PowerShelf(number=i + 1, feed=feed, rating_w=psu.rating_w, phase=psu.phase)
            key = (facility, server.rack, server.name, str(i + 1))
            self.inv.shelves[key] = Placed(shelf, where.file, where.src)

    def _check_psu_feeds(self, facility: str, server: m.Server, place: Placed[m.Server]) -> None:
        """`psu.feeds` names feeds of the server's own rack."""
        rack = self.inv.racks.get((facility, server.rack))
        if server.psu is None or server.psu.feeds is None or rack is None:
            return
        phases = {f.name: f.phases for f in rack.value.feeds} | {a.name: None for a in rack.value.ats}
        for name, count in server.psu.feeds.items():
            if name not in phases:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["psu", "feeds", name], key=True),
                    f"rack {server.rack} has no feed '{name}'{did_you_mean(name, list(phases))}",
                )
            elif isinstance(count, dict):
                self._check_psu_phases(server, name, phases[name], count, place)
            elif server.psu.phase == 3 and not phases[name]:
                what = "an ATS" if phases[name] is None else "a single-phase feed"
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["psu", "feeds", name], key=True),
                    f"server {server.name}: its three-phase PSUs (psu.phase: 3) cannot be on {name}, {what}",
                )

    def _check_psu_phases(
        self,
        server: m.Server,
        name: str,
        phases: tuple[str, ...] | None,
        counts: dict[m.Phase, int],
        place: Placed[m.Server],
    ) -> None:
        """PSUs given by phase are on phases their feed has: L1-L3 line to
        neutral, L1-L2, L2-L3, L3-L1 line to line (208 V)."""
        if not phases:
            what = "an ATS gives one circuit" if phases is None else "it is single-phase"
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["psu", "feeds", name]),
                f"server {server.name}: PSUs on {name} have no phase to give ({what}): give a count",
            )
            return
        for phase in counts:
            if phase not in phases:
                self.p.add(
                    SCHEMA_REFERENCE,
                    place.at(["psu", "feeds", name, phase], key=True),
                    f"feed {name} of rack {server.rack} has phases {', '.join(phases)}, not {phase}",
                )

    def _check_gpu_ref(self, gpu: m.GpuRef | None, file: str, src: Src) -> None:
        if gpu is not None and self.missing("GpuModels", gpu.model, self.inv.gpu_models):
            hint = did_you_mean(gpu.model, self.inv.gpu_models)
            self.p.add(
                SCHEMA_REFERENCE,
                Location(file, *src.locate(["gpu", "model"], key=False)),
                f"unknown GPU model '{gpu.model}'{hint}",
            )

    def _check_waiver_entities(self) -> None:
        """A waiver for an entity that does not exist is an error, and only that:
        it is dropped, so it is not also reported as unused."""
        if not self.inv.waivers:
            return  # no entity to look up: not every entity's id made (6 ms at 10,000 servers)
        entities = self.inv.entities()
        valid = []
        for place in self.inv.waivers:
            entity = place.value.entity
            # An entity glob (`rack/sh1/A0*`) must match at least one entity.
            if entity in entities or any(fnmatch.fnmatchcase(e, entity) for e in entities):
                valid.append(place)
                continue
            hint = did_you_mean(entity, entities)
            self.p.add(
                SCHEMA_REFERENCE,
                place.at(["entity"], key=False),
                f"waiver names unknown entity '{entity}'{hint}",
            )
        self.inv.waivers = valid


def _place_in_file(doc: _Doc) -> tuple[int, bool]:
    """A document's index in its file, and whether the fast path read it (its
    source map then comes back from the file's text; another's from its parsed entry)."""
    at = fastpath.deferred_index(doc.src)
    return (doc.index if at is None else at), at is not None


def _recorded(
    record: list[validated.KeptServer], index: int, server: m.Server, src: Src
) -> list[validated.KeptServer] | None:
    """`record` with a server and the shapes of the merges its source map is
    made of (_merge_server's), or None if its map is not made so."""
    catalog: Shape | None = None
    if isinstance(src, _MergedSrc) and isinstance(src._base, _CatalogSrc):
        catalog, src = src._shape, src._over
    if not isinstance(src, _MergedSrc):
        return None
    record.append(validated.KeptServer(index, server, src._shape, catalog))
    return record


def with_shape(workload: m.Workload, model: m.LanguageModel) -> m.Workload:
    """The workload with the catalog model's shape fields where it gives none."""
    shape = {f: getattr(model, f) for f in m.SHAPE_FIELDS if getattr(workload, f) is None}
    return workload.model_copy(update=shape)


@dataclass(frozen=True)
class Kind:
    """One `kind:` of inventory document: everything else about kinds (the
    JSON Schema's union, the "one of ..." messages, the build order, the names a
    broken document still defines) is derived from its row in KINDS."""

    model: type[m.Model]
    # Where the names it defines are written, for references to a document that
    # failed validation (not to be reported again as dangling): a list field
    # (`workloads:`), SELF (the document is one named entry: a Facility), or
    # None (servers are checked one by one; waivers define no names).
    items: str | None
    # Built in this order, ties in file order: a kind after those its entries
    # refer to (servers name racks, workloads and catalog models).
    order: int
    # A function, not a bound method kept on the builder: a builder holding its
    # own methods is a reference cycle, and with the cycle collector paused (as
    # the command line runs) it would keep every model alive to the end of the run.
    add: Callable[[_Builder, _Doc, Any], None]
    # A catalog kind: knowledge, which a rule folder may hold too (docs/knowledge.md).
    catalog: bool = False
    # Its validated model is kept for the next run (checker.load.validated): building
    # it reads nothing of the document but the model and where it is written.
    keeps: bool = True


SELF = "."
KINDS: dict[str, Kind] = {
    "Facility": Kind(m.Facility, SELF, 2, _Builder._add_facility),
    "Servers": Kind(m.ServersDoc, None, 4, _Builder._defer_servers),
    "Workloads": Kind(m.WorkloadsDoc, "workloads", 3, _Builder._add_workloads),
    "Waivers": Kind(m.WaiversDoc, None, 4, _Builder._add_waivers),
    "GpuModels": Kind(m.GpuModelsDoc, "gpus", 0, _Builder._add_gpumodels, catalog=True),
    # Its entries' fields are merged under servers as written: its raw values are read.
    "ServerModels": Kind(m.ServerModelsDoc, "servers", 1, _Builder._add_servermodels, catalog=True,
                         keeps=False),
    "LanguageModels": Kind(m.LanguageModelsDoc, "models", 0, _Builder._add_languagemodels, catalog=True),
}


def _written_names(value: dict[str, Any]) -> list[str]:
    """The names a raw document defines, read without validating it."""
    where = KINDS[value["kind"]].items
    items = [] if where is None else [value] if where == SELF else value.get(where, [])
    if not isinstance(items, list):
        return []
    return [i["name"] for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)]


def _flat_src(value: Any, pos: tuple[int, int]) -> Src:
    """A source map that puts every part of `value` at one position."""
    if isinstance(value, dict):
        return Src(
            *pos, children={k: _flat_src(v, pos) for k, v in value.items()}, keys=dict.fromkeys(value, pos)
        )
    return Src(*pos)


class _CatalogSrc(LazySrc):
    """A catalog model's fields, all placed at the server's `model:` value."""

    __slots__ = ("_fields", "_server")
    _fields: dict[str, Any]
    _server: Src

    def __init__(self, fields: dict[str, Any], server: Src) -> None:
        super().__init__()
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_server", server)

    def _compute(self) -> Src:
        return _flat_src(self._fields, self._server.locate(["model"], key=False))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_CatalogSrc, (self._fields, self._server))


def _deep_merge(
    base: tuple[dict[str, Any], Src], over: tuple[dict[str, Any], Src], interned: KeyTuples | None = None
) -> tuple[dict[str, Any], Src]:
    """`over` wins; nested mappings merge key by key, and so do their source maps
    (when first asked for: merging every server's map up front costs more than
    the few positions a run needs). `interned`: the load's key tuples."""
    (bval, bsrc), (oval, osrc) = base, over
    values, shape = _merge_values(bval, oval, {} if interned is None else interned)
    return values, _MergedSrc(shape, bsrc, osrc)


# A merge's Shape (checker.load.validated) is kept instead of the values, which
# can then be freed (about 4 kB a server).
# Each distinct key tuple once, per load (a _Builder's), never module-wide.
KeyTuples = dict[tuple[str, ...], tuple[str, ...]]


def _merge_values(
    base: dict[str, Any], over: dict[str, Any], interned: KeyTuples
) -> tuple[dict[str, Any], Shape]:
    keys = tuple(over)
    keys = interned.setdefault(keys, keys)
    if not base:  # no defaults: the usual case, one copy in C
        return dict(over), (keys, None)
    values = dict(base)
    nested: dict[str, Shape] = {}
    for k, v in over.items():
        old = values.get(k)
        if isinstance(v, dict) and isinstance(old, dict):
            values[k], nested[k] = _merge_values(old, v, interned)
        else:
            values[k] = v
    return values, (keys, nested or None)


def _merge_src(shape: Shape, bsrc: Src, osrc: Src) -> Src:
    children: dict[str, Src] = dict(bsrc.children) if isinstance(bsrc.children, dict) else {}
    keys = dict(bsrc.keys or {})
    ochildren = osrc.children if isinstance(osrc.children, dict) else {}
    okeys = osrc.keys or {}
    # Read once: each read of a lazy map's line is a lookup through its chain.
    where = (osrc.line, osrc.column)
    names, nested = shape
    for k in names:
        osub = ochildren.get(k, osrc)
        sub = nested.get(k) if nested else None
        children[k] = osub if sub is None else _merge_src(sub, children.get(k, bsrc), osub)
        keys[k] = okeys.get(k, where)
    return Src(*where, children=children, keys=keys)


class _MergedSrc(LazySrc):
    """The source map of `_deep_merge`'s result."""

    __slots__ = ("_base", "_over", "_shape")
    _shape: Shape
    _base: Src
    _over: Src

    def __init__(self, shape: Shape, base: Src, over: Src) -> None:
        super().__init__()
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_over", over)

    def _compute(self) -> Src:
        return _merge_src(self._shape, self._base, self._over)

    # A position in the merge is found by walking the path alone, each step as
    # _merge_src would make it: a finding on each of 10,000 servers once worked
    # out each one's whole merged map (every nested part of its own mapping,
    # its defaults and its catalog model), 4.3 s of a 7.4 s cold audit.
    def child(self, step: str | int) -> Src | None:
        if self._node is not None:
            return self._node.child(step)
        if not isinstance(step, str):
            return None  # a merge's children are a mapping's
        names, nested = self._shape
        if step not in names:
            return self._base.child(step)
        over = self._over.child(step) or self._over
        sub = nested.get(step) if nested else None
        return over if sub is None else _MergedSrc(sub, self._base.child(step) or self._base, over)

    def key_position(self, step: str) -> tuple[int, int] | None:
        if self._node is not None:
            return self._node.key_position(step)
        if step in self._shape[0]:
            return self._over.key_position(step) or self._over.position()
        return self._base.key_position(step)

    def position(self) -> tuple[int, int]:
        return self._node.position() if self._node is not None else self._over.position()

    def locate(self, path: Sequence[str | int] = (), *, key: bool = True) -> tuple[int, int]:
        node: Src = self
        pos = self.position()
        for i, step in enumerate(path):
            if not isinstance(node, _MergedSrc):
                return node.locate(path[i:], key=key)  # from here as that map walks itself
            nxt = node.child(step)
            if nxt is None:
                return pos
            if key and i == len(path) - 1 and isinstance(step, str):
                at = node.key_position(step)
                if at is not None:
                    return at
            node, pos = nxt, nxt.position()
        return pos

    def __reduce__(self) -> tuple[Any, ...]:
        return (_MergedSrc, (self._shape, self._base, self._over))


def written(src: Src) -> Src:
    """The source map of what an entity wrote itself: a server's own mapping,
    without the `defaults:` and catalog model fields merged under it (whose
    positions the merged map points at, elsewhere in the file or at its
    `model:` line)."""
    while isinstance(src, _MergedSrc):
        src = src._over
    return src


# The knowledge folder also holds the compatibility tables, which are not
# inventory documents: checker.derive.knowledge reads those.
CATALOG_FILES = ("gpus.yaml", "servers.yaml", "models.yaml")


def builtin_catalog_files() -> list[Path]:
    return [knowledge_dir() / name for name in CATALOG_FILES]


Knowledge = Sequence[tuple[str, Document]]  # (file as shown, document): knowledge from rule folders


def load(
    paths: Sequence[Path],
    exclude: Path | None = None,
    options: ReadOptions | None = None,
    *,
    tables: Sequence[str] = (),
    knowledge: Knowledge = (),
) -> tuple[Inventory, list[Finding]]:
    """Read every YAML file below `paths` (but `exclude`) plus the built-in catalog.
    `options`: cache and processes (default: no cache, this process only).
    `tables`: the kinds of the knowledge tables (checker.derive.knowledge's
    TABLE_KINDS), whose documents are kept in `Inventory.tables`; `knowledge`:
    the knowledge documents of the rule folders, read after the built-in
    catalog and before the inventories."""
    with gc_paused():
        return _load(paths, exclude, options or ReadOptions(), tables, knowledge)


def _order(doc: Built) -> int:
    kind = KINDS.get(doc.value["kind"])
    return kind.order if kind else 0


def _add_all(builder: _Builder, docs: list[Built]) -> None:
    """Every document to the builder, taken off `docs` as it goes: from then on
    the builder holds a server document only until its servers are validated."""
    docs.sort(key=_order)
    docs.reverse()  # popped from the end: in file order within a kind
    while docs:
        builder.add(docs.pop())


def _load(
    paths: Sequence[Path], exclude: Path | None, options: ReadOptions, tables: Sequence[str],
    knowledge: Knowledge,
) -> tuple[Inventory, list[Finding]]:
    problems = _Problems()
    progress.stage("reading")
    found, unread = find_files(paths, exclude)
    for path, message in unread:
        problems.add(SCHEMA_FILE, Location(display_path(path), 1, 1), message)
    known = [*KINDS, *tables]
    builder = _Builder(problems)
    catalog = builtin_catalog_files()
    per_file, builder.keeping = _documents(problems, catalog + found, options, known)  # in one read
    ruled = [d for d in (_typed(problems, file, doc, known) for file, doc in knowledge) if d]
    # The built-in catalog, the rule folders' knowledge, then the inventories.
    files: list[Sequence[Built]] = [*per_file[:len(catalog)], ruled, *per_file[len(catalog):]]
    docs = [d for file in files for d in file]
    del per_file, ruled, files  # _add_all frees each document once it is built: nothing else may hold them
    progress.stage("validating")
    _add_all(builder, docs)
    inventory = builder.finish()
    progress.servers(len(inventory.servers))
    progress.stage("checking")  # capacity, facts and rules follow the load
    return inventory, problems.findings()
