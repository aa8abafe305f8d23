"""A per-file cache of parsed inventory files, so an audit re-parses only what changed.

The same folder holds the other entries an audit keeps for the next one, each
signed and opened by this module (Cache.payload, Cache.put) and decoded type
by type by its own: the compiled rulebook (checker.evaluate.rulebook), each
file's validated documents and positions (checker.load.validated), the rule
outcomes and messages (checker.evaluate.memo).

An entry holds what `source.read` returned for one file (its documents with
their source maps, or the YAML problem that stopped it). It is keyed by the
file's content hash and a salt made of the checker version, the parser's own
code, the built-in catalog, the payload format and the Python version: any of
them changing makes every entry unreachable, never wrong.

Nothing read back is trusted. The cache folder may be shared or tampered
with (a CI cache restored from another run), so an entry is used only when its
HMAC matches, keyed by a secret kept apart from the cache folder (key_dir(),
readable by its owner only), and its payload is
marshal data of plain values, checked type by type while it is decoded; pickle
is never used. Any entry that is truncated, garbage, stale or unreadable is a
miss, and the file is parsed and the entry written again. Entries are written
to a temporary file and renamed into place, so concurrent runs never see half
an entry. An entry is opened without following a link, and read only if it is
a regular file under MAX_ENTRY_BYTES. An unusable cache folder disables the
cache silently, as mypy and Black do: the results do not depend on it
(`checker cache info` says why).

A cache folder is one checker made: created by it (or empty when it came) and
marked with MARKER. A folder with anything else in it (`--cache-dir .` in a
project, CHECKER_CACHE_DIR=$HOME) is never used, pruned or cleaned, and
nothing is written there; pruning and cleaning remove only regular files with
the names checker gives its entries and temporary files.

Entries unused for `MAX_AGE_DAYS` are removed, at most once a day, by the
next run; `checker cache clean` removes them all. docs/architecture.md,
"Cache", has the layout.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import hmac
import marshal
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import VERSION as PYDANTIC_VERSION

from checker import __version__
from checker.core.errors import UserError
from checker.core.resources import knowledge_dir
from checker.source import fastpath, reader
from checker.source import parse as source
from checker.source.parse import Document, Src, WrittenFloat, YamlProblem

Parsed = list[Document] | YamlProblem  # what source.read gave for one file
T = TypeVar("T")

FORMAT = 2  # bump when encode/decode change
_MARSHAL_VERSION = 4
_MAGIC = b"checker-cache\x00"
_MAC_SIZE = hashlib.sha256().digest_size
ENTRIES = "files"
# What marks a folder as one checker made: only such a folder is used, pruned or cleaned.
MARKER = "checker-cache"
_MARKER_TEXT = (
    "This folder is a cache made by checker. Every file in it may be removed by checker;\n"
    "put nothing else here.\n"
)
_PRUNED = "last-prune"
_LEGACY_SECRET = "hmac.key"  # where checker < 0.2 kept the key: beside the entries
# The names checker gives what it writes: nothing else is ever removed.
_ENTRY_RE = re.compile(r"[0-9a-f]{64}\Z")
_TMP_PREFIX = ".tmp-"
MAX_ENTRY_BYTES = 1 << 30  # an entry bigger than this is garbage: a miss, never read
MAX_AGE_DAYS = 30
_PRUNE_EVERY_S = 24 * 3600
# The Cache Directory Tagging Specification (https://bford.info/cachedir/):
# backup tools skip a folder holding this file.
_TAG = "CACHEDIR.TAG"
_TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by checker.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


class Unencodable(TypeError):
    """A value the payload format has no spelling for: that file is not cached."""


class BadEntry(ValueError):
    """A payload that is not what encode() writes: a miss."""


# ---------------------------------------------------------------- payload format
def encode(parsed: Parsed) -> bytes:
    """The payload for one file: marshal data of plain tuples, lists, dicts and scalars."""
    if isinstance(parsed, YamlProblem):
        body: tuple[Any, ...] = ("problem", parsed.rule, parsed.line, parsed.column, parsed.message)
    else:
        memo: dict[int, Any] = {}
        body = ("docs", [(_value_out(d.value, memo), _src_out_or_index(d.src, memo)) for d in parsed])
    try:
        return marshal.dumps(body, _MARSHAL_VERSION)
    except ValueError as exc:  # nesting deeper than marshal writes
        raise Unencodable(str(exc)) from None


def decode(
    payload: bytes, text: Callable[[], str] | None = None, trees: fastpath.Trees | None = None
) -> Parsed:
    """The inverse of encode(); raises BadEntry on anything encode() does not write.

    A fast-parsed document's source map is not stored: it is worked out from
    the file's `text` if a position is ever asked for, from a tree kept in the
    run's `trees` (checker.source.fastpath)."""
    try:
        body = marshal.loads(payload)
    except (EOFError, ValueError, TypeError) as exc:
        raise BadEntry(f"not marshal data: {exc}") from None
    if type(body) is not tuple or not body:
        raise BadEntry("not a payload")
    if body[0] == "problem" and len(body) == 5:
        _, rule, line, column, message = body
        expect(rule, str), expect(line, int), expect(column, int), expect(message, str)
        return YamlProblem(rule, line, column, message)
    if body[0] != "docs" or len(body) != 2 or type(body[1]) is not list:
        raise BadEntry("not a payload")
    memo: dict[int, Any] = {}
    docs = []
    deferred: Callable[[int], Src] | None = None
    for item in body[1]:
        if type(item) is not tuple or len(item) != 2:
            raise BadEntry("not a document")
        if type(item[1]) is int:
            if text is None:
                raise BadEntry("a deferred source map, and no text to work it out from")
            deferred = deferred or fastpath.deferred_sources(text(), trees)
            src = deferred(item[1])
        else:
            src = _src_in(item[1], memo)
        docs.append(Document(_value_in(item[0], memo), src))
    return docs


def pack(body: Any) -> bytes:
    """Plain values (tuples, lists, dicts, scalars) as payload bytes (marshal)."""
    try:
        return marshal.dumps(body, _MARSHAL_VERSION)
    except ValueError as exc:  # nesting deeper than marshal writes
        raise Unencodable(str(exc)) from None


def unpack(payload: bytes) -> Any:
    """The plain values of `payload`, to be checked type by type; BadEntry if it is no marshal data."""
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError) as exc:
        raise BadEntry(f"not marshal data: {exc}") from None


def value_out(value: Any) -> Any:
    """A parsed YAML value as payload data, as encode writes a document's value."""
    return _value_out(value, {})


def value_in(raw: Any) -> Any:
    """The inverse of value_out; BadEntry on anything it does not write."""
    return _value_in(raw, {})


def src_out(src: Src) -> Any:
    """A source map (worked out whole) as payload data, as encode writes one."""
    return _src_out(src, {})


def src_in(raw: Any) -> Src:
    """The inverse of src_out; BadEntry on anything it does not write."""
    return _src_in(raw, {})


# Scalars marshal writes as they are; tuples never occur in parsed YAML, so
# a tuple spells one of the scalars marshal cannot write.
_PLAIN = (str, int, bool, type(None), bytes)


def _value_out(value: Any, memo: dict[int, Any]) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is WrittenFloat:
        return ("f", float(value), value.yaml_text)
    if kind is dt.date:
        return ("d", value.isoformat())
    if kind is dt.datetime:
        return ("t", value.isoformat())
    if kind is dict or kind is list:
        # An alias shares its anchor's value: encoded once, marshal writes a reference.
        done = memo.get(id(value))
        if done is None:
            if kind is dict:
                done = {_key_out(k): _value_out(v, memo) for k, v in value.items()}
            else:
                done = [_value_out(v, memo) for v in value]
            memo[id(value)] = done
        return done
    raise Unencodable(f"no payload spelling for {kind.__name__}")


def _key_out(key: Any) -> str:
    if type(key) is not str:
        raise Unencodable(f"mapping key of type {type(key).__name__}")
    return key


_SCALARS: dict[str, Callable[..., Any]] = {
    "f": lambda value, text: WrittenFloat(expect(value, float), expect(text, str)),
    "d": lambda text: dt.date.fromisoformat(expect(text, str)),
    "t": lambda text: dt.datetime.fromisoformat(expect(text, str)),
}


def _value_in(raw: Any, memo: dict[int, Any]) -> Any:
    kind = type(raw)
    if kind in _PLAIN:
        return raw
    if kind is tuple:
        build = _SCALARS.get(raw[0]) if raw else None
        if build is None:
            raise BadEntry("unknown scalar tag")
        try:
            return build(*raw[1:])
        except (TypeError, ValueError) as exc:
            raise BadEntry(f"bad scalar: {exc}") from None
    if kind is dict or kind is list:
        done = memo.get(id(raw))
        if done is None:
            if kind is dict:
                done = {expect(k, str): _value_in(v, memo) for k, v in raw.items()}
            else:
                done = [_value_in(v, memo) for v in raw]
            memo[id(raw)] = done
        return done
    raise BadEntry(f"unexpected {kind.__name__} in a value")


def _src_out_or_index(src: Src, memo: dict[int, Any]) -> Any:
    """A fast-parsed document's index in its file (its map comes from the text), else the map."""
    index = fastpath.deferred_index(src)
    return index if index is not None else _src_out(src, memo)


# A source map: (line, column) for a scalar, (line, column, [child, ...]) for a
# sequence, (line, column, {key: (key line, key column, child)}) for a mapping.
def _src_out(src: Src, memo: dict[int, Any]) -> Any:
    done = memo.get(id(src))
    if done is not None:
        return done
    children = src.children
    if children is None:
        if src.keys is not None:
            raise Unencodable("key positions without children")
        done = (src.line, src.column)
    elif isinstance(children, list):
        done = (src.line, src.column, [_src_out(c, memo) for c in children])
    else:
        keys = src.keys or {}
        if keys.keys() != children.keys():
            raise Unencodable("key positions and children differ")
        done = (src.line, src.column, {k: (*keys[k], _src_out(c, memo)) for k, c in children.items()})
    memo[id(src)] = done
    return done


def _src_in(raw: Any, memo: dict[int, Any]) -> Src:
    # The hot loop of a warm audit (one call per value): checks are inlined.
    if type(raw) is not tuple or len(raw) not in (2, 3):
        raise BadEntry("not a source map")
    line, column = raw[0], raw[1]
    if type(line) is not int or type(column) is not int:
        raise BadEntry("not a position")
    if len(raw) == 2:
        return Src(line, column)  # scalars are never shared: not worth a memo entry
    done = memo.get(id(raw))
    if done is not None:
        return done  # type: ignore[no-any-return]
    children = raw[2]
    if type(children) is list:
        built = Src(line, column, [_src_in(c, memo) for c in children])
    elif type(children) is dict:
        kids: dict[str, Src] = {}
        keys: dict[str, tuple[int, int]] = {}
        for key, item in children.items():
            if type(key) is not str or type(item) is not tuple or len(item) != 3:
                raise BadEntry("not a mapping entry")
            key_line, key_column, child = item
            if type(key_line) is not int or type(key_column) is not int:
                raise BadEntry("not a position")
            keys[key] = (key_line, key_column)
            kids[key] = _src_in(child, memo)
        built = Src(line, column, kids, keys)
    else:
        raise BadEntry("not a source map")
    memo[id(raw)] = built
    return built


# The values every entry's reader takes as they are: what a fact's cell, a
# message's field or a model's plain value holds.
SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def column_out(cells: Sequence[Any]) -> tuple[bool, Any]:
    """A column of scalars as an entry holds it: (True, the cell) if every cell is
    that one, else (False, the cells as a tuple). Alike in marshal's bytes
    (format 2: each cell written whole): 1, 1.0 and true, or 0.0 and -0.0,
    which compare equal, are not alike. A file's servers and racks share most
    of their values: such a column is one cell in the entry, checked once."""
    cells = tuple(cells)
    if cells and marshal.dumps(cells, 2) == marshal.dumps(cells[:1] * len(cells), 2):
        return True, cells[0]
    return False, cells


def column_in(raw: Any, count: int) -> tuple[bool, Any]:
    """A column column_out wrote, checked: one scalar, or a tuple of `count`."""
    if raw.__class__ is not tuple or len(raw) != 2 or raw[0].__class__ is not bool:
        raise BadEntry("not a column")
    same, cells = raw
    if same:
        if cells.__class__ not in SCALAR_TYPES:
            raise BadEntry("a cell that is no scalar")
    elif cells.__class__ is not tuple or len(cells) != count:
        raise BadEntry("not a cell of each")
    elif not SCALAR_TYPES.issuperset(map(type, cells)):
        raise BadEntry("a cell that is no scalar")
    return same, cells


def column_cells(raw: Any, count: int) -> Sequence[Any]:
    """The `count` cells of a column column_out wrote, checked."""
    same, cells = column_in(raw, count)
    return (cells,) * count if same else cells


def expect(value: Any, kind: type) -> Any:
    """`value` if it is exactly of `kind`, else BadEntry: how an entry's reader checks what it reads."""
    if type(value) is not kind:
        raise BadEntry(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------- where, and keys
def default_dir(environ: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    """$CHECKER_CACHE_DIR, else $XDG_CACHE_HOME/checker, else ~/.cache/checker (the XDG
    Base Directory Specification ignores a relative XDG_CACHE_HOME)."""
    explicit = environ.get("CHECKER_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "checker"


def key_dir(environ: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    """Where the signing keys live, apart from every cache folder: $XDG_STATE_HOME/checker/keys,
    else ~/.local/state/checker/keys. A cache folder restored from elsewhere (a CI
    cache) comes without its key, so its entries are misses, never trusted."""
    xdg = environ.get("XDG_STATE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "state"
    return base / "checker" / "keys"


@functools.lru_cache(maxsize=1)
def salt() -> bytes:
    """What every key depends on besides the file: a new checker, parser or catalog,
    another payload format or Python (marshal's own format) starts afresh."""
    digest = hashlib.sha256()
    parts = (
        f"format {FORMAT}",
        f"checker {__version__}",
        f"python {sys.version_info[:2]}",
        f"rapidyaml {fastpath.RAPIDYAML_VERSION}",  # the fast path's values depend on it
        # The event parser's values and errors: PyYAML's constructors and, where
        # it is built with it, libyaml's scanner.
        f"pyyaml {source.PYYAML_VERSION}",
        f"libyaml {source.LIBYAML_VERSION}",
    )
    for part in parts:
        digest.update(part.encode() + b"\x00")
    # The code that produced an entry: an edited checker with an unchanged version
    # (a development install) must not reuse it.
    for module in (source.__file__, fastpath.__file__, reader.__file__, __file__):
        digest.update(Path(module or "").read_bytes())
    for path in sorted(knowledge_dir().rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(knowledge_dir()).as_posix().encode() + b"\x00")
            digest.update(path.read_bytes())
    return digest.digest()


@functools.lru_cache(maxsize=1)
def code_salt() -> bytes:
    """salt() and what a result validated or derived from a file also depends
    on: pydantic, and every module of checker (their sizes and time stamps: an
    edited checkout starts afresh)."""
    digest = hashlib.sha256(salt())
    digest.update(f"pydantic {PYDANTIC_VERSION}\x00".encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        name = path.relative_to(package).as_posix()
        digest.update(f"{name} {info.st_size} {info.st_mtime_ns}\x00".encode())
    return digest.digest()


def content_key(data: bytes) -> str:
    return hashlib.sha256(salt() + hashlib.sha256(data).digest()).hexdigest()


# ---------------------------------------------------------------- the folder
@dataclass(frozen=True)
class Cache:
    folder: Path
    secret: bytes

    @property
    def entries(self) -> Path:
        return self.folder / ENTRIES

    def _mac(self, key: str, payload: bytes) -> bytes:
        # The key is signed too: a valid entry renamed to another key is refused.
        return hmac.new(self.secret, key.encode() + b"\x00" + payload, hashlib.sha256).digest()

    def get(self, key: str, text: Callable[[], str], trees: fastpath.Trees | None = None) -> Parsed | None:
        """The entry for `key`, or None when it is missing or anything is wrong with it;
        `text` gives the file's text, should a source map have to be worked out
        (from a tree kept in the run's `trees`)."""
        payload = self.payload(key)
        if payload is None:
            return None
        try:
            return decode(payload, text, trees)
        except Exception:  # BadEntry, too deep: whatever it is, a miss
            return None

    def decoded(self, key: str, read: Callable[[Any], T]) -> T | None:
        """The entry for `key`, unpacked and read by its writer's `read` (which
        checks it type by type), or None when it is missing or anything is wrong
        with it: a miss, never an error."""
        payload = self.payload(key)
        if payload is None:
            return None
        try:
            return read(unpack(payload))
        except Exception:  # BadEntry, too deep, or anything else: whatever it is, a miss
            return None

    def versioned(self, key: str, read: Callable[[Any, bytes], T]) -> T | None:
        """As `decoded`, `read` also given the entry's version (entry_version):
        what a later entry, keyed by it, can be kept under (checker.evaluate.memo.Found)."""
        payload = self.payload(key)
        if payload is None:
            return None
        try:
            return read(unpack(payload), entry_version(key, payload))
        except Exception:  # BadEntry, too deep, or anything else: whatever it is, a miss
            return None

    def payload(self, key: str) -> bytes | None:
        """The payload of the entry for `key` if there is one, signed with this
        folder's key; its format is the writer's to check (decode, or the
        rulebook's own: checker.evaluate.rulebook)."""
        data = _read_regular(self.entries / key, MAX_ENTRY_BYTES, touch=True)
        if data is None:
            return None
        start = len(_MAGIC) + _MAC_SIZE
        head, mac, payload = data[: len(_MAGIC)], data[len(_MAGIC) : start], data[start:]
        if head != _MAGIC or not hmac.compare_digest(mac, self._mac(key, payload)):
            return None
        return payload

    def put(self, key: str, payload: bytes) -> None:
        """Write an entry atomically; a cache that cannot be written is not an error."""
        data = _MAGIC + self._mac(key, payload) + payload
        try:
            fd, tmp = tempfile.mkstemp(dir=self.entries, prefix=_TMP_PREFIX)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, self.entries / key)
        except OSError:
            _remove(Path(tmp))


def entry_version(key: str, payload: bytes) -> bytes:
    """What tells one entry's contents apart from any other's: its key and its
    payload (rows read back from it carry it, checker.derive.rows.Block.version)."""
    return hashlib.sha256(key.encode() + b"\x00" + payload).digest()


def _read_regular(path: Path, limit: int, *, touch: bool = False) -> bytes | None:
    """The bytes of `path` if it is a regular file of at most `limit` bytes, opened
    without following a link and without waiting on a FIFO; else None. `touch`
    marks it used (pruning goes by last use)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            return None
        if touch and os.utime in os.supports_fd:
            with contextlib.suppress(OSError):
                os.utime(fd)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def open_cache(folder: Path) -> Cache | None:
    """The cache in `folder`, created if need be; None if it cannot be used."""
    try:
        return _open(folder)
    except (OSError, UnusableCache):
        return None


class UnusableCache(Exception):
    """The folder exists but must not be used (another user's secret, say)."""


def _open(folder: Path) -> Cache:
    _claim(folder)
    entries = folder / ENTRIES
    with contextlib.suppress(FileExistsError):
        entries.mkdir(mode=0o700)
    if not stat.S_ISDIR(os.lstat(entries).st_mode):  # a link planted as `files`: never followed
        raise UnusableCache(f"{entries} is not a folder checker made (a symbolic link?)")
    cache = Cache(folder, _secret(folder))
    with contextlib.suppress(OSError):  # housekeeping: a folder we may read but not write is still a cache
        prune(cache, every_s=_PRUNE_EVERY_S)
    return cache


def _claim(folder: Path) -> None:
    """Make `folder` a cache folder, or check that it is one: checker only ever uses
    (and prunes, and cleans) a folder it created and marked, or an empty one it
    marks now. A folder with anything else in it (a project, a home folder) is
    refused, and nothing is written there (no CACHEDIR.TAG either)."""
    with contextlib.suppress(FileExistsError):
        # Private to its user, as the XDG Base Directory Specification asks of ~/.cache.
        folder.mkdir(parents=True, mode=0o700)
    if _marked(folder):
        return
    names = set(os.listdir(folder))
    legacy = {ENTRIES, _LEGACY_SECRET, _TAG, _PRUNED}
    # A cache made before the marker: only checker's own names, its key among them.
    if names and not (names <= legacy and _LEGACY_SECRET in names and _marked_legacy(folder)):
        raise UnusableCache(
            f"{folder} is not a cache folder checker made (it holds other files);"
            " name a new or empty folder"
        )
    _write_atomic(folder, _TAG, _TAG_TEXT.encode(), 0o644)
    _write_atomic(folder, MARKER, _MARKER_TEXT.encode(), 0o644)


def _marked(folder: Path) -> bool:
    data = _read_regular(folder / MARKER, len(_MARKER_TEXT))
    return data == _MARKER_TEXT.encode()


def _marked_legacy(folder: Path) -> bool:
    entries = folder / ENTRIES
    with contextlib.suppress(OSError):
        if entries.is_symlink() or (entries.exists() and not entries.is_dir()):
            return False
    return _read_regular(folder / _LEGACY_SECRET, 32) is not None


def _key_file(folder: Path) -> Path:
    """One key per cache folder, named by the folder's real path, kept in key_dir()."""
    name = hashlib.sha256(os.fsencode(os.path.realpath(folder))).hexdigest()[:32]
    return key_dir() / f"{name}.key"


def _secret(folder: Path) -> bytes:
    """The folder's HMAC key: created once (first writer wins), then only trusted when
    it belongs to this user and nobody else may read it. It is kept apart from the
    entries, so whoever can write the cache folder cannot sign an entry."""
    path = _key_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not os.path.lexists(path):
        _write_atomic(path.parent, path.name, os.urandom(32), 0o600, replace=False)
    info = os.lstat(path)
    getuid = getattr(os, "getuid", None)
    if not stat.S_ISREG(info.st_mode):
        raise UnusableCache(f"{path} is not a regular file")
    if getuid is not None and info.st_uid != getuid():
        raise UnusableCache(f"{path} belongs to another user")
    if info.st_mode & 0o077:
        raise UnusableCache(f"{path} may be read by other users")
    secret = _read_regular(path, 32)
    if secret is None or len(secret) != 32:
        raise UnusableCache(f"{path} is not a key")
    return secret


def _write_atomic(folder: Path, name: str, data: bytes, mode: int, *, replace: bool = True) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=_TMP_PREFIX)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if replace:
            os.replace(tmp, folder / name)
        else:
            with contextlib.suppress(FileExistsError):  # another run created it first: theirs stands
                os.link(tmp, folder / name)
    finally:
        _remove(Path(tmp))


def _ours(entry: os.DirEntry[str]) -> bool:
    """A file checker wrote among the entries: an entry or a temporary file, by name,
    and a regular file (a link is never followed, nor removed)."""
    named = _ENTRY_RE.match(entry.name) is not None or entry.name.startswith(_TMP_PREFIX)
    return named and entry.is_file(follow_symlinks=False)


def _entries(cache: Cache) -> Iterator[os.DirEntry[str]]:
    with os.scandir(cache.entries) as it:
        yield from (e for e in it if _ours(e))


def prune(cache: Cache, *, every_s: float, now: float | None = None) -> int:
    """Remove entries unused for MAX_AGE_DAYS (and stray temporary files), at most
    once per `every_s`; the number removed."""
    now = time.time() if now is None else now
    marker = cache.folder / _PRUNED
    try:
        if now - marker.lstat().st_mtime < every_s:
            return 0
    except FileNotFoundError:
        pass
    _write_atomic(cache.folder, _PRUNED, b"", 0o644)  # replaced, never written through a link
    removed = 0
    limit = now - MAX_AGE_DAYS * 86400
    for entry in _entries(cache):
        if entry.stat(follow_symlinks=False).st_mtime < limit:
            _remove(Path(entry.path))
            removed += 1
    return removed


def clean(folder: Path) -> int:
    """Remove every entry; the number removed. Only in a folder checker made and
    marked, only files it named, never through a link; the key stays."""
    if not os.path.lexists(folder):
        return 0
    if not _marked(folder):
        raise UserError(f"{folder}: not a cache folder checker made (no {MARKER} marker); nothing removed")
    entries = folder / ENTRIES
    try:
        if not stat.S_ISDIR(os.lstat(entries).st_mode):
            raise UserError(f"{entries}: not a folder checker made (a symbolic link?); nothing removed")
    except FileNotFoundError:
        return 0
    removed = 0
    with os.scandir(entries) as it:
        for entry in it:
            if _ours(entry):
                _remove(Path(entry.path))
                removed += 1
    return removed


@dataclass(frozen=True)
class Info:
    folder: Path
    entries: int
    size: int
    problem: str | None  # why the cache is not used, if it is not


def info(folder: Path) -> Info:
    if not folder.exists():  # created by the next audit, if it can be
        parent = next(p for p in folder.absolute().parents if p.exists())
        can = parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
        return Info(folder, 0, 0, None if can else f"cannot be created in {parent}")
    try:
        cache = _open(folder)
    except (OSError, UnusableCache) as exc:
        why = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Info(folder, 0, 0, why)
    count = size = 0
    for entry in _entries(cache):
        count += 1
        size += entry.stat(follow_symlinks=False).st_size
    return Info(folder, count, size, None)
