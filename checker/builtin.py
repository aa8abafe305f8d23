"""Checks that are not `when` expressions: input (schema) and waiver findings.

They have the same metadata as YAML rules, so `rules list` and `explain`
show them too; their behaviour is tested with fixture inventories.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.findings import Severity


@dataclass(frozen=True, slots=True)
class BuiltinCheck:
    id: str
    title: str
    category: str
    severity: Severity
    rationale: str
    remediation: str


def _schema(id_: str, title: str, rationale: str, remediation: str) -> BuiltinCheck:
    return BuiltinCheck(f"schema.{id_}", title, "schema", "error", rationale, remediation)


BUILTIN_CHECKS: tuple[BuiltinCheck, ...] = (
    _schema(
        "file",
        "Every file and folder below the inventory paths is read",
        "A folder that cannot be read, a symbolic link that is broken or loops, or a FIFO or device "
        "where a YAML file should be would otherwise be skipped, and a plan nobody checked would pass.",
        "Fix the permissions or the link, or move the entry out of the inventory folders.",
    ),
    _schema(
        "yaml",
        "File is valid YAML",
        "A file that does not parse cannot be checked; nothing in it is silently skipped.",
        "Fix the YAML syntax at the reported position.",
    ),
    _schema(
        "encoding",
        "File is UTF-8",
        "YAML is read as UTF-8; other bytes would change names and numbers.",
        "Save the file as UTF-8.",
    ),
    _schema(
        "duplicate-key",
        "No duplicate keys",
        "YAML parsers silently keep the last of two equal keys: a lost value in a capacity plan "
        "is a real hazard.",
        "Remove one of the two keys.",
    ),
    _schema(
        "alias-bomb",
        "Aliases do not explode",
        "A few lines of aliases can expand to billions of nodes (billion laughs); such input is refused.",
        "Use fewer nested aliases.",
    ),
    _schema(
        "document",
        "Documents are mappings of a known kind",
        "Each document needs a top-level `kind` so it is validated as what it is.",
        "Add `kind:` (Facility, Servers, Workloads, Waivers, GpuModels, ServerModels).",
    ),
    _schema(
        "unknown-field",
        "No unknown fields",
        "A misspelt field would otherwise be ignored and its value lost.",
        "Use the suggested field name, or remove the field.",
    ),
    _schema(
        "missing-field",
        "Required fields are present",
        "Checks cannot run on values that are not there.",
        "Add the field (or a catalog `model` that provides it).",
    ),
    _schema(
        "invalid",
        "Values have the right type and range",
        "Negative voltages, percentages over 100 or unquoted versions would skew every figure.",
        "Give a value of the stated type and range.",
    ),
    _schema(
        "reference",
        "References point at things that exist",
        "A server in a rack that does not exist, or a waiver for an unknown entity, is a plan error.",
        "Fix the name (see the suggestion) or add the referenced entity.",
    ),
    _schema(
        "duplicate-name",
        "Names are unique",
        "Facilities, racks within a facility, feeds within a rack and servers must be unique "
        "so every finding names one thing.",
        "Rename one of the two.",
    ),
    _schema(
        "feed-sides",
        "2N racks have feeds on both sides",
        "A 2N rack survives the loss of one side only if it has an A and a B side.",
        "Give every feed of a 2N rack `side: A` or `side: B`, with at least one of each.",
    ),
    BuiltinCheck(
        "waiver.expired",
        "Waivers are not expired",
        "waiver",
        "error",
        "An expired waiver no longer waives; the finding it covered is back.",
        "Fix the finding, or renew the waiver with a new expiry and reason.",
    ),
    BuiltinCheck(
        "waiver.unused",
        "Waivers match a finding",
        "waiver",
        "warning",
        "A waiver that matches nothing is stale and hides nothing; remove it before it hides something new.",
        "Remove the waiver, or fix its rule id or entity.",
    ),
    BuiltinCheck(
        "waiver.expiring",
        "Waivers expiring within 30 days",
        "waiver",
        "info",
        "A waiver about to expire will fail the build soon.",
        "Plan the fix or renew the waiver.",
    ),
)


def builtin_check(check_id: str) -> BuiltinCheck | None:
    return next((c for c in BUILTIN_CHECKS if c.id == check_id), None)
