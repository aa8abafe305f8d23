"""Inference engines and JAX's CUDA plugins, straight from the knowledge tables,
through the whole pipeline (tests/rollout.py): each case is one server, and the
expected value is the exact set of `compatibility.*` rules that fire on it."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from checker.derive import software
from checker.derive.knowledge import builtin, same_release
from checker.load import models as m
from tests.derive.test_software import NEWEST_DRIVER, Case, _c, _step
from tests.rollout import audit, rules_by_entity

KB = builtin()
R580 = "580.95.05"
R570 = "570.133.20"
TORCH = KB.frameworks.get("pytorch")
assert TORCH is not None


def _below(floor: str) -> str:
    """A driver just below a floor ("580" is the whole branch: 579.99)."""
    return _step(floor, -1) if "." in floor else f"{int(floor) - 1}.99"


def _pinned_torch(torch: str) -> str:
    """The torch a server declares to match a pin: the release's PyPI default build."""
    row = TORCH.release(torch)  # type: ignore[union-attr]
    # Without a known PyPI default, the release's first listed build.
    default = (row.pypi_default or next(iter(row.cuda), None)) if row is not None else None
    if default is None:
        return torch
    line = Version(default)
    return f"{torch}+cu{line.major}{line.minor}"


# ---------------------------------------------------------------- every engine row
def _engine_cases() -> list[Case]:
    cases = []
    for engine in KB.engines.engines:
        for row in engine.releases:
            sw: dict[str, Any] = {"driver": NEWEST_DRIVER, engine.name: row.release}
            cuda = row.cuda
            if row.torch is not None:
                declared = _pinned_torch(row.torch)
                cases.append(
                    Case(
                        f"{engine.name}{row.release}",
                        "h100-sxm-80gb",
                        {**sw, "frameworks": {"pytorch": declared}},
                        frozenset(),
                    )
                )
                # Another torch release: pip replaces it, or the kernels do not load.
                other = _pinned_torch(_step(row.torch, 1)).replace(_step(row.torch, 1), _step(row.torch, 1))
                other = other if "+" in other else declared.replace(row.torch, _step(row.torch, 1), 1)
                if cuda is None:
                    cuda = TORCH.release(row.torch).pypi_default  # type: ignore[union-attr]
                # pip replaces a torch that is not the pin: its build says nothing of the CUDA run.
                mismatch = _c("engine-torch-mismatch", *(() if cuda else ("engine-cuda-unknown",)))
                cases.append(
                    Case(
                        f"{engine.name}{row.release}-torch{other}",
                        "h100-sxm-80gb",
                        {**sw, "frameworks": {"pytorch": other}},
                        mismatch,
                    )
                )
            if cuda is None:
                cases.append(
                    Case(f"{engine.name}{row.release}-nocuda", "h100-sxm-80gb", sw, _c("engine-cuda-unknown"))
                )
                continue
            cuda_row = KB.cuda.row(cuda)
            assert cuda_row is not None, (engine.name, row.release, cuda)
            # Just below the floor of the CUDA it runs: it does not start.
            below = _below(cuda_row.floor)
            cases.append(
                Case(
                    f"{engine.name}{row.release}-driver{below}",
                    "h100-sxm-80gb",
                    {**sw, "driver": below},
                    _c("engine-driver-below-floor"),
                )
            )
    return cases


ENGINES = [
    # vLLM 0.11.0 is built with CUDA 12.8 (570.26); its +cu126 build runs on 12.6's 560.28.03.
    Case(
        "vllm0.11.0-driver560",
        "h100-sxm-80gb",
        {"driver": "560.28.03", "vllm": "0.11.0"},
        _c("engine-driver-minor-version"),
    ),
    Case(
        "vllm0.11.0+cu126-driver560",
        "h100-sxm-80gb",
        {"driver": "560.28.03", "vllm": "0.11.0+cu126"},
        frozenset(),
    ),
    # Releases are exact: 0.11.1 pins torch 2.9.0, 0.11.0 torch 2.8.0.
    Case(
        "vllm0.11.1-torch2.8",
        "h100-sxm-80gb",
        {"driver": R580, "vllm": "0.11.1", "frameworks": {"pytorch": "2.8.0+cu128"}},
        _c("engine-torch-mismatch"),
    ),
    Case(
        "vllm0.11.3-unknown",
        "h100-sxm-80gb",
        {"driver": R580, "vllm": "0.11.3"},
        _c("engine-release-unknown"),
    ),
    # vLLM 0.20 and later are built with CUDA 13.0, which dropped Volta.
    Case("vllm0.20.0-v100", "v100-sxm2-32gb", {"driver": R580, "vllm": "0.20.0"}, _c("engine-cuda-dropped")),
    Case("vllm0.19.1-v100", "v100-sxm2-32gb", {"driver": R580, "vllm": "0.19.1"}, frozenset()),
    Case("vllm-on-amd", "mi300x", {"rocm": "7.2.1", "vllm": "0.11.0"}, _c("engine-vendor")),
    Case(
        "vllm-container-on-amd",
        "mi300x",
        {"rocm": "7.2.1", "vllm": {"version": "0.11.0", "source": "container"}},
        frozenset(),
    ),
    # SGLang 0.4.2 pins no torch: the declared torch's build is what it runs.
    Case(
        "sglang0.4.2-torch-cu124",
        "h100-sxm-80gb",
        {"driver": R580, "sglang": "0.4.2", "frameworks": {"pytorch": "2.5.1+cu124"}},
        frozenset(),
    ),
    # From a container image, CUDA 13 runs on R570 through forward compatibility on a data-center GPU.
    Case(
        "vllm0.33.0-container-r570",
        "h100-sxm-80gb",
        {"driver": R570, "vllm": {"version": "0.33.0", "source": "container"}},
        frozenset(),
    ),
    Case(
        "vllm0.33.0-wheel-r570",
        "h100-sxm-80gb",
        {"driver": R570, "vllm": "0.33.0"},
        _c("engine-driver-below-floor"),
    ),
    Case(
        "vllm0.33.0-container-rtx-r570",
        "rtx-6000-ada",
        {"driver": R570, "vllm": {"version": "0.33.0", "source": "container"}},
        _c("engine-driver-below-floor"),
    ),
    Case(
        "trtllm1.2.0-r570",
        "h100-sxm-80gb",
        {"driver": R570, "tensorrt_llm": "1.2.0"},
        _c("engine-driver-below-floor"),
    ),
]


# ---------------------------------------------------------------- JAX
def _jax_cases() -> list[Case]:
    cases = []
    for release in KB.jax.releases:
        for plugin in ("cuda12", "cuda13"):
            row = KB.jax.plugin(plugin, release.release)
            sw = {"driver": NEWEST_DRIVER, "jax": {"version": release.release, "plugin": plugin}}
            name = f"jax{release.release}-{plugin}"
            if row is None:
                cases.append(Case(name, "h100-sxm-80gb", sw, _c("jax-plugin-missing")))
                continue
            cases.append(Case(name, "h100-sxm-80gb", sw, frozenset()))
            below = _below(KB.cuda.row(row.cuda).floor)  # type: ignore[union-attr]
            cases.append(
                Case(
                    f"{name}-driver{below}",
                    "h100-sxm-80gb",
                    {**sw, "driver": below},
                    _c("jax-driver-below-floor"),
                )
            )
            # A -local plugin: the CUDA, cuDNN and NCCL of the server, at and below the plugin's minimums.
            cuda = f"{row.cuda}.0" if Version(row.cuda).major == 12 else "13.0.2"
            local = {
                "driver": NEWEST_DRIVER,
                "cuda": cuda,
                "cudnn": row.cudnn,
                "nccl": row.nccl,
                "jax": {"version": release.release, "plugin": f"{plugin}-local"},
            }
            cases.append(
                Case(
                    f"{name}-local",
                    "h100-sxm-80gb",
                    local,
                    frozenset(),
                    {"gpu": {"model": "h100-sxm-80gb", "count": 8}},
                )
            )
            cases.append(
                Case(
                    f"{name}-local-cudnn-old",
                    "h100-sxm-80gb",
                    {**local, "cudnn": _step(row.cudnn, -1)},
                    _c("jax-local-cudnn"),
                )
            )
            cases.append(
                Case(
                    f"{name}-local-cudnn-next-major",
                    "h100-sxm-80gb",
                    {**local, "cudnn": row.cudnn_below},
                    _c("jax-local-cudnn"),
                )
            )
            cases.append(
                Case(
                    f"{name}-local-nccl-old",
                    "h100-sxm-80gb",
                    {**local, "nccl": _step(row.nccl or "", -1)},
                    _c("jax-local-nccl"),
                    {"gpu": {"model": "h100-sxm-80gb", "count": 8}},
                )
            )
    return cases


CUDA12_CUDNN9_IMAGE = "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
JAX = [
    Case("jax-plain", "h100-sxm-80gb", {"driver": R580, "jax": "0.8.0"}, _c("jax-plugin-undeclared")),
    Case(
        "jax0.13.0-unknown",
        "h100-sxm-80gb",
        {"driver": R580, "jax": {"version": "0.13.0", "plugin": "cuda13"}},
        _c("jax-release-unknown"),
    ),
    Case(
        "jax-cuda13-v100",
        "v100-sxm2-32gb",
        {"driver": R580, "jax": {"version": "0.8.0", "plugin": "cuda13"}},
        _c("jax-cuda-dropped"),
    ),
    Case(
        "jax-cuda12-v100",
        "v100-sxm2-32gb",
        {"driver": R580, "jax": {"version": "0.8.0", "plugin": "cuda12"}},
        frozenset(),
    ),
    Case(
        "jax-on-amd",
        "mi300x",
        {"rocm": "7.2.1", "jax": {"version": "0.8.0", "plugin": "cuda13"}},
        _c("jax-vendor"),
    ),
    Case(
        "jax-cuda13-local-on-cuda12",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "cuda": "12.9",
            "cudnn": "9.13.0",
            "jax": {"version": "0.8.0", "plugin": "cuda13-local"},
        },
        _c("jax-local-cuda"),
    ),
    Case(
        "jax-cuda12-local-cuda12.0",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "cuda": "12.0",
            "cudnn": "9.8",
            "jax": {"version": "0.8.0", "plugin": "cuda12-local"},
        },
        _c("jax-local-cuda"),
    ),
    Case(
        "jax-local-undeclared",
        "h100-sxm-80gb",
        {"driver": R580, "jax": {"version": "0.8.0", "plugin": "cuda12-local"}},
        _c("jax-local-undeclared"),
    ),
    # One image: its CUDA and cuDNN are what the plugin finds. A tag's `cudnn` alone
    # names no version; a cuDNN known only to its major cannot be ordered against 9.8.
    Case(
        "jax-local-image-cudnn",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "containers": [CUDA12_CUDNN9_IMAGE],
            "jax": {"version": "0.8.0", "plugin": "cuda12-local"},
        },
        _c("jax-local-undeclared"),
    ),
    Case(
        "jax-local-image-cudnn9",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "containers": [{"image": CUDA12_CUDNN9_IMAGE, "cudnn": "9"}],
            "jax": {"version": "0.8.0", "plugin": "cuda12-local"},
        },
        _c("jax-local-cudnn-major-only"),
    ),
    Case(
        "jax-local-image-cudnn8",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "containers": ["nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"],
            "jax": {"version": "0.8.0", "plugin": "cuda12-local"},
        },
        _c("jax-local-cudnn"),
    ),
    Case(
        "jax-local-image-declared",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "containers": [{"image": CUDA12_CUDNN9_IMAGE, "cudnn": "9.10.2"}],
            "jax": {"version": "0.8.0", "plugin": "cuda12-local"},
        },
        frozenset(),
    ),
    # NCCL matters only to multi-GPU work.
    Case(
        "jax-local-nccl-one-gpu",
        "h100-sxm-80gb",
        {
            "driver": R580,
            "cuda": "13.0.2",
            "cudnn": "9.13.0",
            "nccl": "2.18.1",
            "jax": {"version": "0.8.0", "plugin": "cuda13-local"},
        },
        frozenset(),
    ),
]

# The December 2026 stack, with the engines and JAX of the end of 2026: no finding.
DEC_2026 = {
    "driver": R580,
    "cuda": "13.0.2",
    "frameworks": {"pytorch": "2.13.0+cu130"},
    "vllm": "0.32.0",
    "sglang": "0.5.21",
    "jax": {"version": "0.12.0.1", "plugin": "cuda13"},
}
CURRENT = [
    Case("dec2026-engines-h100", "h100-sxm-80gb", DEC_2026, frozenset()),
    Case("dec2026-engines-b300", "b300", DEC_2026, frozenset()),
    Case(
        "dec2026-engines-b200-local",
        "b200",
        {
            **DEC_2026,
            "cudnn": "9.13.0",
            "nccl": "2.28.3",
            "jax": {"version": "0.12.0.1", "plugin": "cuda13-local"},
        },
        frozenset(),
        {"gpu": {"model": "b200", "count": 8}},
    ),
]

CASES = _engine_cases() + ENGINES + _jax_cases() + JAX + CURRENT


@pytest.fixture(scope="module")
def fired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    result = audit(tmp_path_factory.mktemp("engines"), [c.server() for c in CASES])
    return rules_by_entity(result, ["compatibility"])


def test_case_ids_are_unique() -> None:
    names = [c.server()["name"] for c in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_engine_and_jax_rules(fired: dict[str, set[str]], case: Case) -> None:
    assert fired.get(f"server/{case.server()['name']}", set()) == case.expected


# ---------------------------------------------------------------- the figures themselves
def test_an_engine_row_is_its_exact_release() -> None:
    vllm = KB.engines.get("vllm")
    assert vllm is not None
    assert (vllm.release("0.11.0").torch, vllm.release("0.11.1").torch) == ("2.8.0", "2.9.0")  # type: ignore[union-attr]
    assert vllm.release("0.11.0+cu126") is vllm.release("0.11.0")
    assert vllm.release("0.11.3") is None
    assert KB.engines.get("TensorRT-LLM") is KB.engines.get("tensorrt_llm")


def test_same_release_ignores_build_tags() -> None:
    assert same_release("2.8", "2.8.0+cu128")
    assert not same_release("2.8.0", "2.8.1")
    assert not same_release("2.8.0", None)


@pytest.mark.parametrize(
    ("install", "torch", "expected"),
    [
        ("0.11.0", None, ("12.8", "engine wheel")),
        ("0.11.0+cu126", None, ("12.6", "variant")),
        ("0.7.3", None, ("12.4", "pinned torch's PyPI default")),  # torch 2.5.1's default build
        ("0.7.3", "2.5.1+cu121", ("12.1", "declared torch")),
        (
            "0.7.3",
            "2.6.0+cu126",
            ("12.4", "pinned torch's PyPI default"),
        ),  # pip replaces a torch that is not the pin
    ],
)
def test_the_cuda_an_engine_runs(install: str, torch: str | None, expected: tuple[str, str]) -> None:
    sw = m.Software.model_validate({"driver": R580, "frameworks": {"pytorch": torch} if torch else {}})
    values = software.engine_values("vllm", m.EngineInstall(version=install), sw, None, KB)
    assert (values["cuda"], values["cuda_from"]) == expected


def test_every_engine_has_a_software_field() -> None:
    assert {e.name for e in KB.engines.engines} == set(m.ENGINES)


def test_jax_plugin_rows_cover_their_releases() -> None:
    assert KB.jax.plugin("cuda12", "0.5.3").cudnn == "9.1"  # type: ignore[union-attr]
    assert KB.jax.plugin("cuda12", "0.6.0").cudnn == "9.8"  # type: ignore[union-attr]
    assert KB.jax.plugin("cuda12", "0.11.2").cudnn == "9.10.2.21"  # type: ignore[union-attr]
    assert KB.jax.plugin("cuda13", "0.7.1") is None
    assert KB.jax.plugin("cuda13", "0.7.2").nccl == "2.27.7"  # type: ignore[union-attr]
