"""Typed inventory models (pydantic v2). Field names are the inventory contract (inventories/README.md).

Every model forbids unknown fields, so a typo is an error with a suggestion,
never a silently ignored value.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, model_validator

# \s in a str pattern is exactly str.isspace(); one search, not a Python loop per character.
_SPACE_OR_SLASH = re.compile(r"[\s/]")


def _name(value: Any) -> Any:
    if isinstance(value, str) and (not value or len(value) > 200 or _SPACE_OR_SLASH.search(value)):
        raise ValueError("a name is 1-200 characters without spaces or '/' (it becomes part of entity ids)")
    if isinstance(value, str) and not value.isprintable():
        # Names reach terminals and CI logs: no control (ESC, BEL) or invisible characters.
        raise ValueError("a name may not hold control or invisible characters")
    return value


Name = Annotated[str, AfterValidator(_name)]


def _date(value: Any) -> Any:
    # pydantic reads a number as seconds since 1970: `rollout_date: 0` is a typo, not 1970-01-01.
    if isinstance(value, (bool, int, float)):
        raise ValueError("expected a date (YYYY-MM-DD)")
    return value


Date = Annotated[dt.date, BeforeValidator(_date)]
# Strict numbers: YAML reads `amps: yes` as True, which lax validation would
# silently turn into a 1 A feed; quoted numbers are refused the same way.
# The upper bound keeps every value readable by the rules engine (a C long).
# Physical quantities: a rating below a millionth of its unit (`amps: 1.0e-300`) is a
# typo, not a measurement; counts stop at a billion (a 4,000-digit GPU count
# would overflow every aggregate).
SMALLEST = 1e-6


def _plausible(value: float) -> float:
    if value < SMALLEST:
        raise ValueError(f"{value:g} is no plausible quantity (below {SMALLEST:g} of its unit); a typo?")
    return value


Pos = Annotated[float, Strict(), Field(gt=0, lt=1e15), AfterValidator(_plausible)]
NonNeg = Annotated[float, Strict(), Field(ge=0, lt=1e15)]
Percent = Annotated[float, Strict(), Field(ge=1, le=100)]
Count = Annotated[int, Strict(), Field(ge=0, le=10**9)]
PosInt = Annotated[int, Strict(), Field(ge=1, le=10**9)]
Flag = Annotated[bool, Strict()]  # `nvlink: "yes"` or `1` is a typo, not a yes


def _version(value: Any) -> Any:
    # An unquoted `cuda: 12.10` is the float 12.1: the value is already lost,
    # so refuse floats instead of guessing. The loader keeps the written text.
    if isinstance(value, float):
        written = getattr(value, "yaml_text", repr(value))
        raise ValueError(f'write version numbers as strings: quote it, as in "{written}"')
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _whole_number(value: Any) -> Any:
    # Literal[1, 3] alone would take `phase: true` as 1 and `3.0` as 3.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected a whole number, not {value!r}")
    return value


def _raid(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


_VERSION = re.compile(r"\d+(\.\d+)*([+-][\w.]+)?")


def _version_form(value: str) -> str:
    if not _VERSION.fullmatch(value):
        raise ValueError(
            "a version is numbers separated by dots, with an optional +variant (e.g. 2.3.1+cu121)"
        )
    return value


Version = Annotated[str, BeforeValidator(_version), AfterValidator(_version_form)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- Facility
class Feed(Model):
    name: Name
    side: Literal["A", "B"] | None = None
    voltage: Pos
    amps: Pos
    phase: Annotated[Literal[1, 3], BeforeValidator(_whole_number)] = 1
    max_utilization: Percent = 80  # NetBox default: the NEC 210.20(A) 80 % rule
    power_factor: Annotated[float, Strict(), Field(gt=0, le=1)] = 1.0


class Ats(Model):
    """A rack's automatic transfer switch: the single-corded devices cabled to
    it (`psu.feeds: {ATS: 1}`) draw from `primary`, and from `secondary` while
    the primary is down."""

    name: Name
    primary: Name  # feed names of the rack
    secondary: Name
    amps: Pos  # its rating, on the primary feed's voltage

    @model_validator(mode="after")
    def _two_feeds(self) -> Ats:
        if self.primary == self.secondary:
            raise ValueError("an ATS switches between two feeds: primary and secondary differ")
        return self


class Rack(Model):
    name: Name
    u_height: Annotated[int, Strict(), Field(ge=1, le=100)] = 42
    weight_kg: NonNeg | None = None
    max_weight_kg: Pos | None = None
    footprint_m2: Pos = 0.72  # a 600 x 1200 mm rack
    cooling: Literal["air", "rear-door", "liquid"] = "air"
    cooling_kw: NonNeg | None = None
    # N: the feeds add up; N+1: any one feed may fail; 2N: either side (A/B) may fail.
    redundancy: Literal["N", "N+1", "2N"] = "N"
    feeds: list[Feed] = []
    ats: list[Ats] = []
    # How the rack is cabled, for servers without psu.feeds: PSU 1 of each
    # server to the first feed (or ATS) named, PSU 2 to the second, and round
    # again (a DGX's 6 PSUs over [A1, B1, A2, B2]: 2, 2, 1 and 1).
    psu_order: list[Name] | None = None


class PueModel(Model):
    fixed_kw: NonNeg
    cooling_kw_per_it_kw: NonNeg
    loss_fraction: Annotated[float, Strict(), Field(ge=0, lt=1)]


class FacilityPower(Model):
    it_capacity_kw: Pos
    utility_kw: Pos | None = None
    basis: Literal["max", "typical"] = "max"


class FacilityCooling(Model):
    capacity_kw: Pos
    units: PosInt = 1
    redundancy: Literal["N", "N+1", "2N"] = "N"
    inlet_c: Annotated[float, Strict(), Field(ge=-10, le=60)] | None = None
    ashrae_class: Literal["A1", "A2", "A3", "A4"] | None = None
    # Air temperature rise across the servers, for airflow (CFM) figures. Servers
    # typically run 11-14 C (20-25 F); the low end gives the most airflow.
    delta_t_c: Annotated[float, Strict(), Field(gt=0, le=40)] = 11


class Facility(Model):
    kind: Literal["Facility"]
    name: Name
    location: str | None = None
    pue_target: Annotated[float, Strict(), Field(ge=1)] | None = None
    design_pue: Annotated[float, Strict(), Field(ge=1)] | None = None
    pue_model: PueModel | None = None
    power: FacilityPower | None = None
    cooling: FacilityCooling | None = None
    floor_max_kg_per_m2: Pos | None = None
    energy_price_per_kwh: NonNeg | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    racks: list[Rack] = []


# ---------------------------------------------------------------- Servers
class PowerDraw(Model):
    max: Pos
    typical: Pos | None = None

    @model_validator(mode="after")
    def _typical_below_max(self) -> PowerDraw:
        if self.typical is not None and self.typical > self.max:
            raise ValueError("typical draw cannot exceed max draw")
        return self


class InputVoltage(Model):
    """The AC input voltage range a PSU is rated for (200-240 V for a DGX)."""

    min: Annotated[float, Strict(), Field(gt=0, le=1000)]
    max: Annotated[float, Strict(), Field(gt=0, le=1000)]

    @model_validator(mode="after")
    def _min_below_max(self) -> InputVoltage:
        if self.min > self.max:
            raise ValueError(f"min {self.min:g} V is above max {self.max:g} V")
        return self


class Psu(Model):
    count: PosInt
    rating_w: Pos | None = None
    redundant: Count | None = None
    efficiency: Literal["bronze", "silver", "gold", "platinum", "titanium"] | None = None
    # PSUs cabled to each side of a 2N rack (the smaller side if uneven);
    # default: split evenly, count // 2.
    per_side: PosInt | None = None
    # PSUs cabled to each feed of the rack, by feed name (they add up to
    # count); without it a side's PSUs (every PSU, in a rack without sides)
    # are spread as evenly as whole PSUs allow, the odd ones on the weakest feeds.
    feeds: dict[Name, PosInt] | None = None
    # The AC input voltage range the PSUs are rated for; checked against what
    # the rack's feeds give them (power.psu-input-voltage).
    input_v: InputVoltage | None = None

    @model_validator(mode="after")
    def _redundant_below_count(self) -> Psu:
        if self.redundant is not None and self.redundant >= self.count:
            raise ValueError("redundant PSUs must be fewer than the PSU count")
        if self.per_side is not None and 2 * self.per_side > self.count:
            raise ValueError("per_side counts the smaller side: at most half the PSU count")
        if self.feeds is not None and sum(self.feeds.values()) != self.count:
            raise ValueError(f"feeds cable {sum(self.feeds.values())} PSUs, but count is {self.count}")
        return self


class InletRange(Model):
    """The inlet air temperature the equipment is specified for."""

    min: Annotated[float, Strict(), Field(ge=-40, le=80)] | None = None
    max: Annotated[float, Strict(), Field(ge=-40, le=80)] | None = None


class GpuRef(Model):
    model: Name
    count: PosInt


class Cpu(Model):
    model: str | None = None
    sockets: PosInt | None = None
    pcie_lanes: Count | None = None


class Storage(Model):
    nvme_tb: NonNeg | None = None
    raid: Annotated[Literal["none", "0", "1", "5", "6", "10"], BeforeValidator(_raid)] | None = None
    # The local NVMe is a scratch or cache tier (a DGX's RAID-0 data cache):
    # datasets and checkpoints live on shared storage, so it needs no RAID.
    scratch: Flag = False


class Network(Model):
    fabric: Literal["infiniband", "roce", "ethernet"] | None = None
    gbps: Pos | None = None
    ports: Count | None = None
    nvlink: Flag | None = None


class Software(Model):
    os: str | None = None
    driver: Version | None = None
    cuda: Version | None = None
    rocm: Version | None = None
    # A factory, not `= {}`: pydantic deep-copies a mutable default for every
    # server (10,000 copies of an empty dict); the schema still shows the default.
    frameworks: dict[Name, Version] = Field(default_factory=dict, json_schema_extra={"default": {}})


class Support(Model):
    vendor: str | None = None
    level: Literal["24x7", "8x5", "nbd", "none"]
    until: Date | None = None


class ServerSpec(Model):
    """Hardware fields shared by servers and the server catalog."""

    u_height: Annotated[int, Strict(), Field(ge=1, le=100)] | None = None
    weight_kg: NonNeg | None = None
    power_w: PowerDraw | None = None
    psu: Psu | None = None
    cooling: Literal["air", "liquid"] | None = None
    inlet_c: InletRange | None = None
    gpu: GpuRef | None = None
    cpu: Cpu | None = None
    memory_gb: NonNeg | None = None
    storage: Storage | None = None
    network: Network | None = None


class Server(ServerSpec):
    name: Name
    model: Name | None = None
    rack: Name
    # Lowest U occupied; with u_height absent too the device is not rack-mounted and takes no U.
    position: Annotated[int, Strict(), Field(ge=1, le=100)] | None = None
    # An enforced, persistent limit on wall draw (BMC / Redfish power capping or a
    # power-shelf policy; not nvidia-smi -pl, GPU board power only and reset at
    # reboot): it stands in for power_w.max wherever peak draw counts.
    power_cap_w: Pos | None = None
    software: Software | None = None
    support: Support | None = None
    workload: Name | None = None


class ServersDoc(Model):
    """A `kind: Servers` document; servers are validated one by one after merging."""

    kind: Literal["Servers"]
    facility: Name
    rollout_date: Date | None = None
    defaults: dict[str, Any] = {}
    servers: list[dict[str, Any]]


# ---------------------------------------------------------------- Workloads, waivers
class Workload(Model):
    name: Name
    task: Literal["training", "fine-tuning", "inference"]
    # Bounded far above any model or corpus so derived figures (bytes, FLOPs)
    # stay numbers the rules engine can read.
    params_b: Annotated[float, Strict(), Field(gt=0, le=100_000)]
    precision: Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
    framework: Name | None = None
    dataset_tb: NonNeg | None = None
    tokens_b: Annotated[float, Strict(), Field(gt=0, le=1_000_000)] | None = None
    deadline_days: Pos | None = None


class WorkloadsDoc(Model):
    kind: Literal["Workloads"]
    workloads: list[Workload]


class Waiver(Model):
    rule: Annotated[str, Field(min_length=1)]
    entity: Annotated[str, Field(min_length=1)]
    reason: Annotated[str, Field(min_length=3)]
    owner: Annotated[str, Field(min_length=1)]
    expires: Date


class WaiversDoc(Model):
    kind: Literal["Waivers"]
    waivers: list[Waiver]


# ---------------------------------------------------------------- Catalog
class CatalogEntry(Model):
    """Provenance every catalog entry carries: numbers are only as good as their source."""

    name: Name
    description: str | None = None
    vendor: str | None = None
    source: Annotated[str, Field(min_length=1)]
    verified: Flag = True
    unverified: list[str] = []
    notes: str | None = None

    @model_validator(mode="after")
    def _unverified_listed(self) -> CatalogEntry:
        if self.verified == bool(self.unverified):
            raise ValueError("list the unverified fields in `unverified` exactly when verified is false")
        return self


class GpuModel(CatalogEntry):
    vendor: Literal["NVIDIA", "AMD"]
    architecture: str | None = None
    compute_capability: Version | None = None
    llvm_target: str | None = None
    min_cuda: Version | None = None
    min_rocm: Version | None = None
    memory_gb: Pos
    tdp_w: Pos | None = None
    form_factor: Literal["sxm", "pcie", "oam", "embedded"] | None = None
    interconnect: Literal["nvlink", "nvlink-bridge", "pcie", "infinity-fabric", "none"] | None = None
    interconnect_gb_s: Pos | None = None
    bf16_tflops: Pos | None = None
    fp16_tflops: Pos | None = None
    # First CUDA release without support for the GPU (Volta: 13.0).
    cuda_dropped: Version | None = None
    # Driver minimum where the GPU needs more than its CUDA does (HGX B200).
    min_driver: Version | None = None
    # Last driver branch that supports the GPU (Volta: R580).
    last_driver_branch: PosInt | None = None
    # GPUs software sees per package: an MI250X is two 64 GB dies.
    logical_gpus: PosInt = 1
    # CUDA forward compatibility (cuda-compat) works: data-center GPUs and Jetson.
    forward_compatible: Flag = True


class ServerModel(ServerSpec, CatalogEntry):
    # The GPU boards the model takes; another GPU model contradicts the server model.
    gpu_options: list[Name] = []


# Catalog provenance fields are not server fields: dropped when a server uses a model.
CATALOG_META = frozenset(CatalogEntry.model_fields) | {"gpu_options"}


class GpuModelsDoc(Model):
    kind: Literal["GpuModels"]
    gpus: list[GpuModel]


class ServerModelsDoc(Model):
    kind: Literal["ServerModels"]
    servers: list[ServerModel]
