"""The compatibility knowledge base: CUDA -> driver, framework builds, ROCm
releases, inference engines, JAX's CUDA plugins and the workload-fit planning
model (rules/knowledge/*.yaml).

Every row names its sources; values without a primary source are shipped with
`verified: false`. The tables are validated with pydantic like any input, and
versions are parsed and compared with `packaging` (535.129.03 > 535.54.03,
12.10 > 12.9), never by hand.

Rules cannot compare version strings (durable-rules orders text as raw JSON),
so rules see a version as a number, :func:`version_number`: up to four
release components of three decimal digits each, 535.129.03 -> 535129003000.
The tables give the thresholds; rules compare the numbers.
"""

from __future__ import annotations

import datetime as dt
import re
import types
import typing
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

from packaging.version import InvalidVersion, Version
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from checker.core.builtin import KNOWLEDGE_OVERRIDE, SCHEMA_DUPLICATE_NAME, SCHEMA_INVALID
from checker.core.errors import MAX_LISTED, UserError
from checker.core.findings import Finding, Location, located
from checker.core.resources import knowledge_dir
from checker.load.build import Placed
from checker.source.parse import Src
from checker.source.reader import describe_error, display_path, problems, read_file, validate_pieces

# version_number() packs release components in base 1000; four fit a C long
# (durable-rules' integers) with room to spare.
_COMPONENTS = 4
_BASE = 1000


# Not memoised: facts are computed once per distinct software stack
# (checker.derive.facts), so an audit of 10,000 servers parses about ten
# versions (the built-in tables some 500, once per process); a module-wide
# memo would keep one run's version strings for the next.
def parse_version(text: str | None) -> Version | None:
    """The version `packaging` reads from `text`, or None if it reads none."""
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def version_number(text: str | None) -> int | None:
    """A number that orders like the version (535.129.03 -> 535129003000), for rules.

    None when the version does not parse or does not fit (a component of 1000
    or more, more than four components): such a version is reported as unknown.
    """
    version = parse_version(text)
    if version is None:
        return None
    release = version.release
    if len(release) > _COMPONENTS or any(c >= _BASE for c in release):
        return None
    padded = (*release, *(0,) * (_COMPONENTS - len(release)))
    number = 0
    for component in padded:
        number = number * _BASE + component
    return number


def release_line(text: str | None, parts: int = 2) -> Version | None:
    """The release line a version belongs to: 12.4.1 -> 12.4, 2.3.1+cu121 -> 2.3."""
    version = parse_version(text)
    if version is None:
        return None
    return Version(".".join(str(c) for c in (*version.release, 0)[:parts]))


def _version_text(value: str) -> str:
    if parse_version(value) is None:
        raise ValueError(f"'{value}' is not a version")
    return value


VersionText = Annotated[str, AfterValidator(_version_text)]


# ---------------------------------------------------------------- table models
@dataclass(frozen=True)
class Origin:
    """Where a table or a row is written, and whether it is built in or a user's
    (a document in the inventories or a rule folder, docs/knowledge.md)."""

    # As messages show it; a built-in file's absolute path, shown relative to the
    # directory of the run that shows it (the tables are read once per process).
    file: str
    src: Src
    builtin: bool

    @property
    def shown(self) -> str:
        return display_path(Path(self.file)) if self.builtin else self.file

    def location(self) -> Location:
        return Location(self.shown, self.src.line, self.src.column)

    def where(self) -> str:
        return f"{self.shown}:{self.src.line}"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # as checker.load.models.Model

    # Set when the table is read (see _place); None for a model built in code.
    _origin: Origin | None = PrivateAttr(default=None)

    # What makes two rows the same fact: a user's row with the key of a built-in
    # row takes its place (docs/knowledge.md). The fields named here, or by
    # default the first field the row's own class declares (`branch`, `cuda`).
    KEY: ClassVar[tuple[str, ...]] = ()

    @property
    def origin(self) -> Origin | None:
        return self._origin

    @classmethod
    def key_fields(cls) -> tuple[str, ...]:
        if cls.KEY:
            return cls.KEY
        inherited = {name for base in cls.__mro__[1:] for name in getattr(base, "model_fields", {})}
        return tuple(name for name in cls.model_fields if name not in inherited)[:1]

    def key(self) -> tuple[Hashable, ...]:
        """The row's key, as its table looks rows up: versions as versions (12.4 is
        12.4.0); override where the lookup normalises more (by release line)."""
        return tuple(self._key_value(name) for name in self.key_fields())

    def _key_value(self, name: str) -> Hashable:
        value = getattr(self, name)
        info = type(self).model_fields[name]
        if _named_validators([*info.metadata, *_annotated(info.annotation)]) == "version":
            return frozenset(map(Version, value)) if isinstance(value, list) else (
                None if value is None else Version(value))
        return frozenset(value) if isinstance(value, list) else value

    def label(self) -> str:
        """The key as a person reads it: `branch 570`."""
        shown = [(n, getattr(self, n)) for n in self.key_fields()]
        return ", ".join(f"{self._alias(n)} {_shown(v)}" for n, v in shown if v is not None)

    @classmethod
    def _alias(cls, name: str) -> str:
        return cls.model_fields[name].alias or name


def _annotated(annotation: Any) -> list[Any]:
    """The metadata of Annotated types inside `annotation` (VersionText | None)."""
    if typing.get_origin(annotation) is Annotated:
        return list(annotation.__metadata__)
    return [m for arg in typing.get_args(annotation) for m in _annotated(arg)]


def _shown(value: Any) -> str:
    if value is None:
        return "absent"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    return str(value)


# Validation context for a user's document, validated before it is merged with
# the table it adds to: a check that needs the whole table (an update release
# has its GA row) runs on the merged table instead.
PART = {"part": True}


def _whole(info: ValidationInfo) -> bool:
    return not (isinstance(info.context, dict) and info.context.get("part"))


class Sourced(_Table):
    """A row with its provenance: source keys, and which values are unverified."""

    source: Annotated[list[str], Field(min_length=1)]
    verified: bool = True
    unverified: list[str] = []
    notes: str | None = None

    @model_validator(mode="after")
    def _unverified_listed(self) -> Sourced:
        if self.verified == bool(self.unverified):
            raise ValueError("list the unverified fields in `unverified` exactly when verified is false")
        return self


class _SourcedTable(_Table):
    sources: dict[str, Annotated[str, Field(min_length=1)]]
    # The date the table is current to: releases after it are unknown to it,
    # which an audit long after it says. Required by the compatibility tables.
    as_of: dt.date | None = None

    def rows(self) -> Iterable[Sourced]:
        raise NotImplementedError

    @model_validator(mode="after")
    def _sources_known(self) -> _SourcedTable:
        for row in self.rows():
            unknown = sorted(set(row.source) - set(self.sources))
            if unknown:
                known = ", ".join(self.sources)
                raise ValueError(f"unknown source key(s) {', '.join(unknown)}; known: {known}")
        return self


class CudaRelease(Sourced):
    cuda: VersionText
    driver: VersionText  # full-feature (GA) minimum driver
    mvc_floor: VersionText  # minor-version-compatibility minimum

    @cached_property
    def floor(self) -> str:
        """The lowest driver that runs the toolkit at all. At or above its own
        full driver a toolkit always runs: CUDA 11.0's GA driver (450.51.05) is
        below the 11.x family floor (450.80.02)."""
        return self.mvc_floor if Version(self.mvc_floor) < Version(self.driver) else self.driver


class CudaReleases(_SourcedTable):
    kind: Literal["CudaReleases"]
    as_of: dt.date
    releases: list[CudaRelease]

    def rows(self) -> Iterable[Sourced]:
        return self.releases

    # GA rows by release line (12.8), update rows by their version (12.8.1).
    _by_line: dict[Version, CudaRelease] = PrivateAttr(default_factory=dict)
    _updates: dict[Version, list[CudaRelease]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: object, /) -> None:
        for r in self.releases:
            line = release_line(r.cuda)
            assert line is not None  # a VersionText
            if is_update(r.cuda):
                self._updates.setdefault(line, []).append(r)
            else:
                self._by_line[line] = r
        for rows in self._updates.values():
            rows.sort(key=lambda r: Version(r.cuda))

    @model_validator(mode="after")
    def _updates_have_a_release(self, info: ValidationInfo) -> CudaReleases:
        if not _whole(info):  # a user's update row may name a built-in GA row
            return self
        for r in self.releases:
            if is_update(r.cuda) and release_line(r.cuda) not in {release_line(g.cuda) for g in self.ga()}:
                raise ValueError(f"CUDA {r.cuda} is an update of {release_line(r.cuda)}, which has no row")
        return self

    def ga(self) -> list[CudaRelease]:
        """The GA releases (12.8), not their updates (12.8.1)."""
        return [r for r in self.releases if not is_update(r.cuda)]

    def row(self, cuda: str | None) -> CudaRelease | None:
        """The row `cuda` is checked against: its own update row (12.8.1), else
        the GA row of its release line (12.4 for 12.4 and 12.4.0), else, for an
        update the table does not list, the newest row of its line before it
        (see :meth:`update_listed`)."""
        line = release_line(cuda)
        ga = self._by_line.get(line) if line else None
        if ga is None or not is_update(cuda):
            return ga
        version = Version(str(cuda))
        earlier = [r for r in self._updates.get(line, []) if Version(r.cuda) <= version]  # type: ignore[arg-type]
        return earlier[-1] if earlier else ga

    def update_listed(self, cuda: str | None) -> bool:
        """Whether `cuda` is a GA release, or an update release the table lists."""
        row = self.row(cuda)
        if row is None or not is_update(cuda):
            return row is not None
        return Version(row.cuda) == Version(str(cuda))


def _builtin(row: _Table) -> bool:
    return row._origin is None or row._origin.builtin


def is_update(cuda: str | None) -> bool:
    """An update release (12.8.1): a third release component above 0."""
    version = parse_version(cuda)
    return version is not None and len(version.release) > 2 and any(version.release[2:])


class FrameworkRelease(Sourced):
    release: VersionText
    cuda: list[VersionText] = []
    rocm: list[VersionText] = []
    cudnn: VersionText | None = None
    # The CUDA of the build a plain `pip install` gets (PyPI's default wheel).
    pypi_default: VersionText | None = None

    def key(self) -> tuple[Hashable, ...]:
        return (release_line(self.release),)  # looked up by release line: 2.3.1 is 2.3

    def listed(self, stack: str) -> bool:
        """Whether the `cuda` or `rocm` list is complete: a list marked
        unverified may leave builds out, so a build not in it is unknown, not missing."""
        return stack not in self.unverified


class WheelArchitectures(Sourced):
    """What compute capabilities the wheels of one CUDA variant hold code for,
    over a range of releases (`from`..`until`, both included), or what the
    builds of one platform leave out (aarch64)."""

    model_config = ConfigDict(populate_by_name=True)
    KEY = ("cuda", "platform", "first", "until")

    cuda: VersionText | None = None
    platform: Literal["x86_64", "aarch64"] | None = None
    first: Annotated[VersionText | None, Field(alias="from")] = None
    until: VersionText | None = None
    min_cc: VersionText | None = None  # the lowest compute capability in the wheels
    excludes: list[VersionText] = []  # compute capabilities the builds leave out

    @model_validator(mode="after")
    def _one_of(self) -> WheelArchitectures:
        if (self.cuda is None) == (self.platform is None):
            raise ValueError("give `cuda` (a wheel variant) or `platform`, not both")
        return self

    def key(self) -> tuple[Hashable, ...]:
        return (release_line(self.cuda), self.platform, release_line(self.first), release_line(self.until))

    def covers(self, release: Version, cuda: str | None, platform: str | None) -> bool:
        if self.first is not None and release < Version(self.first):
            return False
        if self.until is not None and release > Version(self.until):
            return False
        if self.cuda is not None:
            return release_line(cuda) == release_line(self.cuda)
        return platform == self.platform


class ArchitectureSupport(Sourced):
    architecture: str
    min_release: VersionText | None = None
    min_cuda: VersionText | None = None
    warn_from: VersionText | None = None
    # The doubt of `warn_from` only for builds with these CUDA variants (cu129).
    warn_cuda: list[VersionText] = []


def _lowercase(value: str) -> str:
    if value != value.lower():
        raise ValueError(f"'{value}' is looked up in lowercase: write '{value.lower()}'")
    return value


Lowercase = Annotated[str, AfterValidator(_lowercase)]


class Framework(_Table):
    name: Lowercase
    aliases: list[Lowercase] = []
    # Official builds name their CUDA / ROCm in the version (+cu121, +rocm6.1).
    variants: bool
    releases: list[FrameworkRelease]
    architectures: list[ArchitectureSupport] = []
    wheels: list[WheelArchitectures] = []

    @model_validator(mode="after")
    def _releases_once(self) -> Framework:
        lines = [release_line(r.release) for r in self.releases]
        twice = sorted({str(line) for line in lines if lines.count(line) > 1})
        if twice:
            raise ValueError(f"{self.name}: release(s) {', '.join(twice)} listed more than once")
        return self

    def release(self, version: str) -> FrameworkRelease | None:
        line = release_line(version)
        return next((r for r in self.releases if release_line(r.release) == line), None) if line else None

    def architecture(self, name: str | None) -> ArchitectureSupport | None:
        return next((a for a in self.architectures if a.architecture == name), None)

    def wheel_rows(self, release: str, cuda: str | None, platform: str | None) -> list[WheelArchitectures]:
        """The wheel-architecture rows that cover one official build."""
        line = release_line(release)
        return [w for w in self.wheels if line is not None and w.covers(line, cuda, platform)]


class Frameworks(_SourcedTable):
    kind: Literal["Frameworks"]
    as_of: dt.date
    frameworks: list[Framework]

    def rows(self) -> Iterable[Sourced]:
        for f in self.frameworks:
            yield from f.releases
            yield from f.architectures
            yield from f.wheels

    @model_validator(mode="after")
    def _names_once(self) -> Frameworks:
        owner: dict[str, str] = {}
        for f in self.frameworks:
            for name in (f.name, *f.aliases):
                first = owner.setdefault(name, f.name)
                if first != f.name:
                    raise ValueError(f"'{name}' names both framework {first} and framework {f.name}")
        return self

    def get(self, name: str) -> Framework | None:
        """By name or alias, in any case (`PyTorch`, `torch`)."""
        key = name.lower()
        return next((f for f in self.frameworks if key == f.name or key in f.aliases), None)


class RocmRelease(Sourced):
    rocm: VersionText

    def key(self) -> tuple[Hashable, ...]:
        return (release_line(self.rocm),)  # looked up by release line


class RocmReleases(_SourcedTable):
    kind: Literal["RocmReleases"]
    as_of: dt.date
    releases: list[RocmRelease]

    def rows(self) -> Iterable[Sourced]:
        return self.releases

    def known(self, rocm: str | None) -> bool:
        line = release_line(rocm)
        return line is not None and any(release_line(r.rocm) == line for r in self.releases)


def _month(value: str) -> str:
    try:
        dt.date.fromisoformat(f"{value}-01")
    except ValueError:
        raise ValueError(f"'{value}' is not a month (YYYY-MM)") from None
    return value


class DriverBranch(Sourced):
    """One NVIDIA driver branch (R570): its type and end of life, and whether it
    runs a newer CUDA through the cuda-compat package (absent: no source says)."""

    branch: Annotated[int, Field(ge=1)]
    type: Literal["long-term", "production", "new-feature"] | None = None
    # The month of the end of life (NVIDIA gives months); checked as its last day.
    eol: Annotated[str, BeforeValidator(lambda v: v.strftime("%Y-%m") if isinstance(v, dt.date) else v),
                   AfterValidator(_month)] | None = None
    forward_compatible: bool | None = None

    @property
    def eol_date(self) -> dt.date | None:
        """The last day of the end-of-life month."""
        if self.eol is None:
            return None
        first = dt.date.fromisoformat(f"{self.eol}-01")
        return (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)


class DriverBranches(_SourcedTable):
    kind: Literal["DriverBranches"]
    as_of: dt.date
    branches: list[DriverBranch]

    def rows(self) -> Iterable[Sourced]:
        return self.branches

    @model_validator(mode="after")
    def _branches_once(self) -> DriverBranches:
        seen = [b.branch for b in self.branches]
        twice = sorted({b for b in seen if seen.count(b) > 1})
        if twice:
            raise ValueError(f"branch(es) {', '.join(map(str, twice))} listed more than once")
        return self

    def get(self, branch: int | None) -> DriverBranch | None:
        return next((b for b in self.branches if b.branch == branch), None)


# The versions a tag pattern may take by name: (?P<cuda>...) and the like.
IMAGE_GROUPS = ("cuda", "cudnn", "nccl", "version")


def _pattern(value: str) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"'{value}' is not a regular expression: {exc}") from None
    unknown = sorted(set(compiled.groupindex) - set(IMAGE_GROUPS))
    if unknown:
        names = ", ".join(IMAGE_GROUPS)
        raise ValueError(f"unknown group(s) {', '.join(unknown)}; a tag pattern names {names}")
    return value


class ContainerImage(Sourced):
    """Images of some repositories whose tag matches `tag`: the versions they
    bring, from the tag (named groups) or the row."""

    KEY = ("repositories", "tag")

    repositories: Annotated[list[str], Field(min_length=1)]
    tag: Annotated[str, AfterValidator(_pattern)]
    framework: str | None = None
    version: VersionText | None = None
    cuda: VersionText | None = None
    cudnn: VersionText | None = None
    nccl: VersionText | None = None
    # The driver the image's release notes ask for (forward compatibility).
    min_driver: VersionText | None = None

    def match(self, repository: str, tag: str) -> dict[str, str] | None:
        """The versions the image brings, or None if the row is not about it."""
        if repository not in self.repositories:
            return None
        found = re.fullmatch(self.tag, tag)
        if found is None:
            return None
        fixed = {k: getattr(self, k) for k in IMAGE_GROUPS if getattr(self, k) is not None}
        named = {k: v for k, v in found.groupdict().items() if v is not None}
        return {**fixed, **named}


class ContainerImages(_SourcedTable):
    kind: Literal["ContainerImages"]
    as_of: dt.date
    images: list[ContainerImage]

    def rows(self) -> Iterable[Sourced]:
        return self.images

    def resolve(self, repository: str, tag: str | None) -> tuple[ContainerImage, dict[str, str]] | None:
        """The first row that matches the image, with what it brings."""
        if tag is None:
            return None
        for row in self.images:
            found = row.match(repository, tag)
            if found is not None:
                return row, found
        return None

    def overridden(self, row: ContainerImage, repository: str, tag: str) -> ContainerImage | None:
        """The built-in row a user's `row` is used instead of for this image: a
        user's rows come first (docs/knowledge.md), so one that matches an image
        a built-in row matches too takes that row's place for it."""
        if row._origin is None or row._origin.builtin:
            return None
        at = next(i for i, r in enumerate(self.images) if r is row)  # not ==: two rows may be equal
        later = self.images[at + 1:]
        return next((r for r in later if _builtin(r) and r.match(repository, tag) is not None), None)


def same_release(a: str | None, b: str | None) -> bool:
    """Whether two versions name one release, build tags aside (2.8 and
    2.8.0+cu128 are torch 2.8.0; 0.11.0+cu126 is vLLM 0.11.0)."""
    va, vb = parse_version(a), parse_version(b)
    return va is not None and vb is not None and Version(va.public) == Version(vb.public)


def _once(what: str, versions: Iterable[str]) -> None:
    seen = [Version(Version(v).public) for v in versions]
    twice = sorted({str(v) for v in seen if seen.count(v) > 1}, key=Version)
    if twice:
        raise ValueError(f"{what} release(s) {', '.join(twice)} listed more than once")


class EngineRelease(Sourced):
    """One release of an inference engine: the torch its requirements pin and
    the CUDA its PyPI wheel is built with (absent: the pinned torch's build)."""

    release: VersionText
    torch: VersionText | None = None
    cuda: VersionText | None = None
    tensorrt: VersionText | None = None  # TensorRT-LLM: the TensorRT it depends on
    nccl: VersionText | None = None  # the NCCL its notes name
    date: dt.date | None = None  # the day it was published


class Engine(_Table):
    name: str
    aliases: list[str] = []
    description: str
    # Other CUDA builds name their CUDA in the version (vLLM's 0.11.0+cu126).
    variants: bool
    releases: list[EngineRelease]

    @model_validator(mode="after")
    def _releases_once(self) -> Engine:
        _once(self.name, (r.release for r in self.releases))
        return self

    def release(self, version: str) -> EngineRelease | None:
        """The row of exactly this release (engines move their torch pin between
        patch releases), its build tag aside."""
        return next((r for r in self.releases if same_release(r.release, version)), None)


class InferenceEngines(_SourcedTable):
    kind: Literal["InferenceEngines"]
    as_of: dt.date
    engines: list[Engine]

    def rows(self) -> Iterable[Sourced]:
        for e in self.engines:
            yield from e.releases

    def get(self, name: str) -> Engine | None:
        key = name.lower()
        return next((e for e in self.engines if key == e.name or key in e.aliases), None)


JaxPluginName = Literal["cuda12", "cuda13"]


class JaxPlugin(Sourced):
    """What one CUDA plugin of the JAX releases `from`..`until` needs: the
    oldest CUDA of its major, cuDNN at least `cudnn` and below `cudnn_below`,
    NCCL at least `nccl` (for multi-GPU work)."""

    model_config = ConfigDict(populate_by_name=True)
    # A plugin has a row per range of releases: the range is part of its identity.
    KEY: ClassVar[tuple[str, ...]] = ("plugin", "first", "until")

    plugin: JaxPluginName
    first: Annotated[VersionText | None, Field(alias="from")] = None
    until: VersionText | None = None
    cuda: VersionText
    cudnn: VersionText
    cudnn_below: VersionText
    nccl: VersionText | None = None

    def covers(self, release: str) -> bool:
        version = Version(Version(release).public)
        return not (
            (self.first is not None and version < Version(self.first))
            or (self.until is not None and version > Version(self.until))
        )


class JaxRelease(Sourced):
    release: VersionText
    date: dt.date | None = None


class JaxReleases(_SourcedTable):
    kind: Literal["JaxReleases"]
    as_of: dt.date
    plugins: list[JaxPlugin]
    releases: list[JaxRelease]

    def rows(self) -> Iterable[Sourced]:
        yield from self.plugins
        yield from self.releases

    @model_validator(mode="after")
    def _releases_once(self) -> JaxReleases:
        _once("jax", (r.release for r in self.releases))
        return self

    def release(self, version: str) -> JaxRelease | None:
        return next((r for r in self.releases if same_release(r.release, version)), None)

    def plugin(self, name: str, version: str) -> JaxPlugin | None:
        """The plugin row that covers the release (the first, as written)."""
        return next((p for p in self.plugins if p.plugin == name and p.covers(version)), None)


Task = Literal["training", "fine-tuning", "inference"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "mxfp8", "int8", "int4", "nvfp4"]
Fraction = Annotated[float, Field(ge=0, le=1)]


class Weights(Sourced):
    bytes: dict[Precision, Annotated[float, Field(gt=0)]]


class TaskFit(Sourced):
    # Bytes per parameter of weights + gradients + optimizer states; absent:
    # the weights alone, at the workload's precision (inference).
    state_bytes: Annotated[float, Field(gt=0)] | None = None
    allowance: Fraction  # activations (training) or KV cache (inference), as a fraction
    # job: sharded over every GPU of the workload; server: within each one server.
    scope: Literal["job", "server"]


class AdapterMode(Sourced):
    base_bytes: Annotated[float, Field(gt=0)]  # bytes per parameter of the frozen base
    adapter_fraction: Annotated[float, Field(gt=0, le=1)]  # adapter parameters per base parameter


class Activations(Sourced):
    checkpoint_bytes: Annotated[float, Field(gt=0)]  # per token x hidden of each layer's checkpoint
    layer_bytes: Annotated[float, Field(gt=0)]  # per token x hidden of the layer being recomputed


class Runtime(Sourced):
    overhead_gb: Annotated[float, Field(ge=0)]


class Estimate(Sourced):
    flops_per_param_token: Annotated[float, Field(gt=0)]
    lora_flops_per_param_token: Annotated[float, Field(gt=0)]
    mfu: Annotated[float, Field(gt=0, le=1)]


class FitModel(_SourcedTable):
    kind: Literal["FitModel"]
    weights: Weights
    tasks: dict[Task, TaskFit]
    modes: dict[Literal["lora", "qlora"], AdapterMode]
    activations: Activations
    runtime: Runtime
    estimate: Estimate

    def rows(self) -> Iterable[Sourced]:
        return [self.weights, *self.tasks.values(), *self.modes.values(), self.activations, self.runtime,
                self.estimate]


# ---------------------------------------------------------------- loading
class Knowledge(_Table):
    cuda: CudaReleases
    frameworks: Frameworks
    rocm: RocmReleases
    drivers: DriverBranches
    containers: ContainerImages
    engines: InferenceEngines
    jax: JaxReleases
    fit: FitModel

    def tables(self) -> Iterator[_SourcedTable]:
        for name in type(self).model_fields:
            yield getattr(self, name)

    @property
    def as_of(self) -> dt.date:
        """The date the compatibility tables are current to: the oldest of theirs
        (a user's documents included, docs/knowledge.md)."""
        return min(t.as_of for t in self.tables() if t.as_of is not None)


# The built-in tables: the field of Knowledge each fills, its file in
# rules/knowledge/ and its model. A table added here is read from its file,
# and a user's document of its `kind` (in the inventories or a rule folder) is
# validated by the same model and merged into it (extend, below): nothing else
# names the tables.
_FILES: dict[str, tuple[str, type[_SourcedTable]]] = {
    "cuda": ("cuda.yaml", CudaReleases),
    "frameworks": ("frameworks.yaml", Frameworks),
    "rocm": ("rocm.yaml", RocmReleases),
    "drivers": ("drivers.yaml", DriverBranches),
    "containers": ("containers.yaml", ContainerImages),
    "engines": ("engines.yaml", InferenceEngines),
    "jax": ("jax.yaml", JaxReleases),
    "fit": ("fit.yaml", FitModel),
}


def _kind(model: type[_SourcedTable]) -> str:
    kind: str = get_args(model.model_fields["kind"].annotation)[0]
    return kind


# The `kind` of each table -> its field of Knowledge. The inventory loader and
# the rulebook take a document of one of these kinds as knowledge.
TABLE_KINDS: dict[str, str] = {_kind(model): name for name, (_, model) in _FILES.items()}


def table_model(kind: str) -> type[_SourcedTable]:
    return _FILES[TABLE_KINDS[kind]][1]


def table_models() -> tuple[type[_SourcedTable], ...]:
    return tuple(model for _, model in _FILES.values())


def _load_table(path: Path, model: type[_SourcedTable]) -> _SourcedTable:
    table = read_file(path, "the knowledge table")
    if len(table.documents) != 1:
        raise UserError(f"{table.shown}: a knowledge table is one YAML document")
    doc = table.documents[0]
    try:
        validated = model.model_validate(doc.value)
    except ValidationError as exc:
        raise UserError([f"{table.shown}:{line}:{column}: {message}"
                         for _, (line, column), message in problems(exc, model, doc.src)]) from None
    _place(validated, Origin(str(path.resolve()), doc.src, builtin=True))
    return validated


def load_knowledge(folder: Path) -> Knowledge:
    """The tables of `folder`, validated; any problem is a located UserError."""
    tables = {name: _load_table(folder / file, model) for name, (file, model) in _FILES.items()}
    return Knowledge.model_validate(tables)


@cache
def builtin() -> Knowledge:
    """The built-in tables (read once per process)."""
    return load_knowledge(knowledge_dir())


# ---------------------------------------------------------------- a user's tables
# A table is a model whose fields (but kind, sources and as_of) hold rows: a
# list of rows (`branches`), a mapping of rows (`tasks`) or one row (`weights`).
# A row is Sourced (a fact, with its source), or a group of rows of its own (a
# Framework: its releases, architectures and wheels), merged field by field.
_TABLE_FIELDS = frozenset({"kind", "sources", "as_of"})
Shape = Literal["list", "dict", "one"]


def _shape(annotation: Any) -> tuple[Shape, type[_Table]] | None:
    """How a field holds rows, and their model; None for a plain value."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and _is_row(args[0]):
        return "list", args[0]
    if origin is dict and _is_row(args[1]):
        return "dict", args[1]
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return _shape(inner[0]) if len(inner) == 1 else None
    return ("one", annotation) if _is_row(annotation) else None


def _is_row(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, _Table)


@cache  # by model class: what the code declares, nothing of a run
def _row_fields(model: type[_Table]) -> tuple[tuple[str, str, Shape], ...]:
    """(field, its key in YAML, shape) of each field of `model` that holds rows."""
    out = []
    for name, info in model.model_fields.items():
        shaped = _shape(info.annotation)
        if shaped is not None and name not in _TABLE_FIELDS:
            out.append((name, info.alias or name, shaped[0]))
    return tuple(out)


def _children(value: _Table) -> Iterator[tuple[tuple[str | int, ...], _Table]]:
    """Each row directly in `value`, with its path below it."""
    for name, alias, shape in _row_fields(type(value)):
        held = getattr(value, name)
        if shape == "list":
            yield from (((alias, i), row) for i, row in enumerate(held))
        elif shape == "dict":
            yield from (((alias, str(k)), row) for k, row in held.items())
        elif held is not None:
            yield (alias,), held


def _place(value: _Table, origin: Origin) -> None:
    """Mark `value` and every row below it with where it is written."""
    value._origin = origin
    for path, row in _children(value):
        _place(row, Origin(origin.file, origin.src.descend(*path), origin.builtin))


def _is_group(row: _Table) -> bool:
    """A row that holds rows of its own (a Framework), not a fact with a source."""
    return not isinstance(row, Sourced)


_PROVENANCE = {"source", "notes"}


def _changes(old: _Table, new: _Table) -> list[str]:
    """What a user's row changes in the row it replaces, `field old -> new`."""
    before, after = old.model_dump(exclude=_PROVENANCE), new.model_dump(exclude=_PROVENANCE)
    own = [k for k in after if k not in Sourced.model_fields]  # the facts, then verified / unverified
    return [
        f"{type(new)._alias(k)} {_shown(before.get(k))} -> {_shown(after.get(k))}"
        for k in (*own, *(k for k in after if k not in own)) if before.get(k) != after.get(k)
    ]


@dataclass
class Extended:
    """The built-in tables with a user's documents merged in."""

    knowledge: Knowledge
    problems: list[Finding]  # schema findings: the documents cannot be used (exit 2)
    overrides: list[Finding]  # knowledge.override: a user's row replaces a built-in one
    # (kind, source key) -> the file that defines it, for a key defined twice.
    sources: dict[tuple[str, str], str] = field(default_factory=dict)


class _Merge:
    """One user document merged into the table of its kind."""

    def __init__(self, kind: str, doc: Placed[dict[str, Any]], out: Extended) -> None:
        self.kind, self.doc, self.out = kind, doc, out

    def problem(self, rule: str, where: Location, message: str) -> None:
        self.out.problems.append(located(rule, "schema", where, message))

    def table(self, base: _SourcedTable, user: _SourcedTable) -> _SourcedTable | None:
        clash = False
        for key, text in user.sources.items():
            defined = self.out.sources.setdefault((self.kind, key), self.doc.file)
            if base.sources.get(key, text) != text:
                where = Location(self.doc.file, *self.doc.src.locate(["sources", key]))
                first = base._origin.shown if key in _builtin_sources(base) and base._origin else defined
                self.problem(SCHEMA_INVALID, where, f"source key '{key}' of {self.kind} is defined with "
                             f"another text in {first}: give yours another key")
                clash = True
        fields = self.fields(base, user, ())
        if fields is None or clash:
            return None
        dates = [d for d in (base.as_of, user.as_of) if d is not None]
        whole = {"kind": self.kind, "sources": {**base.sources, **user.sources}, **fields}
        merged = self.rebuilt(type(base), {**whole, **({"as_of": min(dates)} if dates else {})},
                              user._origin)
        if merged is not None:
            merged._origin = base._origin
        return merged

    def rebuilt(self, model: type[_T], fields: dict[str, Any], origin: Origin | None) -> _T | None:
        """`model` of the merged fields, validated as a whole table is; a check that
        fails only with the built-in rows is reported at the user's rows."""
        try:
            return model.model_validate(fields)
        except ValidationError as exc:
            where = origin.location() if origin else Location(self.doc.file, self.doc.src.line, 1)
            for error in exc.errors():
                _, message, _ = describe_error(error, model)
                message = message.removeprefix("document: ")
                self.problem(SCHEMA_INVALID, where, f"with the built-in {self.kind} rows: {message}")
            return None

    def fields(self, base: _Table, user: _Table, labels: tuple[str, ...]) -> dict[str, Any] | None:
        """The fields of `base` (a table or a group of rows) with `user`'s merged in,
        by their YAML keys; None when the user's changes a plain value of a group."""
        out: dict[str, Any] = {}
        ok = True
        for name, info in type(base).model_fields.items():
            if name in _TABLE_FIELDS:
                continue
            alias = info.alias or name
            old, new = getattr(base, name), getattr(user, name)
            shaped = _shape(info.annotation)
            if shaped is None:
                if name in user.model_fields_set and new != old:
                    where = user._origin.src.locate([alias]) if user._origin else (1, 1)
                    self.problem(SCHEMA_INVALID, Location(self.doc.file, *where),
                                 f"{self.kind} {' / '.join(labels)}: {alias} is {_shown(old)} in the "
                                 f"built-in row at {_where(base)}; a document that adds to it cannot "
                                 "change it")
                    ok = False
                out[alias] = old
            elif shaped[0] == "list":
                mine = [(r.key(), r.label(), r) for r in new]
                out[alias] = [row for _, row in self.rows([(r.key(), r) for r in old], mine, labels)]
            elif shaped[0] == "dict":
                mine = [(k, f"{alias} {k}", r) for k, r in new.items()]
                out[alias] = dict(self.rows(list(old.items()), mine, labels))
            else:
                if old is not None and new is not None:
                    self.replaced(old, new, (*labels, alias))
                out[alias] = old if new is None else new
        return out if ok else None

    def rows(
        self, old: list[tuple[Hashable, Any]], new: list[tuple[Hashable, str, Any]], labels: tuple[str, ...]
    ) -> list[tuple[Hashable, Any]]:
        """(key, row) pairs merged by key: a user's new rows first (a lookup that
        takes the first match finds them before the built-in ones), a group of rows
        merged in place, a built-in row a user's row replaces left out."""
        index = {key: i for i, (key, _) in enumerate(old)}
        first: list[tuple[Hashable, Any]] = []
        kept: list[tuple[Hashable, Any] | None] = list(old)
        mine: dict[Hashable, _Table] = {}
        for key, label, row in new:
            named = " / ".join((*labels, label))
            if key in mine:
                self.twice(row, named, mine[key])
                continue
            mine[key] = row
            i = index.get(key)
            if i is None:
                first.append((key, row))
                continue
            before = old[i][1]
            if _is_group(before):
                fields = self.fields(before, row, (*labels, label))
                group = None if fields is None else self.rebuilt(type(before), fields, row._origin)
                if group is not None:
                    group._origin = before._origin
                    kept[i] = (key, group)
            elif not _builtin(before):
                self.twice(row, named, before)
            else:
                self.replaced(before, row, (*labels, label))
                first.append((key, row))
                kept[i] = None
        return first + [pair for pair in kept if pair is not None]

    def twice(self, row: _Table, named: str, first: _Table) -> None:
        self.problem(SCHEMA_DUPLICATE_NAME, _location(row, self.doc),
                     f"{self.kind} {named} is given twice: first at {_where(first)}")

    def replaced(self, old: _Table, new: _Table, labels: tuple[str, ...]) -> None:
        changes = _changes(old, new)
        if not changes:
            return  # the same facts: nothing the audit sees changes
        sources = (f"yours: source {', '.join(getattr(new, 'source', []))}; "
                   f"built in: source {', '.join(getattr(old, 'source', []))}")
        message = (f"{self.kind} {' / '.join(labels)} replaces the built-in row at {_where(old)}: "
                   f"{', '.join(changes)} ({sources})")
        self.out.overrides.append(
            located(
                KNOWLEDGE_OVERRIDE, "compatibility", _location(new, self.doc), message, severity="warning"
            )
        )


_T = typing.TypeVar("_T", bound=_Table)


def _builtin_sources(table: _SourcedTable) -> set[str]:
    """The source keys the table's built-in rows cite."""
    return {key for row in table.rows() if _builtin(row) for key in row.source}


def _where(row: _Table) -> str:
    return row._origin.where() if row._origin else "unknown"


def _location(row: _Table, doc: Placed[dict[str, Any]]) -> Location:
    return row._origin.location() if row._origin else Location(doc.file, doc.src.line, doc.src.column)


Problems = list[tuple[str, tuple[int, int], str]]  # (check id, (line, column), message)


def validate_document(kind: str, value: dict[str, Any], src: Src) -> tuple[_SourcedTable | None, Problems]:
    """A user's document of a table kind, validated by the table's model as far as
    it can be alone; (None, its problems) when it fails."""
    model = table_model(kind)
    found: Problems = []

    def report(exc: ValidationError, prefix: tuple[str | int, ...]) -> None:
        found.extend(problems(exc, model, src, prefix, MAX_LISTED - len(found)))

    # A long table a piece at a time, as an inventory's lists (issue 17).
    return validate_pieces(model, value, report, context=PART), found


def extend(base: Knowledge, docs: Sequence[Placed[dict[str, Any]]]) -> Extended:
    """`base` with the user's documents of table kinds merged in, in order: each
    validated by its table's model, a row with the key of a built-in row
    replacing it (a knowledge.override finding says so), a key given twice by
    the user's documents refused. Without documents, `base` itself."""
    out = Extended(base, [], [])
    tables = {name: getattr(base, name) for name in TABLE_KINDS.values()}
    for doc in docs:
        kind = doc.value["kind"]
        user, found = validate_document(kind, doc.value, doc.src)
        for rule, (line, column), message in found:
            out.problems.append(located(rule, "schema", Location(doc.file, line, column), message))
        if user is None:
            continue
        _place(user, Origin(doc.file, doc.src, builtin=False))
        merged = _Merge(kind, doc, out).table(tables[TABLE_KINDS[kind]], user)
        if merged is not None:
            tables[TABLE_KINDS[kind]] = merged
    if docs:
        out.knowledge = base.model_copy(update=tables)
    return out


# ---------------------------------------------------------------- the reference (docs/knowledge.md)
def _flat(metadata: Iterable[Any]) -> list[Any]:
    """Annotated metadata, a Field()'s own constraints spread out."""
    out: list[Any] = []
    for item in metadata:
        out += [item, *_flat(getattr(item, "metadata", []) or [])] if hasattr(item, "metadata") else [item]
    return out


def _named_validators(metadata: Iterable[Any]) -> str | None:
    names = {
        _version_text: "version",
        _month: "month (`YYYY-MM`)",
        _pattern: "regular expression",
        _lowercase: "lowercase name",
    }
    for item in _flat(metadata):
        func = getattr(item, "func", None)
        if func in names:
            return names[func]
    return None


def _bounds(metadata: Iterable[Any]) -> str:
    marks = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    flat = [item for item in _flat(metadata) if not hasattr(item, "metadata")]
    out = [f"{sign} {getattr(item, name)}" for item in flat for name, sign in marks.items()
           if getattr(item, name, None) is not None]
    out += [f"at least {item.min_length}" for item in flat if getattr(item, "min_length", None)]
    return f" ({', '.join(out)})" if out else ""


_PLAIN = {str: "text", int: "integer", float: "number", bool: "boolean", dt.date: "date"}


def _type_text(annotation: Any, metadata: Sequence[Any] = ()) -> str:
    """A field's type as docs/knowledge.md shows it."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _type_text(args[0], [*metadata, *annotation.__metadata__])
    named = _named_validators(metadata)
    if named:
        return named + _bounds(metadata)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in args if a is not type(None)) + _bounds(metadata)
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_text(args[0])}" + _bounds(metadata)
    if origin is dict:
        return f"mapping of {_type_text(args[0])} to {_type_text(args[1])}" + _bounds(metadata)
    if _is_row(annotation):
        return f"`{annotation.__name__}`"
    return _PLAIN.get(annotation, getattr(annotation, "__name__", str(annotation))) + _bounds(metadata)


def _field_rows(model: type[_Table], skip: frozenset[str]) -> list[str]:
    lines = ["| field | type | required |", "|---|---|---|"]
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        default = info.get_default(call_default_factory=True)
        required = "yes" if info.is_required() else ""
        if not info.is_required() and default not in (None, [], {}):
            required = f"default {_shown(default)}"
        shown = _type_text(info.annotation, info.metadata)
        lines.append(f"| `{info.alias or name}` | {shown} | {required} |")
    return lines


def _row_models(model: type[_Table]) -> Iterator[tuple[type[_Table], Shape]]:
    """The row models below a table, each once, in the order their fields come,
    with how they are held."""
    seen: set[type[_Table]] = set()

    def walk(m: type[_Table]) -> Iterator[tuple[type[_Table], Shape]]:
        for name, info in m.model_fields.items():
            shaped = _shape(info.annotation)
            if shaped is None or name in _TABLE_FIELDS or shaped[1] in seen:
                continue
            seen.add(shaped[1])
            yield shaped[1], shaped[0]
            yield from walk(shaped[1])

    return walk(model)


def tables_reference() -> str:
    """Every table kind with its fields, generated from the models (a test checks
    that docs/knowledge.md holds it)."""
    provenance = frozenset(Sourced.model_fields)
    out: list[str] = []
    for name, (file, model) in _FILES.items():
        out += ["", f"### `{_kind(model)}`", "",
                f"Built in: `rules/knowledge/{file}` (`Knowledge.{name}`).", ""]
        out += _field_rows(model, frozenset({"kind"}))
        for row, shape in _row_models(model):
            keys = {
                "list": "key " + ", ".join(f"`{row._alias(k)}`" for k in row.key_fields()),
                "dict": "key: its mapping key",
                "one": "key: its field",
            }[shape]
            sourced = issubclass(row, Sourced)
            what = "a group of rows"
            if sourced:
                what = "a row (with `source`, `verified`, `unverified`, `notes`)"
            out += ["", f"`{row.__name__}`: {what}; {keys}.", ""]
            out += _field_rows(row, provenance if sourced else frozenset())
    return "\n".join(out[1:]) + "\n"
