"""Rule message templates: bounded in time and memory; see test_hostile for the CLI."""

from __future__ import annotations

import re

import jinja2
import pytest
from jinja2 import meta

from checker.evaluate import sandbox
from checker.evaluate.message import MAX_MESSAGE, MessageError, render_message
from checker.evaluate.rulebook import load_rulebook
from checker.evaluate.sandbox import MessageEnvironment, environment

ENV = MessageEnvironment(jinja2.ChainableUndefined)


def render(source: str, **values: object) -> str:
    return render_message(ENV.compile_message(source), values)


@pytest.mark.parametrize(
    ("source", "values", "text"),
    [
        (
            "rack {{ name }} draws {{ load_kw | round(1) }} kW",
            {"name": "A01", "load_kw": 20.04},
            "rack A01 draws 20.0 kW",
        ),
        ("{{ 'x' * 3 }}{{ [1] * 2 }}", {}, "xxx[1, 1]"),
        ("{{ '%5.1f' % 2.25 }}|{{ '{:>4}'.format(7) }}", {}, "2.2| 7"),
        ("{{ name.center(7, '*') }}", {"name": "ab"}, "***ab**"),
        ("{% for i in range(3) %}{{ i }}{% endfor %}", {}, "012"),
        ("a\n  b\t c", {}, "a b c"),  # one line
        ("{{ missing.deeper.still }}", {}, ""),
    ],
)
def test_ordinary_messages_render(source: str, values: dict[str, object], text: str) -> None:
    assert render(source, **values) == text


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{% for i in range(5000) %}{% endfor %}", "range of 5000 items"),
        (
            "{% for i in range(200) %}{% for j in range(200) %}{% endfor %}{% endfor %}",
            "loops take over 10000 steps",
        ),
        ("{{ 'x' * 10**9 }}", "'*' makes 1000000000 characters"),
        ("{{ 10**9 * 'x' }}", "'*' makes 1000000000 characters"),
        ("{{ '%999999999d' % 1 }}", "% format: width 999999999"),
        ("{{ '%(a)999999999d' % {'a': 1} }}", "% format: width 999999999"),
        ("{{ '{:999999999}'.format(1) }}", "format spec: width 999999999"),
        ("{{ 'a'|center(10**9) }}", "filter center: width 1000000000"),
        ("{{ 'a'|wordwrap(width=10**9) }}", "filter wordwrap: width 1000000000"),
        ("{{ 'a'.ljust(10**9) }}", "str.ljust: width 1000000000"),
        ("{{ 'a\tb'.expandtabs(10**9) }}", "str.expandtabs: width 1000000000"),
        ("{{ 2 ** 100000 }}", "exponent 100000 is over the limit of 64"),
        ("{{ [1, 2]|tojson(999999999) }}", "filter tojson: width 999999999"),
        ("{{ [1, 2]|tojson(indent=999999999) }}", "filter tojson: width 999999999"),
        ("{{ [[[]] * 1000] * 1000 }}", "'*' makes a nested value of over 20000"),
        ("{{ ('x' * 999).encode() * 999999 }}", "'*' makes 998999001 characters"),
        (
            "{% set a = [[1] * 999] %}{{ [a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a] }}",
            "a literal makes a nested value",
        ),
        ("{{ dict.fromkeys(range(1000), 'x' * 999) }}", "fromkeys() makes a nested value"),
        ("{{ [1, 2][5] + 1 }}", "UndefinedError"),
    ],
)
def test_limits(source: str, reason: str) -> None:
    with pytest.raises(MessageError, match=re.escape(reason)):
        render(source)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{% macro m() %}{% endmacro %}", "macro tags are not allowed"),
        ("{% include 'x' %}", "include tags are not allowed"),
        ("{% import 'x' as y %}", "import tags are not allowed"),
        ("{% extends 'x' %}", "extends tags are not allowed"),
        ("{% for i in [1] recursive %}{% endfor %}", "recursive loops are not allowed"),
    ],
)
def test_refused_at_load(source: str, reason: str) -> None:
    with pytest.raises(MessageError, match=reason):
        ENV.compile_message(source)


def test_a_long_message_is_cut_to_one_bounded_line() -> None:
    text = render("{% for i in range(5) %}{{ 'y' * 999 }} {% endfor %}")
    assert len(text) == MAX_MESSAGE
    assert text.endswith("y [cut at 1000 characters]")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{{ name | nosuchfilter }}", "No filter named 'nosuchfilter'"),
        ("{{ name is nosuchtest }}", "No test named 'nosuchtest'"),
        ("{% for loop in [1] %}{% endfor %}", "Can't assign to special loop variable"),
    ],
)
def test_what_jinja_refuses_when_generating_code_is_refused_at_load(source: str, reason: str) -> None:
    with pytest.raises(jinja2.TemplateAssertionError, match=reason):
        ENV.compile_message(source)


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("rack {{ name }} draws {{ load_kw | round(1) }} kW", {"name", "load_kw"}),
        ("{% set x = 1 %}{{ x }}{{ range(3) | list }}{{ [a] * 2 }}", {"a"}),
        ("{% for i in items %}{{ i ~ j }}{% endfor %}{{ i }}", {"items", "j", "i"}),
        ("{{ gpu.model }} {{ dict(a=1) }}", {"gpu"}),
    ],
)
def test_a_template_names_the_values_it_reads_as_jinja_does(source: str, names: set[str]) -> None:
    template = ENV.compile_message(source)
    assert template.names == names == meta.find_undeclared_variables(ENV.parse(source))


def test_a_message_is_compiled_at_its_first_rendering_only() -> None:
    template = ENV.compile_message("{{ a }}")
    assert template._template is None
    assert render_message(template, {"a": 1}) == render_message(template, {"a": 1}) == "1"
    assert template._template is not None


# Templates whose names the nodes alone give (their code is generated at the
# first rendering), and ones that take Jinja's code generator at load.
PLAIN = [
    "rack {{ name }} draws {{ load_kw | round(1) }} kW",
    "{{ a if b else c }}{% if d %}{{ e }}{% elif f %}{{ g.h }}{% else %}{{ i['j'] }}{% endif %}",
    "{{ loop }} {{ range(3) | list }} {{ dict(a=x) }} {{ [a, (b, c), {'k': d}] }} {{ a ~ b }}",
    "{{ x is defined and y is not none }} {{ z | default('n/a') }} {{ -w ** 2 }} {{ v[1:n] }}",
    "{{ '%s' % a }} {{ f(*args, **kwargs) }} {{ 1 < p <= q }} {{ not r or s in t }}",
    "{% raw %}{{ not_a_name }}{% endraw %}{{- trimmed -}}",
]
GENERATED = [
    "{% set x = 1 %}{{ x }}{{ y }}",
    "{% for i in items %}{{ i ~ j }}{% endfor %}{{ i }}",
    "{% with a = b %}{{ a }}{{ c }}{% endwith %}",
    "{% filter upper %}{{ a }}{% endfilter %}",
    "{% set x %}{{ a }}{% endset %}{{ x }}",
    "{% if a %}{{ b | nosuchfilter }}{% endif %}",  # Jinja lets it load, failing when it runs
    "{{ " + "-" * 150 + "a }}",  # deeper than the walk goes
]


def _generated(source: str) -> tuple[str, frozenset[str]]:
    return sandbox.generate(ENV, ENV.parse(source))


@pytest.mark.parametrize("source", PLAIN + GENERATED)
def test_lazily_or_not_a_template_reads_and_generates_what_jinja_generates(source: str) -> None:
    code, names = _generated(source)
    template = ENV.compile_message(source)
    assert template.names == names == meta.find_undeclared_variables(ENV.parse(source))
    assert (template._code is not None) == (source in GENERATED)  # generated at load
    template.generate({})  # generates and compiles the code; renders nothing yet
    assert template._code == code  # the same Python source, whenever it was generated


def test_every_builtin_message_is_generated_at_its_first_rendering_as_jinja_would() -> None:
    rules = load_rulebook().rules
    assert all(r.template._code is None for r in rules)
    for rule in rules:
        code, names = _generated(rule.rule.message)
        assert rule.template.names == names, rule.id
        rule.template.generate({})
        assert rule.template._code == code, rule.id


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("{{ self }}", "'self' is not allowed"),
        ("{{ a.__class__ }}", "attribute '__class__' is not allowed"),
        ("{{ a['_x'] }}", "key '_x' is not allowed"),
        ("{{ 2 ** 99 }}", "exponent 99 is over the limit"),
        ("{% if a %}{% include 'x' %}{% endif %}{{ self }}", "include tags are not allowed"),
        ("{{ self }}{{ a.__class__ }}", "'self' is not allowed"),
        ("{{ a.__class__ }}{{ self }}", "'self' is not allowed"),  # each check in turn, as before
        ("{{ " + "-" * 150 + "a.__x }}", "attribute '__x' is not allowed"),
    ],
)
def test_what_a_plain_template_may_not_reach_is_refused_at_load(source: str, error: str) -> None:
    with pytest.raises(MessageError, match=re.escape(error)):
        environment().compile_message(source)
