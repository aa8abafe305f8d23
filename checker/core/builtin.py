"""Checks that are not `when` expressions: input (schema), waiver and knowledge findings.

They carry the same metadata as YAML rules (`RuleMeta`), so `rules list`,
`explain`, the rule reference and SARIF show them too; their behaviour is
tested with fixture inventories. Code that emits one of these findings uses
the id constants below, never a string literal.
"""

from __future__ import annotations

from checker.core.findings import Severity
from checker.core.rulemeta import RuleMeta

SCHEMA_FILE = "schema.file"
SCHEMA_YAML = "schema.yaml"
SCHEMA_ENCODING = "schema.encoding"
SCHEMA_DUPLICATE_KEY = "schema.duplicate-key"
SCHEMA_ALIAS_BOMB = "schema.alias-bomb"
SCHEMA_DOCUMENT = "schema.document"
SCHEMA_UNKNOWN_FIELD = "schema.unknown-field"
SCHEMA_MISSING_FIELD = "schema.missing-field"
SCHEMA_INVALID = "schema.invalid"
SCHEMA_REFERENCE = "schema.reference"
SCHEMA_DUPLICATE_NAME = "schema.duplicate-name"
SCHEMA_FEED_SIDES = "schema.feed-sides"
SCHEMA_LIMIT = "schema.limit"
WAIVER_EXPIRED = "waiver.expired"
WAIVER_UNUSED = "waiver.unused"
WAIVER_EXPIRING = "waiver.expiring"
KNOWLEDGE_OVERRIDE = "knowledge.override"
CONFIG_WEAKENED = "config.weakened"


def _check(
    id_: str, title: str, severity: Severity, rationale: str, remediation: str, category: str = ""
) -> RuleMeta:
    return RuleMeta(id_, title, category or id_.split(".", 1)[0], severity, remediation, rationale)


def _schema(id_: str, title: str, rationale: str, remediation: str) -> RuleMeta:
    return _check(id_, title, "error", rationale, remediation)


BUILTIN_CHECKS: tuple[RuleMeta, ...] = (
    _schema(
        SCHEMA_FILE,
        "Every file and folder below the inventory paths is read",
        "A folder that cannot be read, a symbolic link that is broken or loops, or a FIFO or device "
        "where a YAML file should be would otherwise be skipped, and a plan nobody checked would pass.",
        "Fix the permissions or the link, or move the entry out of the inventory folders.",
    ),
    _schema(
        SCHEMA_YAML,
        "File is valid YAML",
        "A file that does not parse cannot be checked; nothing in it is silently skipped.",
        "Fix the YAML syntax at the reported position.",
    ),
    _schema(
        SCHEMA_ENCODING,
        "File is UTF-8",
        "YAML is read as UTF-8; other bytes would change names and numbers.",
        "Save the file as UTF-8.",
    ),
    _schema(
        SCHEMA_DUPLICATE_KEY,
        "No duplicate keys",
        "YAML parsers silently keep the last of two equal keys: a lost value in a capacity plan "
        "is a real hazard.",
        "Remove one of the two keys.",
    ),
    _schema(
        SCHEMA_ALIAS_BOMB,
        "Aliases do not explode",
        "A few lines of aliases can expand to billions of nodes (billion laughs); such input is refused.",
        "Use fewer nested aliases.",
    ),
    _schema(
        SCHEMA_DOCUMENT,
        "Documents are mappings of a known kind",
        "Each document needs a top-level `kind` so it is validated as what it is.",
        "Add a top-level `kind:`, one of those the message names (`checker schema` describes each).",
    ),
    _schema(
        SCHEMA_UNKNOWN_FIELD,
        "No unknown fields",
        "A misspelt field would otherwise be ignored and its value lost.",
        "Use the suggested field name, or remove the field.",
    ),
    _schema(
        SCHEMA_MISSING_FIELD,
        "Required fields are present",
        "Checks cannot run on values that are not there.",
        "Add the field (or a catalog `model` that provides it).",
    ),
    _schema(
        SCHEMA_INVALID,
        "Values have the right type and range",
        "Negative voltages, percentages over 100 or unquoted versions would skew every figure.",
        "Give a value of the stated type and range.",
    ),
    _schema(
        SCHEMA_REFERENCE,
        "References point at things that exist",
        "A server in a rack that does not exist, or a waiver for an unknown entity, is a plan error.",
        "Fix the name (see the suggestion) or add the referenced entity.",
    ),
    _schema(
        SCHEMA_DUPLICATE_NAME,
        "Names are unique",
        "Facilities, racks within a facility, feeds within a rack and servers must be unique "
        "so every finding names one thing.",
        "Rename one of the two.",
    ),
    _schema(
        SCHEMA_FEED_SIDES,
        "2N racks have feeds on both sides",
        "A 2N rack survives the loss of one side only if it has an A and a B side.",
        "Give every feed of a 2N rack `side: A` or `side: B`, with at least one of each.",
    ),
    _schema(
        SCHEMA_LIMIT,
        "Input stays within what checker reads and lists",
        "A mapping of over 1,000 keys (no inventory needs more than a server's few dozen fields), "
        "nesting over 100 levels deep and thousands of problems in one file come from a generator "
        "gone wrong or a hostile pull request; reading or listing all of them would take gigabytes. "
        "Such a mapping or nesting is refused where it goes over; past the first 1,000 problems of a "
        "file the rest are counted in one finding, not listed.",
        "Fix the problems listed and run again; split a generated mapping into a list.",
    ),
    _check(
        WAIVER_EXPIRED,
        "Waivers are not expired",
        "error",
        "An expired waiver no longer waives; the finding it covered is back.",
        "Fix the finding, or renew the waiver with a new expiry and reason.",
    ),
    _check(
        WAIVER_UNUSED,
        "Waivers match a finding",
        "warning",
        "A waiver that matches nothing is stale and hides nothing; remove it before it hides something new.",
        "Remove the waiver, or fix its rule id or entity.",
    ),
    _check(
        WAIVER_EXPIRING,
        "Waivers expiring within 30 days",
        "warning",
        "A waiver about to expire will fail the build soon.",
        "Plan the fix or renew the waiver.",
    ),
    _check(
        KNOWLEDGE_OVERRIDE,
        "A row of yours that replaces a built-in knowledge row is reported",
        "warning",
        "A team may correct a shipped fact (a driver branch's end of life, what an image brings) with a "
        "row of the same key in its own knowledge documents; every check then uses that row. A shipped "
        "fact changed without a word would be a pass nobody can trace, and a pull request that moves an "
        "end of life or a driver minimum can turn an error into a pass: so each replaced row is a "
        "warning, where CI shows it, naming what the new row changes and both rows' sources "
        "(docs/knowledge.md).",
        "Check the row against its source, then waive this finding (a waiver with an owner, a reason and "
        "an expiry: the override is reviewed again when it ends). Remove the row to use the built-in row "
        "again; if the built-in row is wrong, report it so it is fixed for everyone.",
        category="compatibility",
    ),
    _check(
        CONFIG_WEAKENED,
        "A change does not weaken the checks without a word (checker diff)",
        "warning",
        "`checker diff` audits both trees with the change's own checker.yaml: a pull request that "
        "ignores rules, lowers their severity, raises fail_on, loosens a policy threshold or adds a "
        "checker.yaml of its own nearer the inventories would otherwise pass with nothing said, its "
        "base and head alike quiet. Each weakening against the base's settings is reported, at the line "
        "of checker.yaml that makes it.",
        "Keep the base's setting, or have the change to checker.yaml reviewed by whoever owns the checks "
        "(a CODEOWNERS entry for checker.yaml makes that required).",
    ),
)
