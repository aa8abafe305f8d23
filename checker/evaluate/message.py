"""Rule messages: sandboxed Jinja templates whose cost is bounded.

A rule's `message` comes from a folder anyone can edit. Jinja's sandbox blocks
attribute escapes; the limits here bound time and memory too, so no rule can
hang a run or eat its memory (`range(99999)` nested twice, `'%999999999d' % 1`).
Anything a message does wrong is a MessageError, which the rulebook reports as
that rule's error, with its file and line.
"""

from __future__ import annotations

import contextvars
import functools
import io
import re
import string
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jinja2
from jinja2 import nodes, visitor
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

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
_SIZE_ARGS = {"center": (1,), "indent": (1,), "wordwrap": (1,), "batch": (1,), "slice": (1,), "tojson": (1,)}
_SIZE_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_REFUSED_NODES = (
    nodes.Macro,
    nodes.CallBlock,
    nodes.Import,
    nodes.FromImport,
    nodes.Include,
    nodes.Extends,
    nodes.Block,
)
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


def _checked_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    sizes = _SIZE_ARGS.get(name, ())
    skip = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0  # context/environment first

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        values = args[skip:]
        for index in sizes:
            if index < len(values):
                _limit_width(values[index], f"filter {name}")
        for key in ("width", "indent", "linecount", "slices"):
            if key in kwargs:
                _limit_width(kwargs[key], f"filter {name}")
        if name == "format" and values and isinstance(values[0], str):
            _check_printf(values[0])
        return _limit_size(func(*args, **kwargs), f"filter {name}")

    return run


class _Bounding(visitor.NodeTransformer):
    """Rewrites loops and `~` so that both go through the counted helpers."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        if node.recursive:
            raise MessageError("recursive loops are not allowed in messages")
        self.generic_visit(node)
        node.iter = nodes.Call(nodes.Name("_loop", "load"), [node.iter], [], None, None)
        return node

    def visit_List(self, node: nodes.List) -> nodes.Node:
        return self._measured(node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        return self._measured(node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        return self._measured(node) if node.ctx == "load" else node  # not `for k, v in ...`

    def _measured(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.Name("_literal", "load"), [node], [], None, None)

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.Name("_concat", "load"), list(node.nodes), [], None, None)


class MessageEnvironment(SandboxedEnvironment):
    """The sandbox with every way of making a message large or slow capped."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, undefined: type[jinja2.Undefined]) -> None:
        super().__init__(undefined=undefined, autoescape=False, keep_trailing_newline=False)
        # No lipsum, cycler, joiner or namespace: nothing a one-line message needs.
        self.globals = {"range": _range, "dict": dict}
        self.globals.update(_loop=_loop, _concat=_concat, _literal=_literal)  # see _Bounding
        # `random` would make the same audit print different messages run to run.
        filters = {name: f for name, f in self.filters.items() if name != "random"}
        self.filters = {name: _checked_filter(name, f) for name, f in filters.items()}

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > 64:
            raise MessageError(f"exponent {right} is over the limit of 64")
        if operator == "%" and isinstance(left, str):
            _check_printf(left)
        if operator in ("*", "+"):
            for a, b in ((left, right), (right, left)):
                if isinstance(a, _SEQUENCES) and isinstance(b, int) and not isinstance(b, bool):
                    _limit_length(len(a) * max(b, 0), f"'{operator}'")  # before the memory is taken
            ints = isinstance(left, int) and isinstance(right, int)
            if ints and operator == "*" and left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise MessageError(f"'*' makes a number of over {MAX_INT_BITS} bits")
        return _limit_size(super().call_binop(context, operator, left, right), f"'{operator}'")

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        # The sandbox hands out str.format wrapped; the string is on the wrapped method.
        method = getattr(__obj, "__wrapped__", __obj)
        name = getattr(method, "__name__", "")
        owner = getattr(method, "__self__", None)
        if isinstance(owner, str):
            if name in _SIZE_METHODS:
                for value in (*args, *kwargs.values()):
                    _limit_width(value, f"str.{name}")
            if name in ("format", "format_map"):
                _check_format(owner)
        result = super().call(__context, __obj, *args, **kwargs)
        return _limit_size(result, f"{name or 'a call'}()")

    def compile_message(self, source: str) -> MessageTemplate:
        """The template of a message; MessageError or TemplateSyntaxError if it cannot be one.

        Everything a template can do wrong is found here, when the rulebook
        loads. Its code is generated here only when working out the names it
        reads takes Jinja's scope analysis (a loop, a `set`, ...), or when
        something only the code generator checks is there (an unknown filter,
        which Jinja allows in an `if` until it runs): otherwise the names are
        every name it loads, and the code is generated at its first rendering.
        Most rules fire on nothing, and generating 127 messages' code was 60 %
        of loading the rulebook."""
        tree = self.parse(source)
        walked = _walk(tree)
        if walked is None:  # deep: each check walks the tree itself, stopping where Python's stack does
            _check(tree.find_all)
        else:
            _check(lambda kind: (node for node in walked if isinstance(node, kind)))
            names = _plain_names(self, walked)
            if names is not None:
                return MessageTemplate(self, tree, names)
        code, found = _generate(self, tree)
        return MessageTemplate(self, code, found)


# The nodes of a template whose names need no scope analysis: output, `if` and
# expressions. With none of the others (a loop, `set`, `with`, a filter block:
# each binds names), every name a template loads is looked up in its context,
# as Jinja's code generator resolves it (jinja2.idtracking: a name loaded and
# never stored resolves in the root frame; an `if` branch shares its frame).
_PLAIN_NODES = (nodes.Output, nodes.If, nodes.Expr, nodes.Helper)
# Nesting depth up to which a template is walked without recursion and its
# code generated later: Jinja's generator takes about four Python frames a
# level, so this stays far from the recursion limit (1000); anything deeper
# runs the recursive steps at load, which report it as nested too deeply.
_SHALLOW = 100


def _walk(tree: nodes.Template) -> list[nodes.Node] | None:
    """Every node below the root in the order `find_all` yields them (depth
    first, parents before children), or None if nested deeper than _SHALLOW."""
    out: list[nodes.Node] = []
    stack = [(child, 1) for child in reversed(list(tree.iter_child_nodes()))]
    while stack:
        node, depth = stack.pop()
        if depth > _SHALLOW:
            return None
        out.append(node)
        stack += [(child, depth + 1) for child in reversed(list(node.iter_child_nodes()))]
    return out


def _plain_names(environment: jinja2.Environment, walked: list[nodes.Node]) -> frozenset[str] | None:
    """The names the template reads from its context, if the nodes alone say
    (see _PLAIN_NODES) and every filter and test exists; else None."""
    names: set[str] = set()
    for node in walked:
        if not isinstance(node, _PLAIN_NODES):
            return None
        if isinstance(node, nodes.Name):
            if node.ctx != "load":
                return None
            if node.name not in environment.globals:
                names.add(node.name)
        elif isinstance(node, (nodes.Filter, nodes.Test)) and node.name not in _known(environment, node):
            return None
    return frozenset(names)


def _known(environment: jinja2.Environment, node: nodes.Filter | nodes.Test) -> Mapping[str, Any]:
    return environment.filters if isinstance(node, nodes.Filter) else environment.tests


# The nodes of a template of a type (or tuple of types), in order, as Node.find_all gives them.
Find = Callable[[Any], Iterator[Any]]


def _check(find: Find) -> None:
    for node in find(_REFUSED_NODES):
        raise MessageError(f"{type(node).__name__.lower()} tags are not allowed in messages")
    _check_reach(find)


def _generate(environment: jinja2.Environment, tree: nodes.Template) -> tuple[str, frozenset[str]]:
    """The template's Python source, its loops and `~` counted (_Bounding), and the
    names it reads; TemplateAssertionError for what Jinja's generator refuses."""
    bounded = _Bounding().visit(tree)
    assert isinstance(bounded, nodes.Template)
    code = io.StringIO()
    generator = _Generator(environment, code)
    generator.visit(bounded)
    return code.getvalue(), frozenset(generator.names)


def _check_reach(find: Find) -> None:
    """Refused at load, not when a finding renders: `self` (the template itself),
    an attribute or key starting with `_` (`__globals__`, `__class__`: the
    sandbox stops them late, or leaves them as an empty string), and a power
    whose exponent is a constant over the limit (`2 ** 10**7`). Each check
    reports the first it finds."""
    for name in find(nodes.Name):
        if name.name == "self":
            raise MessageError("'self' is not allowed in messages")
    for getattr_ in find(nodes.Getattr):
        if getattr_.attr.startswith("_"):
            raise MessageError(f"attribute '{getattr_.attr}' is not allowed in messages")
    for getitem in find(nodes.Getitem):
        key = getitem.arg
        if isinstance(key, nodes.Const) and isinstance(key.value, str) and key.value.startswith("_"):
            raise MessageError(f"key '{key.value}' is not allowed in messages")
    for power in find(nodes.Pow):
        exponent = power.right
        if isinstance(exponent, nodes.Pow):
            raise MessageError("an exponent that is itself a power is not allowed")
        value = exponent.value if isinstance(exponent, nodes.Const) else None
        if isinstance(value, (int, float)) and abs(value) > MAX_EXPONENT:
            raise MessageError(f"exponent {value} is over the limit of {MAX_EXPONENT}")


MAX_EXPONENT = 64


class _Generator(CodeGenerator):
    """Jinja's code generator, also recording the names the template reads from
    its context (as jinja2.meta.find_undeclared_variables does, with a second
    generator pass of its own)."""

    def __init__(self, environment: jinja2.Environment, stream: io.StringIO) -> None:
        super().__init__(environment, None, None, stream, optimized=environment.optimized)
        self.names: set[str] = set()

    def enter_frame(self, frame: Frame) -> None:
        super().enter_frame(frame)
        for action, param in frame.symbols.loads.values():
            if action == "resolve" and param not in self.environment.globals:
                self.names.add(param)


class MessageTemplate:
    """A message, checked when the rulebook loads; its Python source generated
    then or at its first rendering (see compile_message), and compiled at its
    first rendering: most rules fire on nothing."""

    __slots__ = ("_code", "_environment", "_template", "names")

    def __init__(
        self, environment: jinja2.Environment, code: str | nodes.Template, names: frozenset[str]
    ) -> None:
        self._environment = environment
        self._code = code  # the generated source, or the checked tree to generate it from
        self._template: jinja2.Template | None = None
        self.names = names  # the fields it reads

    def generate(self, values: Mapping[str, Any]) -> Iterator[str]:
        if self._template is None:
            env = self._environment
            if not isinstance(self._code, str):
                self._code = _generate(env, self._code)[0]
            code = compile(self._code, "<template>", "exec")
            self._template = env.template_class.from_code(env, code, env.make_globals(None), None)
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
