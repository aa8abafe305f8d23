"""The layout is the pipeline: each package imports only from the stages below
it (and itself), and no modules import each other in a loop.

Imports are read from the code (every `import`, at any depth, including those
inside functions and under TYPE_CHECKING), not from what a run happens to load.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "checker"

# Bottom to top. A module's layer is that of its first package below `checker`
# (a top-level module is a command). `checker/__init__.py` holds only the
# version and belongs to the vocabulary. Below it, `_vendor`: third-party code
# checker compiles and ships (durable-rules), which imports nothing of checker's.
LAYERS: tuple[str, ...] = (
    "_vendor", "core", "source", "load", "derive", "evaluate", "decide", "render", "commands",
)
# Packages of commands: an importer (checker/importers/, one module per source) is a
# command, and may use any stage below it.
COMMAND_PACKAGES: tuple[str, ...] = ("importers",)


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    if parts == ["checker"]:
        return LAYERS.index("core")
    first = parts[1]
    return LAYERS.index(first) if first in LAYERS else LAYERS.index("commands")


def _imports(text: str, module: str, is_package: bool = False) -> set[str]:
    """Modules of checker that the code of `module` imports (a `from pkg import
    name` counts as the submodule `pkg.name` where that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "checker")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "checker":
                continue
            found.add(target)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists() or (
                    PACKAGE.parent / sub.replace(".", "/") / "__init__.py"
                ).exists():
                    found.add(sub)
    found.discard(module)
    return found


def _graph() -> dict[str, set[str]]:
    return {
        _module(p): _imports(p.read_text(encoding="utf-8"), _module(p), p.name == "__init__.py")
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def test_layers_are_known() -> None:
    tops = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert tops == (set(LAYERS) - {"commands"}) | set(COMMAND_PACKAGES)


def test_no_upward_import() -> None:
    upward = [
        f"{mod} ({LAYERS[_layer(mod)]}) imports {dep} ({LAYERS[_layer(dep)]})"
        for mod, deps in _graph().items()
        for dep in sorted(deps)
        if _layer(dep) > _layer(mod)
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_only_the_source_package_reads_yaml() -> None:
    """One reader: every YAML file (inventories, checker.yaml, knowledge tables,
    rule files) is parsed in checker/source, whose errors are located there."""
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "source":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if "yaml" in names or (module or "").split(".")[0] == "yaml":
                readers.append(_module(path))
    assert readers == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from checker.load.models import Server\n", {"checker.load.models"}),
        ("from checker.core import findings\n", {"checker.core", "checker.core.findings"}),
        ("def f():\n    import checker.render.text\n", {"checker.render.text"}),
        ("from . import parse\n", {"checker.source", "checker.source.parse"}),
        ("import os\nfrom yaml import nodes\n", set()),
    ],
)
def test_imports_are_read_at_any_depth(source: str, expected: set[str]) -> None:
    assert _imports(source, "checker.source.fastpath") == expected
