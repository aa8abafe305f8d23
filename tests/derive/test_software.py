"""Compatibility rules, straight from the knowledge tables, through the whole pipeline.

Every case is one server in one generated rollout (tests/rollout.py); the
expected value is the exact set of `compatibility.*` rules that fire on it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from checker.derive import software
from checker.derive.capacity import compute
from checker.derive.facts import Context, build_all
from checker.derive.knowledge import builtin, release_line
from checker.load import models as m
from checker.load.build import load
from tests.rollout import audit, rules_by_entity

KB = builtin()
# The newest full-feature driver the tables know: every CUDA build runs on it.
NEWEST_DRIVER = max((r.driver for r in KB.cuda.releases), key=Version)


@dataclass(frozen=True)
class Case:
    id: str
    gpu: str
    software: dict[str, Any]
    expected: frozenset[str]
    extra: dict[str, Any] = field(default_factory=dict)

    def server(self) -> dict[str, Any]:
        name = "s-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in self.id)
        return {"name": name, "gpu": {"model": self.gpu, "count": 1}, "software": self.software, **self.extra}


def _step(version: str, by: int) -> str:
    release = list(Version(version).release)
    release[-1] += by
    return ".".join(str(c) for c in release)


def _c(*rules: str) -> frozenset[str]:
    return frozenset(f"compatibility.{r}" for r in rules)


# ---------------------------------------------------------------- driver vs CUDA, per table row
def _cuda_cases() -> list[Case]:
    cases = []
    for row in KB.cuda.releases:
        # A GPU the release supports, so only the driver is under test.
        gpu = "h100-sxm-80gb" if Version(row.cuda) >= Version("13.0") else "v100-sxm2-32gb"
        if Version(row.cuda) < Version("11.8"):
            gpu = "v100-sxm2-32gb"
        floor = row.floor  # 11.0's GA driver is below its family floor
        has_mvc = Version(floor) < Version(row.driver)
        limited = _c("driver-minor-version") if has_mvc else frozenset()
        table = [
            ("full", row.driver, frozenset()),
            ("above-full", _step(row.driver, 1), frozenset()),
            ("below-full", _step(row.driver, -1), limited if has_mvc else _c("driver-below-cuda-floor")),
            ("floor", floor, limited),
            ("below-floor", _step(floor, -1), _c("driver-below-cuda-floor")),
        ]
        for label, driver, expected in table:
            sw = {"driver": driver, "cuda": row.cuda}
            cases.append(Case(f"cuda{row.cuda}-{label}", gpu, sw, expected))
    return cases


# ---------------------------------------------------------------- framework builds, per table row
def _torch_cases() -> list[Case]:
    torch = KB.frameworks.get("pytorch")
    assert torch is not None
    cases = []
    all_cuda = [r.cuda for r in KB.cuda.ga() if Version(r.cuda) >= Version("11.0")]
    sw = {"driver": NEWEST_DRIVER, "cuda": "12.4"}
    for row in torch.releases:
        for cuda in row.cuda:
            tag = f"cu{release_line(cuda).major}{release_line(cuda).minor}"  # type: ignore[union-attr]
            version = f"{row.release}.0+{tag}"
            cases.append(Case(f"torch{version}", "a100-sxm-80gb", {**sw, "frameworks": {"pytorch": version}},
                              frozenset()))
        missing = next(c for c in reversed(all_cuda) if c not in row.cuda)
        line = release_line(missing)
        assert line is not None
        version = f"{row.release}.0+cu{line.major}{line.minor}"
        # A build not in a complete list is missing; in a list still to be verified, unknown.
        absent = _c("framework-build-missing" if row.listed("cuda") else "framework-build-unlisted")
        cases.append(Case(f"torch{version}-missing", "a100-sxm-80gb",
                          {**sw, "frameworks": {"pytorch": version}}, absent))
        for rocm in row.rocm:
            version = f"{row.release}.0+rocm{rocm}"
            rocm_sw = {"rocm": "6.1", "frameworks": {"pytorch": version}}
            cases.append(Case(f"torch{version}", "mi250x", rocm_sw, frozenset()))
    return cases


def _tf_cases() -> list[Case]:
    tf = KB.frameworks.get("tensorflow")
    assert tf is not None
    sw = {"driver": NEWEST_DRIVER, "cuda": "12.4"}
    # Every TensorFlow build is checked against the A100's CUDA 11.0: only 1.15 (CUDA 10.0) is too old.
    return [
        Case(f"tf{row.release}-on-a100-table", "a100-sxm-80gb",
             {**sw, "frameworks": {"tensorflow": f"{row.release}.0"}},
             _c("framework-cuda-architecture") if row.release == "1.15" else frozenset())
        for row in tf.releases
    ]


def _rocm_cases() -> list[Case]:
    # Each ROCm line the tables know; MI300X support starts with 6.0.
    return [
        Case(f"rocm{row.rocm}-mi300x", "mi300x", {"rocm": row.rocm},
             _c("gpu-rocm-too-old") if Version(row.rocm) < Version("6.0") else frozenset())
        for row in KB.rocm.releases
    ]


NAMED = [
    # TensorFlow 1.15 is built with CUDA 10.0, before Ampere (11.0) and Hopper (11.8).
    Case("tf1.15-a100", "a100-sxm-80gb", {"driver": "535.129.03", "cuda": "12.2",
                                          "frameworks": {"tensorflow": "1.15.5"}},
         _c("framework-cuda-architecture")),
    Case("tf1.15-h100", "h100-sxm-80gb", {"driver": "535.129.03", "cuda": "12.2",
                                          "frameworks": {"tensorflow": "1.15.5"}},
         _c("framework-cuda-architecture")),
    Case("tf2.15-h100", "h100-sxm-80gb", {"driver": "535.129.03", "cuda": "12.2",
                                          "frameworks": {"tensorflow": "2.15.0"}}, frozenset()),
    # ROCm: MI300X needs 6.0.
    Case("mi300x-rocm5.7", "mi300x", {"rocm": "5.7"}, _c("gpu-rocm-too-old")),
    Case("mi300x-rocm6.1", "mi300x", {"rocm": "6.1"}, frozenset()),
    Case("mi300x-torch-rocm5.7", "mi300x", {"rocm": "6.1", "frameworks": {"pytorch": "2.2.2+rocm5.7"}},
         _c("framework-rocm-gpu")),
    # Blackwell needs torch 2.7 with a cu128 wheel.
    Case("b200-torch2.6", "b200", {"driver": "570.133.20", "cuda": "12.8",
                                   "frameworks": {"pytorch": "2.6.0+cu126"}},
         _c("framework-release-architecture", "framework-cuda-architecture")),
    # A plain version is the PyPI default build (2.6: cu124), not the host's CUDA 12.8.
    Case("b200-torch2.6-no-variant", "b200", {"driver": "570.133.20", "cuda": "12.8",
                                              "frameworks": {"pytorch": "2.6.0"}},
         _c("framework-release-architecture", "framework-cuda-architecture")),
    Case("b200-torch2.7", "b200", {"driver": "570.133.20", "cuda": "12.8",
                                   "frameworks": {"pytorch": "2.7.1+cu128"}}, frozenset()),
    # HGX B200 needs driver 570.133.20, more than CUDA 12.8's 570.26.
    Case("b200-driver570.86", "b200", {"driver": "570.86", "cuda": "12.8"}, _c("gpu-driver-minimum")),
    Case("b200-driver570.86.15", "b200", {"driver": "570.86.15", "cuda": "12.8"}, _c("gpu-driver-minimum")),
    Case("b200-driver570.133.20", "b200", {"driver": "570.133.20", "cuda": "12.8"}, frozenset()),
    # torch 2.1 has no cu124 wheel.
    Case("torch2.1-cu124", "a100-sxm-80gb", {"driver": "550.90.07", "cuda": "12.4",
                                             "frameworks": {"pytorch": "2.1.2+cu124"}},
         _c("framework-build-missing")),
    # The wheel's CUDA against the driver: cu124 on R535 runs only with limitations.
    Case("torch-cu124-on-r535", "h100-sxm-80gb", {"driver": "535.129.03", "cuda": "12.2",
                                                  "frameworks": {"pytorch": "2.4.1+cu124"}},
         _c("framework-driver-minor-version")),
    Case("torch-cu121-on-r520", "a100-sxm-80gb", {"driver": "520.61.05", "cuda": "11.8",
                                                  "frameworks": {"pytorch": "2.3.1+cu121"}},
         _c("framework-driver-below-floor")),
    # Volta: CUDA 13 and drivers after R580 drop it; torch 2.8 is in doubt.
    Case("v100-cuda13", "v100-sxm2-32gb", {"driver": "580.65.06", "cuda": "13.0"}, _c("gpu-cuda-dropped")),
    Case("v100-r590", "v100-sxm2-32gb", {"driver": "590.44.01", "cuda": "12.4"}, _c("gpu-driver-dropped")),
    Case("v100-torch2.8", "v100-sxm2-32gb", {"driver": "575.51.03", "cuda": "12.9",
                                             "frameworks": {"pytorch": "2.8.0+cu129"}},
         _c("framework-architecture-doubt")),
    Case("h100-cuda11.7", "h100-sxm-80gb", {"driver": "535.129.03", "cuda": "11.7"}, _c("gpu-cuda-too-old")),
    # Vendor stacks.
    Case("mi300x-cuda", "mi300x", {"driver": "550.90.07", "cuda": "12.4"},
         _c("cuda-on-amd", "stack-missing")),
    Case("h100-rocm", "h100-sxm-80gb", {"driver": "550.90.07", "cuda": "12.4", "rocm": "6.1"},
         _c("rocm-on-nvidia")),
    Case("mi300x-torch-cu124", "mi300x", {"rocm": "6.1", "frameworks": {"pytorch": "2.4.1+cu124"}},
         _c("framework-vendor")),
    Case("h100-torch-rocm", "h100-sxm-80gb", {"driver": "550.90.07", "cuda": "12.4",
                                              "frameworks": {"pytorch": "2.4.1+rocm6.1"}},
         _c("framework-vendor")),
    Case("torch-cpu", "l40s", {"driver": "550.90.07", "cuda": "12.4", "frameworks": {"pytorch": "2.4.1+cpu"}},
         _c("framework-cpu-build")),
    # Versions and names the tables do not know: a warning, never a silent pass.
    Case("cuda12.7", "h100-sxm-80gb", {"driver": "570.133.20", "cuda": "12.7"}, _c("cuda-unknown")),
    Case("rocm9.9", "mi300x", {"rocm": "9.9"}, _c("rocm-unknown")),
    Case("driver1000.1", "h100-sxm-80gb", {"driver": "1000.1", "cuda": "12.8"}, _c("driver-unknown")),
    Case("torch2.99", "h100-sxm-80gb", {"driver": "570.133.20", "cuda": "12.8",
                                        "frameworks": {"pytorch": "2.99.0+cu128"}},
         _c("framework-release-unknown")),
    Case("jax", "h100-sxm-80gb", {"driver": "570.133.20", "cuda": "12.8", "frameworks": {"jax": "0.4.30"}},
         _c("framework-unknown")),
    Case("torch-no-build", "h100-sxm-80gb", {"os": "ubuntu-22.04", "driver": "570.133.20",
                                             "frameworks": {"pytorch": {"version": "2.7.1",
                                                                        "source": "conda-forge"}}},
         _c("framework-build-unknown")),
    Case("torch-plain-pypi-no-cuda", "h100-sxm-80gb", {"os": "ubuntu-22.04", "driver": "570.133.20",
                                                       "frameworks": {"pytorch": "2.7.1"}}, frozenset()),
    # Stack declared only in part.
    Case("no-stack", "h100-sxm-80gb", {"os": "ubuntu-22.04"}, _c("stack-missing")),
    Case("no-driver", "h100-sxm-80gb", {"cuda": "12.4"}, _c("driver-undeclared")),
    Case("jetson-no-driver", "jetson-agx-orin-64gb", {"cuda": "12.2"}, frozenset()),
    # The server model and the GPUs' power.
    Case("dgx-h100-with-mi300x", "mi300x", {"rocm": "6.1"}, _c("gpu-server-model"),
         {"model": "dgx-h100", "gpu": {"model": "mi300x", "count": 8}}),
    Case("gpus-over-max-draw", "h100-sxm-80gb", {"driver": "550.90.07", "cuda": "12.4"}, _c("gpu-power"),
         {"gpu": {"model": "h100-sxm-80gb", "count": 8}, "power_w": {"max": 5000}}),
]

# December 2026: update releases, wheels that bring their own CUDA, PyPI default builds.
R580 = "580.95.05"  # CUDA 13.0 Update 2's driver
CONDA = {"version": "2.9.1", "source": "conda-forge"}
V100_HOST = {"driver": R580, "cuda": "12.9"}
DEC_2026 = {"driver": R580, "cuda": "13.0.2",
            "frameworks": {"pytorch": "2.12.1+cu130", "tensorflow": "2.21.0"}}
CURRENT = [
    # A wheel's own CUDA decides its GPUs: CUDA 13 dropped Volta, 2.11 dropped sm_70 from cu128.
    Case("v100-torch2.9.1-cu130", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.9.1+cu130"}},
         _c("framework-cuda-dropped")),
    Case("v100-torch2.11-cu128", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.11.0+cu128"}},
         _c("framework-wheel-architecture")),
    Case("v100-torch2.10-cu128", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.10.0+cu128"}},
         frozenset()),
    Case("v100-torch2.9.1-cu126", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.9.1+cu126"}},
         frozenset()),
    Case("v100-torch2.11-cu126", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.11.0+cu126"}},
         frozenset()),
    Case("v100-torch2.14-cu126", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.14.0+cu126"}},
         frozenset()),
    # The PyPI default of 2.12 is cu130: a V100 cannot run `pip install torch==2.12.0`.
    Case("v100-torch2.12-plain", "v100-sxm2-32gb", {**V100_HOST, "frameworks": {"pytorch": "2.12.0"}},
         _c("framework-cuda-dropped")),
    # A plain version is the PyPI default build (2.9: cu128), whatever the host's CUDA.
    Case("a100-torch2.9.1-plain-cuda12.9", "a100-sxm-80gb",
         {"driver": "575.57.08", "cuda": "12.9", "frameworks": {"pytorch": "2.9.1"}}, frozenset()),
    Case("v100-torch2.9.1-plain-cuda12.9", "v100-sxm2-32gb",
         {**V100_HOST, "frameworks": {"pytorch": "2.9.1"}}, frozenset()),
    # The PyPI default of 2.11 is not settled, and 2.12's list may leave cu128 out.
    Case("torch2.11-plain", "h100-sxm-80gb",
         {"driver": R580, "cuda": "12.9", "frameworks": {"pytorch": "2.11.0"}},
         _c("framework-build-unknown")),
    Case("torch2.12-cu128", "h100-sxm-80gb", {"driver": R580, "cuda": "12.9",
                                              "frameworks": {"pytorch": "2.12.0+cu128"}},
         _c("framework-build-unlisted")),
    # Other sources run on the server's CUDA, and PyPI's build lists do not apply to them.
    Case("v100-conda-forge-cuda12.9", "v100-sxm2-32gb",
         {**V100_HOST, "frameworks": {"pytorch": CONDA}}, frozenset()),
    Case("v100-conda-forge-cuda13.0", "v100-sxm2-32gb",
         {"driver": R580, "cuda": "13.0", "frameworks": {"pytorch": CONDA}},
         _c("gpu-cuda-dropped", "framework-cuda-dropped")),
    Case("vendor-build-unlisted-cuda", "h100-sxm-80gb",
         {"driver": R580, "cuda": "12.9",
          "frameworks": {"pytorch": {"version": "2.12.0", "source": "vendor"}}},
         frozenset()),
    # aarch64 wheels leave out sm_70, sm_75 and sm_86.
    Case("aarch64-a10-cu126", "a10", {**V100_HOST, "frameworks": {"pytorch": "2.9.1+cu126"}},
         _c("framework-wheel-architecture"), {"cpu": {"arch": "aarch64"}}),
    Case("x86-a10-cu126", "a10", {**V100_HOST, "frameworks": {"pytorch": "2.9.1+cu126"}},
         frozenset(), {"cpu": {"arch": "x86_64"}}),
    Case("aarch64-gb200-cu130", "gb200", {**DEC_2026, "frameworks": {"pytorch": "2.13.0+cu130"}},
         frozenset(), {"cpu": {"arch": "aarch64"}}),
    # Update releases need more than their GA driver.
    Case("cuda12.8.1-driver570.86.15", "h100-sxm-80gb", {"driver": "570.86.15", "cuda": "12.8.1"},
         _c("driver-minor-version")),
    Case("cuda12.8-driver570.86.15", "h100-sxm-80gb", {"driver": "570.86.15", "cuda": "12.8"}, frozenset()),
    Case("cuda12.2.2-driver535.86.09", "a100-sxm-80gb", {"driver": "535.86.09", "cuda": "12.2.2"},
         _c("driver-minor-version")),
    Case("cuda12.2.2-driver535.104.05", "a100-sxm-80gb", {"driver": "535.104.05", "cuda": "12.2.2"},
         frozenset()),
    Case("cuda13.0.2-driver580.65.06", "h100-sxm-80gb", {"driver": "580.65.06", "cuda": "13.0.2"},
         _c("driver-minor-version")),
    Case("cuda11.7.1-unlisted", "a100-sxm-80gb", {"driver": "515.43.04", "cuda": "11.7.1"},
         _c("cuda-update-unlisted")),
    Case("cuda13.2-driver595", "h100-sxm-80gb", {"driver": "595.45.04", "cuda": "13.2"}, frozenset()),
    Case("cuda13.3-driver595", "h100-sxm-80gb", {"driver": "595.58.03", "cuda": "13.3"},
         _c("driver-minor-version")),
    # A fully vendor-supported December 2026 stack: no finding.
    Case("dec2026-h100", "h100-sxm-80gb", DEC_2026, frozenset()),
    Case("dec2026-h100-torch2.13", "h100-sxm-80gb", {**DEC_2026, "frameworks": {"pytorch": "2.13.0+cu130"}},
         frozenset()),
    Case("dec2026-b200", "b200", {**DEC_2026, "frameworks": {"pytorch": "2.13.0+cu130"}}, frozenset()),
    Case("dec2026-b300", "b300", {**DEC_2026, "frameworks": {"pytorch": "2.12.1+cu130"}}, frozenset()),
    # TensorFlow 2.21 is built with CUDA 12.5, before Blackwell's 12.8.
    Case("b200-tf2.21", "b200", DEC_2026, _c("framework-cuda-architecture")),
    Case("dec2026-mi300x", "mi300x", {"rocm": "7.2.1", "frameworks": {"pytorch": "2.13.0+rocm7.2"}},
         frozenset()),
    Case("dec2026-mi355x", "mi355x", {"rocm": "7.2.1", "frameworks": {"pytorch": "2.13.0+rocm7.2"}},
         frozenset()),
    Case("mi355x-rocm6.4", "mi355x", {"rocm": "6.4"}, _c("gpu-rocm-too-old")),
    Case("mi300x-torch2.10-rocm7.0", "mi300x", {"rocm": "7.0", "frameworks": {"pytorch": "2.10.0+rocm7.0"}},
         frozenset()),
]

# Containers bring their own CUDA; the host driver runs it, through the image's
# forward-compatibility package on data-center GPUs and the supported branches.
R570 = "570.133.20"
CUDA13_IMAGE = "nvcr.io/nvidia/cuda:13.0.2-runtime-ubuntu24.04"
NGC_26_05 = "nvcr.io/nvidia/pytorch:26.05-py3"  # CUDA 13.2.1, "driver 570 or later"
CONTAINERS = [
    Case("h100-r570-cuda13-image", "h100-sxm-80gb", {"driver": R570, "containers": [CUDA13_IMAGE]},
         frozenset()),
    Case("rtx-r570-cuda13-image", "rtx-6000-ada", {"driver": R570, "containers": [CUDA13_IMAGE]},
         _c("container-driver-below-floor")),
    Case("rtx4090-r570-cuda13-image", "rtx-4090", {"driver": R570, "containers": [CUDA13_IMAGE]},
         _c("container-driver-below-floor")),
    Case("h100-r570-ngc26.05", "h100-sxm-80gb", {"driver": R570, "containers": [NGC_26_05]},
         frozenset()),
    Case("h100-r580-ngc26.05", "h100-sxm-80gb", {"driver": R580, "containers": [NGC_26_05]},
         frozenset()),
    # The 26.05 notes ask for 570 or later: R535 is forward-compatible, but not for this image.
    Case("h100-r535-ngc26.05", "h100-sxm-80gb", {"driver": "535.129.03", "containers": [NGC_26_05]},
         _c("container-driver-below-floor")),
    # R535 runs a declared CUDA 12.8 image through forward compatibility; R560 is not a supported branch.
    Case("h100-r535-cuda12.8-declared", "h100-sxm-80gb",
         {"driver": "535.129.03",
          "containers": [{"image": "registry.example.com/ml/train:7", "cuda": "12.8"}]},
         frozenset()),
    Case("h100-r560-cuda13-image", "h100-sxm-80gb", {"driver": "560.35.03", "containers": [CUDA13_IMAGE]},
         _c("container-driver-below-floor")),
    # R580 is in no forward-compatibility list: a 13.2 image without release notes runs with limitations.
    Case("h100-r580-cuda13.2-image", "h100-sxm-80gb",
         {"driver": "580.65.06", "containers": ["nvidia/cuda:13.2.1-base-ubuntu24.04"]},
         _c("container-driver-minor-version")),
    # Within the CUDA major: on R550 an L40S runs a 12.8 image through forward compatibility,
    # an RTX card only with minor-version compatibility's limitations.
    Case("l40s-r550-cuda12.8-image", "l40s",
         {"driver": "550.90.07", "containers": ["nvidia/cuda:12.8.1-base-ubuntu24.04"]}, frozenset()),
    Case("rtx-r550-cuda12.8-image", "rtx-6000-ada",
         {"driver": "550.90.07", "containers": ["nvidia/cuda:12.8.1-base-ubuntu24.04"]},
         _c("container-driver-minor-version")),
    # What the image brings against the GPU.
    Case("v100-cuda13-image", "v100-sxm2-32gb", {"driver": R580, "containers": [CUDA13_IMAGE]},
         _c("container-gpu-cuda-dropped")),
    Case("b200-cuda12.4-image", "b200", {"driver": "570.133.20",
                                         "containers": ["pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime"]},
         _c("container-gpu-cuda-too-old")),
    Case("mi300x-cuda-image", "mi300x", {"rocm": "7.2.1", "containers": [NGC_26_05]}, _c("container-vendor")),
    # TensorFlow's images run the release's tested CUDA (2.21: 12.5).
    Case("h100-r550-tf-image", "h100-sxm-80gb",
         {"driver": "550.90.07", "containers": ["tensorflow/tensorflow:2.21.0-gpu"]}, frozenset()),
    Case("b200-tf-image", "b200",
         {"driver": "570.133.20", "containers": ["tensorflow/tensorflow:2.21.0-gpu"]},
         _c("container-gpu-cuda-too-old")),
    # What cannot be checked says so.
    Case("image-latest", "h100-sxm-80gb", {"driver": R580, "containers": ["pytorch/pytorch:latest"]},
         _c("container-tag-latest")),
    Case("image-no-tag", "h100-sxm-80gb", {"driver": R580, "containers": ["pytorch/pytorch"]},
         _c("container-tag-latest")),
    Case("image-unknown", "h100-sxm-80gb",
         {"driver": R580, "containers": ["nvcr.io/nvidia/pytorch:24.01-py3"]}, _c("container-image-unknown")),
    Case("image-digest", "h100-sxm-80gb",
         {"driver": R580, "containers": ["registry.example.com/ml/train@sha256:" + "0" * 64]},
         _c("container-image-unknown")),
    Case("image-cuda-unknown", "h100-sxm-80gb",
         {"driver": R580, "containers": [{"image": "registry.example.com/ml/train:7", "cuda": "12.7"}]},
         _c("container-cuda-unknown")),
    Case("image-no-driver", "h100-sxm-80gb", {"os": "ubuntu-24.04", "containers": [CUDA13_IMAGE]},
         _c("container-driver-undeclared", "stack-missing")),
    # cuDNN and NCCL are NVIDIA's.
    Case("mi300x-nccl", "mi300x", {"rocm": "7.2.1", "nccl": "2.18"}, _c("nvidia-libraries-on-amd")),
    Case("h100-nccl", "h100-sxm-80gb", {"driver": R580, "cuda": "13.0.2", "cudnn": "9.1", "nccl": "2.18"},
         frozenset()),
]

CASES = _cuda_cases() + _torch_cases() + _tf_cases() + _rocm_cases() + NAMED + CURRENT + CONTAINERS


@pytest.fixture(scope="module")
def fired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    result = audit(tmp_path_factory.mktemp("compat"), [c.server() for c in CASES])
    return rules_by_entity(result, ["compatibility"])


def test_case_ids_are_unique() -> None:
    names = [c.server()["name"] for c in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_compatibility_rules(fired: dict[str, set[str]], case: Case) -> None:
    assert fired.get(f"server/{case.server()['name']}", set()) == case.expected


# ---------------------------------------------------------------- the fact figures themselves
def test_mi250x_is_two_64_gb_gpus_per_package() -> None:
    gpu = m.GpuModel.model_validate(
        {"name": "mi250x", "vendor": "AMD", "memory_gb": 128, "logical_gpus": 2, "tdp_w": 560,
         "source": "s", "verified": False, "unverified": ["tdp_w"]}
    )
    server = m.Server.model_validate({"name": "s", "rack": "R", "gpu": {"model": "mi250x", "count": 4}})
    values = software.gpu_values(server, gpu, None)
    assert (values["gpu.devices"], values["gpu.memory_gb"], values["gpu.memory_total_gb"]) == (8, 64, 512)
    assert values["gpu.tdp_total_w"] == 2240 and values["gpu.tdp_unverified"] is True


def test_driver_number_orders_numerically() -> None:
    sw = m.Software.model_validate({"driver": "535.129.03", "cuda": "12.2"})
    values = software.software_values(sw, KB)
    assert values["software.driver_num"] > values["software.cuda_full_driver_num"]  # 535.129.03 > 535.54.03
    assert values["software.driver_branch"] == 535 and values["software.cuda_known"] is True


def _framework(install: Any, sw: dict[str, Any]) -> dict[str, Any]:
    server = m.Software.model_validate({**sw, "frameworks": {"torch": install}})
    return software.framework_values("torch", server.frameworks["torch"], server, None, KB)


def test_a_plain_version_is_the_pypi_default_build() -> None:
    values = _framework("2.9.1", {"driver": "575.57.08", "cuda": "12.9"})
    assert (values["canonical"], values["cuda"], values["build_from"], values["build_exists"]) == (
        "pytorch", "12.8", "PyPI default build (unverified)", True)


def test_a_version_from_elsewhere_uses_software_cuda() -> None:
    values = _framework({**CONDA, "version": "2.4.1"}, {"driver": "550.90.07", "cuda": "12.4.1"})
    assert (values["cuda"], values["build_from"], values["source"]) == (
        "12.4.1", "software.cuda", "conda-forge")
    assert "build_exists" not in values or values["build_exists"] is None


def test_installed_knows_aliases() -> None:
    sw = m.Software.model_validate({"frameworks": {"torch": "2.4.1"}})
    assert software.installed(sw, "pytorch", KB) and not software.installed(sw, "tensorflow", KB)
    assert software.installed(m.Software.model_validate({"frameworks": {"jax": "0.4.30"}}), "jax", KB)
    assert not software.installed(None, "pytorch", KB)


def test_new_gpus_have_their_own_memory() -> None:
    # `gpu: b300` is its own model (288 GB), not a B200 (180 GB).
    folder = Path(__file__).resolve().parents[1] / "fixtures" / "stacks2026"
    inv, problems = load([folder])
    assert problems == []
    memory = {g: inv.gpu_models[g].value.memory_gb for g in ("b300", "gb300", "gb200", "h200-nvl", "mi355x")}
    assert memory == {"b300": 288, "gb300": 288, "gb200": 186, "h200-nvl": 141, "mi355x": 288}
    facts = build_all(inv, compute(inv), Context(dt.date(2027, 1, 15)))
    b300 = next(f for f in facts if f.kind == "server" and f.entity == "server/b300-dec2026")
    assert (b300.values["gpu.memory_gb"], b300.values["gpu.architecture"]) == (288, "Blackwell")


def test_a_known_image_resolves_to_what_it_brings() -> None:
    sw = m.Software.model_validate({"driver": "570.133.20", "containers": [
        "docker.io/pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime", "tensorflow/tensorflow:2.15.0-gpu",
        {"image": NGC_26_05, "nccl": "2.18"}]})
    torch, tf, ngc = (software.container_values(c, sw, None, KB) for c in sw.containers)
    fields = ("repository", "framework", "framework_version", "cuda", "cudnn", "cuda_from")
    assert [torch[k] for k in fields] == ["pytorch/pytorch", "pytorch", "2.9.1", "12.8", "9", "image"]
    assert (tf["cuda"], tf["cudnn"], tf["cuda_from"], tf["image_unverified"]) == (
        "12.2", "8.9", "tested build", True)
    assert (ngc["cuda"], ngc["image_min_driver"], ngc["nccl"], ngc["cudnn"]) == (
        "13.2.1", "570", "2.18", None)


# ---------------------------------------------------------------- driver lifecycle (support rules)
def _s(*rules: str) -> frozenset[str]:
    return frozenset(f"support.{r}" for r in rules)


# Rolled out on 2027-02-01 (tests/rollout.py), a 365-day support horizon.
LIFECYCLE = [
    Case("r535-2027", "h100-sxm-80gb", {"driver": "535.129.03", "cuda": "12.2"}, _s("driver-branch-eol")),
    Case("r570-2027", "h100-sxm-80gb", {"driver": "570.133.20", "cuda": "12.8"}, _s("driver-branch-eol")),
    Case("r580-2027", "h100-sxm-80gb", {"driver": "580.95.05", "cuda": "13.0.2"}, frozenset()),
    Case("r595-2027", "h100-sxm-80gb", {"driver": "595.58.03", "cuda": "13.2.1"},
         _s("driver-branch-ends-soon")),
    Case("r610-2027", "h100-sxm-80gb", {"driver": "610.43.02", "cuda": "13.3"},
         _s("driver-branch-eol", "driver-new-feature-branch")),
    Case("r620-2027", "h100-sxm-80gb", {"driver": "620.10.01"}, frozenset()),
    # A branch without a lifecycle in the sources is not checked for one.
    Case("r550-2027", "h100-sxm-80gb", {"driver": "550.90.07", "cuda": "12.4"}, frozenset()),
]


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    result = audit(tmp_path_factory.mktemp("lifecycle"), [c.server() for c in LIFECYCLE])
    fired = rules_by_entity(result, ["support"])
    return {entity: {r for r in rules if r.startswith("support.driver-")} for entity, rules in fired.items()}


@pytest.mark.parametrize("case", LIFECYCLE, ids=[c.id for c in LIFECYCLE])
def test_driver_lifecycle_rules(lifecycle: dict[str, set[str]], case: Case) -> None:
    assert lifecycle.get(f"server/{case.server()['name']}", set()) == case.expected


def test_without_a_rollout_date_the_lifecycle_is_checked_at_the_audit_date(tmp_path: Path) -> None:
    # R595 ends in March 2027: past it at an audit in April, within the horizon in January.
    servers = [{"name": "s1", "gpu": {"model": "h100-sxm-80gb", "count": 1},
                "software": {"driver": "595.58.03"}}]
    for as_of, expected in ((dt.date(2027, 4, 15), {"support.driver-branch-eol"}),
                            (dt.date(2027, 1, 15), {"support.driver-branch-ends-soon"})):
        result = audit(tmp_path, servers, rollout_date=None, as_of=as_of)
        fired = rules_by_entity(result, ["support"]).get("server/s1", set())
        assert {r for r in fired if r.startswith("support.driver-")} == expected
