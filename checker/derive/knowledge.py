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
from collections.abc import Iterable
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Literal, get_args

from packaging.version import InvalidVersion, Version
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    model_validator,
)

from checker.core.errors import UserError
from checker.core.resources import knowledge_dir
from checker.source.reader import read_file, validate

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
class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
    def _updates_have_a_release(self) -> CudaReleases:
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

    def listed(self, stack: str) -> bool:
        """Whether the `cuda` or `rocm` list is complete: a list marked
        unverified may leave builds out, so a build not in it is unknown, not missing."""
        return stack not in self.unverified


class WheelArchitectures(Sourced):
    """What compute capabilities the wheels of one CUDA variant hold code for,
    over a range of releases (`from`..`until`, both included), or what the
    builds of one platform leave out (aarch64)."""

    model_config = ConfigDict(populate_by_name=True)

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


class Framework(_Table):
    name: str
    aliases: list[str] = []
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

    def get(self, name: str) -> Framework | None:
        """By name or alias, in any case (`PyTorch`, `torch`)."""
        key = name.lower()
        return next((f for f in self.frameworks if key == f.name or key in f.aliases), None)


class RocmRelease(Sourced):
    rocm: VersionText


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

    @property
    def as_of(self) -> dt.date:
        """The date the compatibility tables are current to: the oldest of theirs."""
        tables = (self.cuda, self.frameworks, self.rocm, self.drivers, self.containers, self.engines,
                  self.jax)
        return min(t.as_of for t in tables)


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


# The `kind` of each table: a document of one of them outside the built-in
# knowledge folder is refused by name (see the rulebook), never skipped.
TABLE_KINDS: tuple[str, ...] = tuple(
    get_args(model.model_fields["kind"].annotation)[0] for _, model in _FILES.values()
)


def _load_table(path: Path, model: type[_SourcedTable]) -> _SourcedTable:
    table = read_file(path, "the knowledge table")
    if len(table.documents) != 1:
        raise UserError(f"{table.shown}: a knowledge table is one YAML document")
    return validate(model, table.documents[0], table.shown)


def load_knowledge(folder: Path) -> Knowledge:
    """The tables of `folder`, validated; any problem is a located UserError."""
    tables = {name: _load_table(folder / file, model) for name, (file, model) in _FILES.items()}
    return Knowledge.model_validate(tables)


@cache
def builtin() -> Knowledge:
    """The built-in tables (read once per process)."""
    return load_knowledge(knowledge_dir())
