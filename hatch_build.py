"""Build step of the wheel: compile durable-rules' C engine into checker.

durable-rules 2.0.28, its last release, calls PyEval_CallObject, which Python
3.13 removed (https://docs.python.org/3.13/whatsnew/3.13.html, "Removed C
APIs"). Installed from PyPI on 3.13 it builds a module that fails at import
(undefined symbol) or, with GCC 14, does not build; pip caches the broken
wheel, and no flag reaches a dependency's build from a plain `pip install` or
a pre-commit hook. So checker carries the release's source
(checker/_vendor/durable/, README.md there) and compiles it here, on every
Python version. On 3.13 and later the call is mapped to what it stood for:
up to 3.12 Include/ceval.h defines PyEval_CallObject(f, args) as
PyEval_CallObjectWithKeywords(f, args, NULL), which calls f with the argument
tuple and no keywords, as PyObject_CallObject(f, args) does.

For an editable install (`pip install -e .`, the Makefile) the module is
copied beside its Python package in the source tree, as `setup.py build_ext
--inplace` would; it is ignored by git.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

VENDOR = Path("checker") / "_vendor"
SOURCES = VENDOR / "durable" / "src"
ENGINE = "checker._vendor.durable_rules_engine"
# Up to 3.12 the headers define the macro themselves; defined again it would
# only warn, so the build there is durable-rules' own.
CALL_OBJECT = [("PyEval_CallObject", "PyObject_CallObject")] if sys.version_info >= (3, 13) else []


def compile_engine(root: Path, build_dir: Path) -> Path:
    """The compiled extension module, built in `build_dir`."""
    from setuptools import Distribution, Extension

    src = root / SOURCES
    engine_sources = [src / "rules" / f"{name}.c" for name in ("json", "rete", "state", "events", "regex")]
    extension = Extension(
        ENGINE,
        sources=[str(p) for p in (src / "rulespy" / "rules.c", *engine_sources)],
        include_dirs=[str(src / "rules")],
        define_macros=[("_GNU_SOURCE", None), *CALL_OBJECT],
        # durable-rules' setup.py builds with -std=c99 (MSVC has no such switch).
        extra_compile_args=[] if sys.platform == "win32" else ["-std=c99"],
    )
    dist = Distribution({"name": "checker-durable-engine", "ext_modules": [extension]})
    command = dist.get_command_obj("build_ext")
    command.build_lib = str(build_dir / "lib")
    command.build_temp = str(build_dir / "temp")
    command.ensure_finalized()
    command.run()
    return Path(command.get_ext_fullpath(ENGINE))


class DurableEngineHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        self._build_dir = Path(tempfile.mkdtemp(prefix="checker-engine-"))
        built = compile_engine(root, self._build_dir)
        target = (VENDOR / built.name).as_posix()
        if version == "editable":
            shutil.copy2(built, root / target)
        else:
            build_data["force_include"][str(built)] = target
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        build_dir = getattr(self, "_build_dir", None)
        if build_dir is not None:
            shutil.rmtree(build_dir, ignore_errors=True)
