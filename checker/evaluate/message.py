"""Rule messages: sandboxed Jinja templates whose cost is bounded.

A rule's `message` comes from a folder anyone can edit. Jinja's sandbox blocks
attribute escapes; the limits here bound time and memory too, so no rule can
hang a run or eat its memory (`range(99999)` nested twice, `'%999999999d' % 1`).
Anything a message does wrong is a MessageError, which the rulebook reports as
that rule's error, with its file and line.

This module holds the limits, the helpers generated code calls and a message
as the rulebook keeps it; checker.evaluate.sandbox, the Jinja environment
that checks a message and generates its code, is imported only when a message
is compiled or first rendered (a rulebook read from the cache, and an audit
that renders no message, never import Jinja).
"""

from __future__ import annotations

import contextvars
import re
import string
from collections.abc import Callable, Iterator, Mapping
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import jinja2

MAX_TEXT = 1000  # characters of any string or items of any list a message builds
# Characters plus items at every level of a nested value: `[[x] * 1000] * 1000` has
# 1000 items at each level and would print as a gigabyte.
MAX_WEIGHT = 20_000
MAX_MESSAGE = 1000  # characters of a rendered message (one line); longer ones are cut
CUT = " [cut at 1000 characters]"
MAX_WIDTH = 200  # a format width, padding or wrap width
MAX_ITERATIONS = 10_000  # loop steps in one rendering, all loops together
MAX_INT_BITS = 4096  # no arithmetic result beyond ~1,200 digits

_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
# Filters whose arguments are sizes: (filter, indices of size arguments counting the value as 0).
_SEQUENCES = (str, bytes, list, tuple)


class MessageError(Exception):
    """A message template that breaks a limit or fails when rendered."""


# Loop steps of the rendering under way. `_loop` is called from the template's
# generated code (see _Bounding), whose only inputs are the environment's
# globals and the fact's values: a counter passed in would have to sit among
# the fact's fields. So it is a context variable, set by render_message for
# exactly one call and reset when that call ends: nothing in it outlives a
# rendering, and renderings in other threads count apart.
_steps: contextvars.ContextVar[list[int]] = contextvars.ContextVar("_steps")


def _limit_length(length: int, what: str) -> None:
    if length > MAX_TEXT:
        raise MessageError(f"{what} makes {length} characters or items (the limit is {MAX_TEXT})")


def _weight(value: Any) -> int:
    """Characters and items of a value at every level, counted up to just past MAX_WEIGHT."""
    total, stack = 0, [value]
    while stack and total <= MAX_WEIGHT:
        item = stack.pop()
        total += len(item) if isinstance(item, (str, bytes, range)) else 1
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack += item
    return total


def _limit_size(value: Any, what: str) -> Any:
    if isinstance(value, (str, bytes, list, tuple, dict)):
        _limit_length(len(value), what)
    if isinstance(value, (list, tuple, dict, set, frozenset)) and _weight(value) > MAX_WEIGHT:
        raise MessageError(f"{what} makes a nested value of over {MAX_WEIGHT} characters and items")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise MessageError(f"{what} makes a number of over {MAX_INT_BITS} bits")
    return value


def _limit_width(value: Any, what: str) -> None:
    if isinstance(value, str):
        _limit_size(value, what)
    elif isinstance(value, (int, float)) and abs(value) > MAX_WIDTH:
        raise MessageError(f"{what}: width {value} is over the limit of {MAX_WIDTH}")


def _check_printf(spec: str) -> None:
    for match in _PRINTF_SPEC.finditer(spec):
        for part in match.groups():
            if part == "*":
                raise MessageError("'%*d' widths from arguments are not allowed in messages")
            if part is not None:
                _limit_width(int(part), "% format")


def _check_format(spec: str) -> None:
    for _, field, fmt, _ in string.Formatter().parse(spec):
        if field is not None and fmt:
            if "{" in fmt:
                raise MessageError("nested fields in a format spec are not allowed in messages")
            for number in re.findall(r"\d+", fmt):
                _limit_width(int(number), "format spec")


def _loop(iterable: Any) -> Iterator[Any]:
    """Every `for` of a message iterates through here: steps are counted per rendering."""
    _limit_size(iterable, "a loop")
    steps = _steps.get()
    for item in iterable:
        steps[0] += 1
        if steps[0] > MAX_ITERATIONS:
            raise MessageError(f"loops take over {MAX_ITERATIONS} steps")
        yield item


def _range(*args: int) -> range:
    rng = range(*args)
    if len(rng) > MAX_TEXT:
        raise MessageError(f"range of {len(rng)} items (the limit is {MAX_TEXT})")
    return rng


def _literal(value: Any) -> Any:
    """Every list, tuple and dict written in a message is measured as it is built."""
    return _limit_size(value, "a literal")


def _concat(*parts: Any) -> str:
    return str(_limit_size("".join(str(p) for p in parts), "'~'"))


class Environment(Protocol):
    """What a message needs of the environment it is compiled in
    (checker.evaluate.sandbox.MessageEnvironment)."""

    def generate_code(self, tree_or_text: Any) -> str: ...

    def template(self, code: CodeType) -> jinja2.Template: ...


class MessageTemplate:
    """A message, checked when the rulebook loads (checker.evaluate.sandbox). Its
    Python source is generated then, or at its first rendering from its tree or
    its text (a rulebook read from the cache), and compiled at its first
    rendering: most rules fire on nothing."""

    __slots__ = ("_code", "_environment", "_template", "_tree", "names", "source")

    def __init__(
        self,
        environment: Callable[[], Environment],
        source: str,
        names: frozenset[str],
        *,
        tree: Any = None,
        code: str | None = None,
    ) -> None:
        self._environment = environment  # made when first needed
        self.source = source  # the message as written
        self.names = names  # the fields it reads
        self._tree = tree  # its checked tree, if parsed
        self._code = code  # its generated Python source, once generated
        self._template: jinja2.Template | None = None

    def generate(self, values: Mapping[str, Any]) -> Iterator[str]:
        if self._template is None:
            env = self._environment()
            if self._code is None:
                self._code = env.generate_code(self._tree if self._tree is not None else self.source)
                self._tree = None
            self._template = env.template(compile(self._code, "<template>", "exec"))
        return self._template.generate(values)


def render_message(template: MessageTemplate, values: Mapping[str, Any]) -> str:
    """One line of at most MAX_MESSAGE characters, or MessageError saying why not.

    A message that is merely long (a long free-text field from the inventory) is
    cut, not an error: the rule is not at fault for its input."""
    token = _steps.set([0])
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(values):
            out.append(chunk)
            size += len(chunk)
            if size > 4 * MAX_MESSAGE:  # whitespace is collapsed below; stop well before memory matters
                break
        text = " ".join("".join(out).split())
    except MessageError:
        raise
    except Exception as exc:  # anything a user's template does wrong is the template's error
        raise MessageError(f"{type(exc).__name__}: {exc}") from None
    finally:
        _steps.reset(token)
    if len(text) > MAX_MESSAGE:
        return text[: MAX_MESSAGE - len(CUT)].rstrip() + CUT
    return text
