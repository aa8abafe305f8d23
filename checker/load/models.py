"""Typed inventory models (pydantic v2). Field names are the inventory contract (inventories/README.md).

Every model forbids unknown fields, so a typo is an error with a suggestion,
never a silently ignored value.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    Tag,
    WithJsonSchema,
    model_validator,
)

from checker.core.errors import clip, shown_value
from checker.source.reader import UNION_TAG

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
        written = clip(getattr(value, "yaml_text", repr(value)))
        raise ValueError(f'write version numbers as strings: quote it, as in "{written}"')
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _whole_number(value: Any) -> Any:
    # Literal[1, 3] alone would take `phase: true` as 1 and `3.0` as 3.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected a whole number, not {shown_value(value)}")
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

# A package release as PyPI numbers it: an engine publishes post releases
# (vLLM 0.8.5.post1, SGLang 0.5.3.post1).
_RELEASE = re.compile(r"\d+(\.\d+)*(\.post\d+)?([+-][\w.]+)?")


def _release_form(value: str) -> str:
    if not _RELEASE.fullmatch(value):
        raise ValueError(
            "a release is numbers separated by dots, with an optional .postN and +variant "
            "(e.g. 0.8.5.post1, 0.11.0+cu126)"
        )
    return value


ReleaseVersion = Annotated[str, BeforeValidator(_version), AfterValidator(_release_form)]


class Model(BaseModel):
    # defer_build: a model's validator is built when it is first used, not when
    # its module is imported. An audit uses a third of these models (the rest:
    # waivers, catalogs it was not given, `checker import`), and a model used
    # only inside another (Feed in Facility) never needs a validator of its own.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# Items of a list inside an entry (a rack's feeds, a CDU's racks, a catalog
# entry's unverified fields): far above any real one, and a list past it is one
# error, not one per item (a million bad feeds once made a million; issue 17).
# A document's own lists (racks, servers, workloads) are unbounded and read a
# piece at a time (checker.source.reader.validate_pieces).
MAX_ITEMS = 1_000
Items = Field(max_length=MAX_ITEMS)


# ---------------------------------------------------------------- Facility
# Single-phase PSUs on a three-phase feed are wired between a line and
# neutral where that gives them a PSU's voltage (230/240 V of a 400/415 V
# system), else between two lines (208 V of a 120/208 V system).
LINE_TO_NEUTRAL_MIN_V = 200.0
LINE_TO_NEUTRAL = ("L1", "L2", "L3")
LINE_TO_LINE = ("L1-L2", "L2-L3", "L3-L1")
Phase = Literal["L1", "L2", "L3", "L1-L2", "L2-L3", "L3-L1"]




def _psus_form(value: Any) -> str:
    return f"{UNION_TAG}by phase" if isinstance(value, dict) else f"{UNION_TAG}count"


# PSUs on one feed: a count, or a count by phase (`{L1: 1, L2: 1}`).
PsusOnFeed = Annotated[
    Annotated[PosInt, Tag(f"{UNION_TAG}count")]
    | Annotated[dict[Phase, PosInt], Field(min_length=1), Tag(f"{UNION_TAG}by phase")],
    Discriminator(_psus_form),
]


# A circuit's phases (a whole 1 or 3: not `true`, not `3.0`) and its load's
# power factor: a feed's, a panel's and a PSU's alike.
Phases = Annotated[Literal[1, 3], BeforeValidator(_whole_number)]
PowerFactor = Annotated[float, Strict(), Field(gt=0, le=1)]


class Feed(Model):
    name: Name
    side: Literal["A", "B"] | None = None
    voltage: Pos
    amps: Pos
    phase: Phases = 1
    max_utilization: Percent = 80  # NetBox default: the NEC 210.20(A) 80 % rule
    power_factor: PowerFactor = 1.0
    ups: Name | None = None  # the facility's UPS block it is fed from (power.ups)
    panel: Name | None = None  # the facility's panel it is a circuit of (power.panels)
    # A single-phase feed's line of its three-phase panel (L1-L3), or line pair
    # (L1-L2, L2-L3, L3-L1) where it is wired line to line (Panel.lines_for).
    line: Literal["L1", "L2", "L3", "L1-L2", "L2-L3", "L3-L1"] | None = None

    @property
    def phases(self) -> tuple[str, ...]:
        """Where a single-phase PSU can be plugged on it: () on a single-phase feed."""
        if self.phase != 3:
            return ()
        return LINE_TO_NEUTRAL if self.voltage / 3**0.5 >= LINE_TO_NEUTRAL_MIN_V else LINE_TO_LINE


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
    feeds: Annotated[list[Feed], Items] = []
    ats: Annotated[list[Ats], Items] = []
    # How the rack is cabled, for servers without psu.feeds: PSU 1 of each
    # server to the first feed (or ATS) named, PSU 2 to the second, and round
    # again (a DGX's 6 PSUs over [A1, B1, A2, B2]: 2, 2, 1 and 1).
    psu_order: Annotated[list[Name], Items] | None = None
    # The row the rack stands in: a CDU may serve whole rows (Cdu.rows).
    row: Name | None = None


# ASHRAE TC 9.9 liquid-cooling classes (2021 names) by the highest facility
# water supply temperature each allows, in degC (the number in the name); W+
# is above 45 degC, with no upper bound.
WATER_CLASS_MAX_C: dict[str, float | None] = {
    "W17": 17, "W27": 27, "W32": 32, "W40": 40, "W45": 45, "W+": None,
}


class PueModel(Model):
    fixed_kw: NonNeg
    cooling_kw_per_it_kw: NonNeg
    loss_fraction: Annotated[float, Strict(), Field(ge=0, lt=1)]


class UpsBlock(Model):
    """One UPS system (a block) of the facility, with what rides on it beside IT."""

    name: Name
    capacity_kw: Pos  # its output rating, kW
    # Catcher (isolated redundant) designs: the block that takes over a failed one.
    reserve: Flag = False
    # Cooling that must ride the UPS (CDU and chilled-water pumps: liquid-cooled
    # racks have seconds of thermal ride-through), kW on this block.
    mechanical_kw: NonNeg = 0
    # What keeps that cooling running when this block fails (2N, distributed):
    # the block a static transfer switch or the pumps' second cord moves it to,
    # or other pumps, on other blocks, that carry the whole flow without these.
    # Neither: it stops with the block (power.ups-block-cooling-stops).
    mechanical_transfer_to: Name | None = None
    mechanical_redundant: Flag = False

    @model_validator(mode="after")
    def _one_way_to_keep_cooling(self) -> UpsBlock:
        if self.mechanical_transfer_to is not None and self.mechanical_redundant:
            raise ValueError("give mechanical_transfer_to or mechanical_redundant, not both")
        if self.mechanical_transfer_to == self.name:
            raise ValueError(f"block {self.name}'s cooling cannot transfer to the block that failed")
        return self


class Ups(Model):
    """The UPS as blocks (Schneider Electric WP 75): N, one system; N+1, modules in
    parallel on one bus (any one may fail); 2N, system plus system; distributed,
    block redundant ("3-make-2"): each rack side on a block, any one block may
    fail and its racks' load moves to the blocks their other side is on;
    catcher, isolated redundant: a reserve block takes a failed block's load."""

    redundancy: Literal["N", "N+1", "2N", "distributed", "catcher"] = "N"
    blocks: Annotated[list[UpsBlock], Field(min_length=1), Items]

    @model_validator(mode="after")
    def _blocks_fit_the_topology(self) -> Ups:
        reserves = sum(b.reserve for b in self.blocks)
        if self.redundancy == "catcher" and (reserves < 1 or reserves == len(self.blocks)):
            raise ValueError("a catcher UPS has reserve blocks (reserve: true) and blocks they back")
        if self.redundancy != "catcher" and reserves:
            raise ValueError(f"reserve blocks are for catcher designs, not {self.redundancy}")
        if self.redundancy == "2N" and len(self.blocks) != 2:
            raise ValueError(f"2N is two systems: give 2 blocks, not {len(self.blocks)} (or: distributed)")
        if self.redundancy in ("N+1", "distributed") and len(self.blocks) < 2:
            raise ValueError(f"{self.redundancy} needs two or more blocks")
        return self

    @property
    def mapped(self) -> bool:
        """Whether each feed says which block it is on: with more than one block,
        but for N+1 (modules on one bus, which every feed draws from)."""
        return len(self.blocks) > 1 and self.redundancy != "N+1"


class GeneratorSet(Model):
    """One standby generator set with its own rating."""

    name: Name
    capacity_kw: Pos  # at the rating the site runs it to


class Generators(Model):
    """Standby generators: they carry the whole site (IT, cooling and losses, the
    design-day demand) while the utility is out. N+1: any one may fail (the
    total less the largest set); 2N: half. Equal sets as `count` and
    `capacity_kw` (each), or each set with its own rating (`sets`)."""

    count: PosInt | None = None
    capacity_kw: Pos | None = None  # each, at the rating the site runs them to
    sets: Annotated[list[GeneratorSet], Field(min_length=1), Items] | None = None
    redundancy: Literal["N", "N+1", "2N"] = "N"

    @property
    def set_count(self) -> int:
        return len(self.sets) if self.sets is not None else self.count or 0

    @property
    def total_kw(self) -> float:
        if self.sets is not None:
            return sum(g.capacity_kw for g in self.sets)
        assert self.count is not None and self.capacity_kw is not None  # the validator says so
        return self.count * self.capacity_kw

    @property
    def largest_kw(self) -> float:
        if self.sets is not None:
            return max(g.capacity_kw for g in self.sets)
        assert self.capacity_kw is not None
        return self.capacity_kw

    @model_validator(mode="after")
    def _enough_sets(self) -> Generators:
        if self.sets is not None:
            if self.count is not None or self.capacity_kw is not None:
                raise ValueError("give count and capacity_kw (equal sets) or sets, not both")
        elif self.count is None or self.capacity_kw is None:
            raise ValueError("give count and capacity_kw (equal sets), or list the sets with capacity_kw")
        if self.redundancy == "N+1" and self.set_count < 2:
            raise ValueError("N+1 needs two or more generators")
        if self.redundancy == "2N" and self.set_count % 2:
            raise ValueError(f"2N is two equal halves: an even count, not {self.set_count}")
        if self.sets is not None:
            if self.redundancy == "2N" and len({g.capacity_kw for g in self.sets}) > 1:
                # Half the total holds only if either half may fail whichever sets it holds.
                raise ValueError("2N is two equal halves: list sets of one rating (or use N+1)")
            names = [g.name for g in self.sets]
            twice = [n for n in names if names.count(n) > 1]
            if twice:
                raise ValueError(f"generator set '{twice[0]}' is listed twice")
        return self


class Panel(Model):
    """What one upstream breaker protects between the UPS and the racks' feeds,
    shared by many feeds: a panelboard or remote power panel (its circuits are
    the feeds), a floor PDU's output, or an overhead busway (its tap-offs are
    the feeds). It is rated as a feed is, by NetBox's formula."""

    name: Name
    voltage: Pos
    amps: Pos
    phase: Phases = 3
    max_utilization: Percent = 80  # as Feed: the NEC 210.20(A) 80 % rule
    power_factor: PowerFactor = 1.0
    ups: Name | None = None  # the facility's UPS block it is fed from (power.ups)

    def lines_for(self, feed_voltage: float) -> tuple[str, ...]:
        """Where a single-phase feed of `feed_voltage` hangs on this three-phase
        panel: from a line (to neutral) where its voltage is nearer V / sqrt 3
        than V (230 V off 400 V, 120 V off 208 V), else from a pair of lines
        (208 V off 208 V). Compared on a log scale: a ratio either way."""
        to_neutral = abs(math.log(feed_voltage * 3**0.5 / self.voltage))
        return LINE_TO_LINE if abs(math.log(feed_voltage / self.voltage)) < to_neutral else LINE_TO_NEUTRAL


class FacilityPower(Model):
    # The UPS capacity peak IT is checked against; with `ups`, its blocks' (not both).
    it_capacity_kw: Pos | None = None
    ups: Ups | None = None
    # Distribution between the UPS and the racks' feeds (Feed.panel names one).
    panels: Annotated[list[Panel], Items] = []
    utility_kw: Pos | None = None
    generators: Generators | None = None
    basis: Literal["max", "typical"] = "max"
    # The IT load the site runs at on average over a year, as a percentage of
    # its peak: the annual PUE, energy and cost are figured at it (ISO/IEC
    # 30134-2: PUE is a ratio of annual energies). Without it, at `basis`.
    average_load_pct: Percent | None = None

    @model_validator(mode="after")
    def _one_capacity(self) -> FacilityPower:
        if self.it_capacity_kw is None and self.ups is None:
            raise ValueError("give the UPS capacity: it_capacity_kw, or ups blocks")
        if self.it_capacity_kw is not None and self.ups is not None:
            raise ValueError("give it_capacity_kw or ups blocks, not both: the blocks give the capacity")
        return self


class CoolingUnit(Model):
    """One unit with its own capacity: of the room's cooling plant (a chiller,
    CRAH or CRAC), of a CDU set, or of the air handlers."""

    name: Name
    capacity_kw: Pos


def _count_or_list(value: Any) -> str:
    return f"{UNION_TAG}list" if isinstance(value, list) else f"{UNION_TAG}count"


# A union told apart by the value's type, so an error names one branch only
# (the tags are dropped from the error's path: checker.source.reader.error_path).
CoolingUnits = Annotated[
    Annotated[int, Strict(), Field(ge=1), Tag(f"{UNION_TAG}count")]
    | Annotated[list[CoolingUnit], Field(min_length=1), Items, Tag(f"{UNION_TAG}list")],
    Discriminator(_count_or_list),
]


class UnitSet(Model):
    """Capacity in units with a redundancy across them: the facility's plant, a
    CDU set, the room's air handlers. `units` is a count of equal units or a
    list of units each with its own capacity; N+1 keeps the total minus the
    largest unit (for equal units, capacity x (units - 1) / units), 2N half."""

    # With every unit running: with a list of units, their sum (and if written
    # as well, it must equal it).
    capacity_kw: Pos | None = None
    units: CoolingUnits = 1
    redundancy: Literal["N", "N+1", "2N"] = "N"

    @model_validator(mode="after")
    def _capacity_given(self) -> UnitSet:
        if isinstance(self.units, int):
            if self.capacity_kw is None:
                raise ValueError("give capacity_kw, or list the units with their capacity_kw")
        elif self.capacity_kw is not None and abs(self.capacity_kw - self.total_kw) > 1e-6:
            raise ValueError(
                f"capacity_kw {self.capacity_kw:g} is not the {self.total_kw:g} kW its units add up to"
            )
        if self.redundancy == "N+1" and self.unit_count < 2:
            raise ValueError("N+1 needs two or more units")
        # 2N keeps half only if either half may fail: two equal halves, as for generators.
        if self.redundancy == "2N" and self.unit_count > 1 and self.unit_count % 2:
            raise ValueError(f"2N is two equal halves: an even count of units, not {self.unit_count}")
        mixed = isinstance(self.units, list) and len({u.capacity_kw for u in self.units}) > 1
        if self.redundancy == "2N" and mixed:
            raise ValueError("2N is two equal halves: list units of one rating (or use N+1)")
        return self

    @property
    def total_kw(self) -> float:
        """Capacity with every unit running."""
        if isinstance(self.units, int):
            assert self.capacity_kw is not None  # the validator says so
            return self.capacity_kw
        return sum(u.capacity_kw for u in self.units)

    @property
    def unit_count(self) -> int:
        return self.units if isinstance(self.units, int) else len(self.units)

    @property
    def largest_kw(self) -> float:
        """The largest unit: what N+1 may lose (equal units: total / units)."""
        if isinstance(self.units, int):
            return self.total_kw / self.units
        return max(u.capacity_kw for u in self.units)


class Cdu(UnitSet):
    """A coolant distribution unit, or a set of CDUs that serve the same racks
    together (`units`: a count of equal ones, or each with its capacity, with
    the redundancy across them): it takes the liquid part of its racks' heat
    to the facility water."""

    name: Name
    racks: Annotated[list[Name], Items] = []  # racks it serves, by name
    rows: Annotated[list[Name], Items] = []  # and/or whole rows (Rack.row)

    @model_validator(mode="after")
    def _serves_something(self) -> Cdu:
        if not self.racks and not self.rows:
            raise ValueError("a CDU serves racks or rows: give `racks`, `rows` or both")
        return self


class RoomAir(UnitSet):
    """The room's air handlers (CRAH / CRAC, fan walls, in-row units, rear doors'
    fans): units that take the air part of the heat (air_heat_kw) to the
    plant; a liquid hall can have plant to spare and too little air."""


class FacilityCooling(UnitSet):
    inlet_c: Annotated[float, Strict(), Field(ge=-10, le=60)] | None = None
    ashrae_class: Literal["A1", "A2", "A3", "A4", "H1"] | None = None
    # Air temperature rise across the servers, for airflow (CFM) figures. Servers
    # typically run 11-14 C (20-25 F); the low end gives the most airflow.
    delta_t_c: Annotated[float, Strict(), Field(gt=0, le=40)] = 11
    # Facility water: its ASHRAE class and, where known, its design supply temperature.
    water_class: Literal["W17", "W27", "W32", "W40", "W45", "W+"] | None = None
    water_supply_c: Annotated[float, Strict(), Field(ge=0, le=80)] | None = None
    # The air handlers, where the hall's air side is sized on its own.
    room_air: RoomAir | None = None


class Facility(Model):
    kind: Literal["Facility"]
    name: Name
    location: str | None = None
    # Site elevation above sea level: the ASHRAE allowable inlet maxima drop with it.
    altitude_m: Annotated[float, Strict(), Field(ge=-500, le=6000)] | None = None
    pue_target: Annotated[float, Strict(), Field(ge=1)] | None = None
    design_pue: Annotated[float, Strict(), Field(ge=1)] | None = None
    pue_model: PueModel | None = None
    power: FacilityPower | None = None
    cooling: FacilityCooling | None = None
    floor_max_kg_per_m2: Pos | None = None
    # Raised-floor panel ratings (CISCA test methods): concentrated (one caster
    # or foot of a standing rack) and rolling (a caster while a rack is moved in).
    floor_concentrated_kn: Pos | None = None
    floor_rolling_kn: Pos | None = None
    cdus: list[Cdu] = []
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
    # On a three-phase feed a count may be given by phase, `{L1: 1, L2: 1}`
    # (line to line on a 208 V feed: `{L1-L2: 1}`); else the feed's PSUs are
    # dealt over its phases as evenly as whole PSUs allow.
    feeds: dict[Name, PsusOnFeed] | None = None
    # The AC input voltage range the PSUs are rated for; checked against what
    # the rack's feeds give them (power.psu-input-voltage).
    input_v: InputVoltage | None = None
    # 1: each PSU is a single-phase load on one line (or line pair) of a
    # three-phase feed; 3: each takes three-phase input and draws evenly from
    # the three lines (a rack-scale system's power shelf: an NVL72 shelf holds
    # 6 PSUs, two a phase).
    phase: Phases = 1

    @model_validator(mode="after")
    def _redundant_below_count(self) -> Psu:
        if self.redundant is not None and self.redundant >= self.count:
            raise ValueError("redundant PSUs must be fewer than the PSU count")
        if self.per_side is not None and 2 * self.per_side > self.count:
            raise ValueError("per_side counts the smaller side: at most half the PSU count")
        if self.phase == 3 and self.feeds and any(isinstance(n, dict) for n in self.feeds.values()):
            raise ValueError("three-phase PSUs (phase: 3) draw from every line: give psu.feeds as counts")
        cabled = self.feed_counts()
        if cabled is not None and sum(cabled.values()) != self.count:
            raise ValueError(f"feeds cable {sum(cabled.values())} PSUs, but count is {self.count}")
        return self

    def feed_counts(self) -> dict[str, int] | None:
        """psu.feeds as PSUs per feed, whatever phases they are given on."""
        if self.feeds is None:
            return None
        return {name: n if isinstance(n, int) else sum(n.values()) for name, n in self.feeds.items()}


def psu_feed_names(psu: Psu | None, order: Sequence[str] | None) -> list[str] | None:
    """The feed (or ATS) each of a server's PSUs is cabled to, PSU 1 first, where
    the inventory says: psu.feeds in the order written (`{A1: 2, B1: 2}`: PSUs
    1-2 on A1, 3-4 on B1), else its rack's psu_order (`order`) dealt round
    (None: not said; the PSUs are spread as evenly as whole PSUs allow)."""
    if psu is None:
        return None
    counts = psu.feed_counts()
    if counts is not None:
        return [name for name, n in counts.items() for _ in range(n)]
    if not order:
        return None
    return [order[i % len(order)] for i in range(psu.count)]


class PowerShelf(Model):
    """One power shelf of a rack-scale system (a server with `trays`): PSU
    `number` of its psu (an NVL72 shelf holds 6 PSUs and is one psu here), as
    the loader reads it off the server's psu and its rack's cabling. Not
    written on its own: an entity `shelf/<facility>/<rack>/<server>/<number>`."""

    number: PosInt
    # Where psu.feeds or the rack's psu_order cable it; None: spread evenly (derived).
    feed: Name | None = None
    rating_w: Pos | None = None
    phase: Literal[1, 3] = 1


class InletRange(Model):
    """The inlet air temperature the equipment is specified for."""

    min: Annotated[float, Strict(), Field(ge=-40, le=80)] | None = None
    max: Annotated[float, Strict(), Field(ge=-40, le=80)] | None = None


class GpuRef(Model):
    model: Name
    count: PosInt


class Cpu(Model):
    model: str | None = None
    # The instruction set: framework builds differ (aarch64 wheels leave some GPU
    # architectures out); GH200 / GB200 hosts are aarch64 (Grace).
    arch: Literal["x86_64", "aarch64"] | None = None
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
    # GPUs in one NVLink domain, where it spans more than one node: a GB200
    # NVL72's NVLink switch trays join its 18 compute trays into one of 72.
    nvlink_domain: PosInt | None = None
    # GPUs one NVLink bridge joins on this server (H200 NVL: 2 or 4).
    nvlink_bridge: Annotated[int, Strict(), Field(ge=2)] | None = None


# Where a framework install comes from: PyPI's official wheels (a plain version
# is the PyPI default build), conda-forge, a container image or a vendor build
# (then it runs on the server's software.cuda / software.rocm).
FrameworkSource = Literal["pypi", "conda-forge", "container", "vendor"]


class FrameworkInstall(Model):
    """A framework written as `{version: "2.9.1", source: conda-forge}`, or as
    its version alone (`"2.9.1+cu126"`: from PyPI)."""

    version: Version
    source: FrameworkSource = "pypi"


def _or_version(model: type[Model], properties: dict[str, Any]) -> Any:
    """`model` written as a mapping, or as its `version` alone (`"2.9.1+cu126"`),
    with a JSON Schema that says both (`properties`: the fields beside `version`)."""

    def mapping(value: Any) -> Any:
        return value if isinstance(value, dict | model) else {"version": value}

    return Annotated[model, BeforeValidator(mapping), WithJsonSchema({"anyOf": [{"type": "string"}, {
        "title": model.__name__,  # the model whose fields these are (checker/load/fielddocs.py)
        "type": "object",
        "properties": {"version": {"type": "string"}, **properties},
        "required": ["version"],
        "additionalProperties": False,
    }]})]


_SOURCE_SCHEMA = {"source": {"enum": list(get_args(FrameworkSource)), "default": "pypi"}}
if TYPE_CHECKING:
    Install = FrameworkInstall
else:
    Install = _or_version(FrameworkInstall, _SOURCE_SCHEMA)


class EngineInstall(Model):
    """An inference engine written as `{version: "0.11.0", source: container}`,
    or as its version alone (`"0.11.0+cu126"`: from PyPI, or its GitHub release)."""

    version: ReleaseVersion
    source: FrameworkSource = "pypi"


if TYPE_CHECKING:
    EngineEntry = EngineInstall
else:
    EngineEntry = _or_version(EngineInstall, _SOURCE_SCHEMA)


# JAX's CUDA plugin, as pip's extra names it: `jax[cuda13]` brings NVIDIA's
# CUDA, cuDNN and NCCL wheels, `jax[cuda13-local]` runs on the host's.
JaxPluginExtra = Literal["cuda12", "cuda13", "cuda12-local", "cuda13-local"]


class JaxInstall(Model):
    """JAX written as `{version: "0.8.0", plugin: cuda13}`, or as its version
    alone (no CUDA plugin: `pip install jax` is the CPU build)."""

    version: ReleaseVersion
    plugin: JaxPluginExtra | None = None


if TYPE_CHECKING:
    JaxEntry = JaxInstall
else:
    JaxEntry = _or_version(JaxInstall, {"plugin": {"enum": list(get_args(JaxPluginExtra))}})


# An image reference as Docker reads it: [registry/]path[:tag][@digest].
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_REGISTRY = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::\d+)?")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")


def image_parts(reference: str) -> tuple[str, str | None, str | None]:
    """(repository, tag, digest) of an image reference, Docker Hub's own names
    without their registry (`docker.io/library/ubuntu` is `ubuntu`); a
    ValueError if it is not one."""
    name, _, digest = reference.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = name[colon + 1 :] if colon > slash else None
    name = name[:colon] if colon > slash else name
    parts = name.split("/")
    first = parts[0]
    registry = first if len(parts) > 1 and ("." in first or ":" in first or first == "localhost") else None
    path = parts[1:] if registry is not None else parts
    if (
        (registry is not None and not _REGISTRY.fullmatch(registry))
        or not path or not all(_COMPONENT.fullmatch(p) for p in path)
        or (tag is not None and not _TAG.fullmatch(tag))
        or ("@" in reference and not _DIGEST.fullmatch(digest))
    ):
        raise ValueError(reference)
    if registry in DOCKER_HUB:
        registry = None
    if registry is None and len(path) == 2 and path[0] == "library":
        path = path[1:]
    repository = "/".join(path) if registry is None else f"{registry}/{'/'.join(path)}"
    return repository, tag, digest or None


def _image(value: str) -> str:
    try:
        image_parts(value)
    except ValueError:
        raise ValueError(
            "an image reference is [registry/]name[:tag][@sha256:digest], lowercase "
            "(e.g. nvcr.io/nvidia/pytorch:26.05-py3)"
        ) from None
    return value


class Container(Model):
    """A container image the server runs, as `{image, cuda, ...}` or its reference
    alone. The tables resolve known images; `cuda`, `cudnn` and `nccl` give (or
    override) what an image brings."""

    image: Annotated[str, AfterValidator(_image)]
    cuda: Version | None = None
    cudnn: Version | None = None
    nccl: Version | None = None


def _container(value: Any) -> Any:
    return value if isinstance(value, dict | Container) else {"image": value}


ContainerEntry = Annotated[
    Container,
    BeforeValidator(_container),
    WithJsonSchema({"anyOf": [{"type": "string"}, {
        "title": "Container",  # the model whose fields these are (checker/load/fielddocs.py)
        "type": "object",
        "properties": {
            "image": {"type": "string"}, **{k: {"type": "string"} for k in ("cuda", "cudnn", "nccl")},
        },
        "required": ["image"],
        "additionalProperties": False,
    }]}),
]


class Software(Model):
    os: str | None = None
    driver: Version | None = None
    cuda: Version | None = None
    rocm: Version | None = None
    # The host's cuDNN and NCCL, where the server declares them.
    cudnn: Version | None = None
    nccl: Version | None = None
    # A version ("2.9.1+cu126": PyPI's wheels) or {version, source}.
    # A factory, not `= {}`: pydantic deep-copies a mutable default for every
    # server (10,000 copies of an empty dict); the schema still shows the default.
    frameworks: dict[Name, Install] = Field(default_factory=dict, json_schema_extra={"default": {}})
    # Container images the server runs: they bring their own CUDA; the host needs the driver.
    containers: Annotated[list[ContainerEntry], Items] = Field(
        default_factory=list, json_schema_extra={"default": []}
    )
    # Inference engines (a version, or {version, source}) and JAX, installed
    # beside the frameworks: each release pins its torch and brings its CUDA.
    vllm: EngineEntry | None = None
    sglang: EngineEntry | None = None
    tensorrt_llm: EngineEntry | None = None
    jax: JaxEntry | None = None

    def engines(self) -> dict[str, EngineInstall]:
        """The inference engines installed, by the engine tables' names."""
        return {name: getattr(self, name) for name in ENGINES if getattr(self, name) is not None}


# The inference engines a software section names: each is a field of Software
# and an engine of rules/knowledge/engines.yaml.
ENGINES: tuple[str, ...] = ("vllm", "sglang", "tensorrt_llm")


class Support(Model):
    vendor: str | None = None
    level: Literal["24x7", "8x5", "nbd", "none"]
    until: Date | None = None


def nodes_of(trays: int | None) -> int:
    """A server's nodes as software sees them: its compute trays, else 1
    (ServerSpec.nodes, for a stage that reads its trays a column at a time)."""
    return trays or 1


class ServerSpec(Model):
    """Hardware fields shared by servers and the server catalog."""

    u_height: Annotated[int, Strict(), Field(ge=1, le=100)] | None = None
    weight_kg: NonNeg | None = None
    power_w: PowerDraw | None = None
    psu: Psu | None = None
    cooling: Literal["air", "liquid"] | None = None
    # Share of the heat that goes to liquid (cold plates: the CDU, facility
    # water); the rest goes to the room air. A liquid-cooled server without it
    # counts as all liquid; hybrid systems put part of their heat on air.
    liquid_fraction: Annotated[float, Strict(), Field(ge=0, le=1)] | None = None
    # The warmest coolant supply the equipment is specified for, against the facility water.
    max_coolant_supply_c: Annotated[float, Strict(), Field(ge=0, le=80)] | None = None
    inlet_c: InletRange | None = None
    gpu: GpuRef | None = None
    cpu: Cpu | None = None
    memory_gb: NonNeg | None = None
    storage: Storage | None = None
    network: Network | None = None
    # A rack-scale system (a GB200 NVL72): `trays` compute trays, each a node
    # that software and workloads see, with the gpu, cpu, memory_gb, storage
    # and network above (all per tray); power_w, weight_kg, psu (its power
    # shelves) and cooling are the whole system's. Without a position and
    # u_height it fills its rack.
    trays: PosInt | None = None
    # The rating of the system's DC busbar (power shelves to trays), in W.
    busbar_w: Pos | None = None

    @model_validator(mode="after")
    def _liquid_needs_liquid(self) -> ServerSpec:
        if self.cooling == "air" and self.liquid_fraction:
            raise ValueError("liquid_fraction above 0 needs cooling: liquid")
        return self

    @property
    def nodes(self) -> int:
        return nodes_of(self.trays)


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
# Bounded far above any model or corpus so derived figures (bytes, FLOPs)
# stay numbers the rules engine can read.
Params = Annotated[float, Strict(), Field(gt=0, le=100_000)]
Tokens = Annotated[int, Strict(), Field(ge=1, le=100_000_000)]
Shape = Annotated[int, Strict(), Field(ge=1, le=1_000_000)]


class ModelShape(Model):
    """What the memory of a model's activations and KV cache depends on."""

    active_params_b: Params | None = None  # a mixture of experts: parameters used per token
    layers: Shape | None = None
    hidden_size: Shape | None = None
    kv_heads: Shape | None = None
    head_dim: Shape | None = None
    # Elements cached per token and layer when attention compresses its keys
    # and values (DeepSeek MLA: a 512-wide latent plus a 64-wide RoPE key);
    # otherwise 2 x kv_heads x head_dim.
    kv_elements: Shape | None = None


_TRAINING_FIELDS = ("mode", "seq_len", "micro_batch")
_SERVING_FIELDS = ("context_len", "concurrency", "kv_precision", "tensor_parallel", "pipeline_parallel")
# The fields a workload takes from its catalog `model` where it gives none.
SHAPE_FIELDS = tuple(ModelShape.model_fields)


class Workload(ModelShape):
    name: Name
    task: Literal["training", "fine-tuning", "inference"]
    params_b: Params
    # mxfp8 / nvfp4: the block-scaled formats of Blackwell data-center GPUs.
    precision: Literal["fp32", "bf16", "fp16", "fp8", "mxfp8", "int8", "int4", "nvfp4"]
    framework: Name | None = None
    dataset_tb: NonNeg | None = None
    tokens_b: Annotated[float, Strict(), Field(gt=0, le=1_000_000)] | None = None
    deadline_days: Pos | None = None
    model: Name | None = None  # a LanguageModels catalog entry: its shape
    # Training and fine-tuning: all parameters (full), or adapters on a frozen
    # bf16 base (lora) or on a 4-bit base (qlora). Default full.
    mode: Literal["full", "lora", "qlora"] | None = None
    seq_len: Tokens | None = None  # training: tokens per sequence
    # Sequences per GPU per step, default 1.
    micro_batch: Annotated[int, Strict(), Field(ge=1, le=65_536)] | None = None
    context_len: Tokens | None = None  # inference: tokens per session (prompt and output)
    concurrency: Annotated[int, Strict(), Field(ge=1, le=1_000_000)] | None = None  # sessions, default 1
    # The KV cache's precision; default 16-bit (fp32 weights: fp32).
    kv_precision: Literal["fp32", "bf16", "fp16", "fp8", "int8"] | None = None
    # Inference: the GPUs one model instance spans, tensor_parallel x
    # pipeline_parallel, where it spans more than one server (multi-node
    # serving); without them an instance is held within one server (or a
    # rack-scale system's NVLink domain).
    tensor_parallel: Annotated[int, Strict(), Field(ge=1, le=4096)] | None = None
    pipeline_parallel: Annotated[int, Strict(), Field(ge=1, le=4096)] | None = None

    @property
    def replica_gpus(self) -> int | None:
        """GPUs of one model instance, where the workload declares its parallelism."""
        if self.tensor_parallel is None and self.pipeline_parallel is None:
            return None
        return (self.tensor_parallel or 1) * (self.pipeline_parallel or 1)

    @model_validator(mode="after")
    def _fields_of_its_task(self) -> Workload:
        training = self.task != "inference"
        theirs = _SERVING_FIELDS if training else _TRAINING_FIELDS
        wrong = [f for f in theirs if getattr(self, f) is not None]
        if wrong:
            article = "a" if training else "an"
            raise ValueError(f"{', '.join(wrong)}: not a field of {article} {self.task} workload")
        if self.active_params_b is not None and self.active_params_b > self.params_b:
            raise ValueError(f"active_params_b {self.active_params_b} is more than params_b {self.params_b}")
        return self


class WorkloadsDoc(Model):
    kind: Literal["Workloads"]
    workloads: list[Workload]


class Waiver(Model):
    # Bounded as names are: every one is printed in the report's waiver table.
    rule: Annotated[str, Field(min_length=1, max_length=200)]
    entity: Annotated[str, Field(min_length=1, max_length=1_000)]  # kind/facility/name: three names
    reason: Annotated[str, Field(min_length=3, max_length=2_000)]
    owner: Annotated[str, Field(min_length=1, max_length=200)]
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
    unverified: Annotated[list[str], Items] = []
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
    # GPUs one NVLink bridge joins (2-way, 4-way), where the source gives them.
    bridge_ways: Annotated[list[Annotated[int, Strict(), Field(ge=2)]], Items] = []
    # The most GPUs one fast link joins (MI300X: an 8-GPU Infinity Fabric mesh).
    link_domain: Annotated[int, Strict(), Field(ge=2)] | None = None
    bf16_tflops: Pos | None = None
    fp16_tflops: Pos | None = None
    fp8_tflops: Pos | None = None  # dense FP8 (Hopper, Ada, Blackwell, MI300)
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
    gpu_options: Annotated[list[Name], Items] = []


# Catalog provenance fields are not server fields: dropped when a server uses a model.
CATALOG_META = frozenset(CatalogEntry.model_fields) | {"gpu_options"}


class LanguageModel(ModelShape, CatalogEntry):
    """A catalog model: its size and shape (rules/knowledge/models.yaml)."""

    params_b: Params


class LanguageModelsDoc(Model):
    kind: Literal["LanguageModels"]
    models: list[LanguageModel]


class GpuModelsDoc(Model):
    kind: Literal["GpuModels"]
    gpus: list[GpuModel]


class ServerModelsDoc(Model):
    kind: Literal["ServerModels"]
    servers: list[ServerModel]
