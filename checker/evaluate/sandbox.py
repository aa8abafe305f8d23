"""The sandboxed Jinja environment a rule message is checked and generated in:
every way of making a message large or slow capped (checker.evaluate.message
holds the limits and the helpers the generated code calls)."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping
from types import CodeType
from typing import Any

import jinja2
from jinja2 import nodes, visitor
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

from checker.evaluate.message import (
    _SEQUENCES,
    MAX_INT_BITS,
    MessageError,
    MessageTemplate,
    _check_format,
    _check_printf,
    _concat,
    _limit_length,
    _limit_size,
    _limit_width,
    _literal,
    _loop,
    _range,
)

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

    def generate_code(self, tree_or_text: nodes.Template | str) -> str:
        """A checked message's Python source (MessageTemplate, at its first rendering)."""
        tree = self.parse(tree_or_text) if isinstance(tree_or_text, str) else tree_or_text
        return generate(self, tree)[0]

    def template(self, code: CodeType) -> jinja2.Template:
        return self.template_class.from_code(self, code, self.make_globals(None), None)

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
                return MessageTemplate(lambda: self, source, names, tree=tree)
        code, found = generate(self, tree)
        return MessageTemplate(lambda: self, source, found, code=code)


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


def generate(environment: jinja2.Environment, tree: nodes.Template) -> tuple[str, frozenset[str]]:
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




class MessageUndefined(jinja2.ChainableUndefined):
    """A field the fact lacks renders as 'unknown', never as an empty gap, however
    deep it is read (`{{ support.contract.id }}` when there is no support)."""

    def __str__(self) -> str:
        return "unknown"

    def __round__(self, ndigits: int | None = None) -> MessageUndefined:
        return self  # `{{ load_kw | round(1) }}` of a missing field is still 'unknown'


@functools.cache
def environment() -> MessageEnvironment:
    """The rulebook's environment: messages are user-written templates (sandboxed,
    bounded, plain text out), made when a message is first compiled or rendered."""
    return MessageEnvironment(MessageUndefined)
