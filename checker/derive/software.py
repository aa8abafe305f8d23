"""Software compatibility figures: a server's GPU, driver, CUDA, ROCm and
frameworks set against the GPU catalog and the knowledge tables.

Nothing here decides: it looks values up and writes them as fact fields,
versions as numbers (:func:`checker.derive.knowledge.version_number`) next to their
thresholds from the tables, and the rules in rules/compatibility.yaml compare
them. A version or name the tables do not know gives a `*_known: false`
field, which a rule turns into a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checker.derive.fields import derived
from checker.derive.knowledge import (
    CudaRelease,
    Framework,
    FrameworkRelease,
    Knowledge,
    parse_version,
    release_line,
    version_number,
)
from checker.load import models as m

Values = dict[str, Any]


def _versioned(name: str, text: str | None) -> Values:
    """`name` as written and `name_num`, the number rules compare."""
    return {name: text, f"{name}_num": version_number(text)}


# ---------------------------------------------------------------- GPU
# What gpu_values gives (catalog figures of the server's GPU).
GPU_FIELDS = (
    derived("gpu.vendor", "string", "", "NVIDIA | AMD (GPU catalog)"),
    derived("gpu.architecture", "string", "", "GPU architecture (Ampere, Hopper, ...)"),
    derived("gpu.form_factor", "string", "", "sxm | pcie | oam | embedded"),
    derived(
        "gpu.forward_compatible", "boolean", "",
        "CUDA forward compatibility (cuda-compat) works on the GPU",
    ),
    derived("gpu.devices", "number", "", "GPUs as software sees them (an MI250X is two)"),
    derived("gpu.memory_gb", "number", "GB", "memory of one GPU as software sees it (MI250X: 64)"),
    derived("gpu.memory_total_gb", "number", "GB", "GPU memory of the server"),
    derived("gpu.tdp_w", "number", "W", "board power of one GPU package"),
    derived("gpu.tdp_total_w", "number", "W", "gpu.count x gpu.tdp_w"),
    derived("gpu.tdp_unverified", "boolean", "", "the catalog marks the TDP unverified"),
    derived(
        "gpu.nvlink", "boolean", "",
        "NVLink between the GPUs: network.nvlink, else the catalog interconnect",
    ),
    derived("gpu.min_cuda", "string", "", "first CUDA that supports the GPU"),
    derived("gpu.min_cuda_num", "number", "version", "gpu.min_cuda as a version number"),
    derived("gpu.cuda_dropped", "string", "", "first CUDA without support for the GPU"),
    derived("gpu.cuda_dropped_num", "number", "version", "gpu.cuda_dropped as a version number"),
    derived("gpu.min_driver", "string", "", "driver the GPU needs beyond its CUDA's (HGX B200)"),
    derived("gpu.min_driver_num", "number", "version", "gpu.min_driver as a version number"),
    derived("gpu.last_driver_branch", "number", "", "last driver branch that supports the GPU"),
    derived("gpu.min_rocm", "string", "", "first ROCm that supports the GPU"),
    derived("gpu.min_rocm_num", "number", "version", "gpu.min_rocm as a version number"),
    derived("gpu.options", "string", "", "GPU models the server model takes"),
    derived("gpu.matches_server_model", "boolean", "", "gpu.model is one the server model takes"),
)


def gpu_values(server: m.Server, gpu: m.GpuModel | None, model: m.ServerModel | None) -> Values:
    """Catalog figures of the server's GPU, per logical GPU as software sees it."""
    if server.gpu is None or gpu is None:
        return {}
    count = server.gpu.count
    nvlink = server.network.nvlink if server.network and server.network.nvlink is not None else None
    values: Values = {
        "gpu.vendor": gpu.vendor,
        "gpu.architecture": gpu.architecture,
        "gpu.form_factor": gpu.form_factor,
        "gpu.forward_compatible": gpu.forward_compatible,
        "gpu.devices": count * gpu.logical_gpus,
        "gpu.memory_gb": gpu.memory_gb / gpu.logical_gpus,
        "gpu.memory_total_gb": gpu.memory_gb * count,
        "gpu.tdp_w": gpu.tdp_w,
        "gpu.tdp_total_w": gpu.tdp_w * count if gpu.tdp_w else None,
        "gpu.tdp_unverified": "tdp_w" in gpu.unverified,
        "gpu.nvlink": gpu.interconnect == "nvlink" if nvlink is None else nvlink,
        "gpu.last_driver_branch": gpu.last_driver_branch,
        **_versioned("gpu.min_cuda", gpu.min_cuda),
        **_versioned("gpu.cuda_dropped", gpu.cuda_dropped),
        **_versioned("gpu.min_driver", gpu.min_driver),
        **_versioned("gpu.min_rocm", gpu.min_rocm),
    }
    if model is not None and model.gpu_options:
        values["gpu.options"] = ", ".join(model.gpu_options)
        values["gpu.matches_server_model"] = server.gpu.model in model.gpu_options
    return values


# ---------------------------------------------------------------- driver / CUDA / ROCm
def _cuda_values(prefix: str, row: CudaRelease | None) -> Values:
    if row is None:
        return {}
    return {
        **_versioned(f"{prefix}cuda_full_driver", row.driver),
        **_versioned(f"{prefix}cuda_driver_floor", row.floor),
    }


# What software_values gives. Versions are strings as written plus `*_num`
# numbers rules compare (version_number: 535.129.03 -> 535129003000).
SOFTWARE_FIELDS = (
    derived("software.declared", "boolean", "", "the server has a software section"),
    derived("software.driver_num", "number", "version", "software.driver as a version number"),
    derived("software.driver_branch", "number", "", "driver branch (major version: 535)"),
    derived("software.driver_known", "boolean", "", "the driver version reads as a version number"),
    derived("software.cuda_num", "number", "version", "software.cuda as a version number"),
    derived("software.cuda_known", "boolean", "", "the tables know the CUDA release"),
    derived("software.cuda_full_driver", "string", "", "full-feature minimum driver of software.cuda"),
    derived("software.cuda_full_driver_num", "number", "version", "that driver as a version number"),
    derived(
        "software.cuda_driver_floor", "string", "",
        "minor-version-compat minimum driver of software.cuda",
    ),
    derived("software.cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    derived("software.rocm_num", "number", "version", "software.rocm as a version number"),
    derived("software.rocm_known", "boolean", "", "the tables know the ROCm release"),
)


def software_values(software: m.Software | None, kb: Knowledge) -> Values:
    if software is None:
        return {"software.declared": False}
    driver = parse_version(software.driver)
    values: Values = {
        "software.declared": True,
        "software.driver_num": version_number(software.driver),
        "software.driver_branch": driver.release[0] if driver else None,
        "software.cuda_num": version_number(software.cuda),
        "software.rocm_num": version_number(software.rocm),
        **_cuda_values("software.", kb.cuda.row(software.cuda)),
    }
    if software.driver is not None:
        values["software.driver_known"] = values["software.driver_num"] is not None
    if software.cuda is not None:
        values["software.cuda_known"] = kb.cuda.row(software.cuda) is not None and bool(
            values["software.cuda_num"]
        )
    if software.rocm is not None:
        values["software.rocm_known"] = kb.rocm.known(software.rocm) and bool(values["software.rocm_num"])
    return values


# ---------------------------------------------------------------- frameworks
@dataclass(frozen=True)
class Build:
    """What a framework install runs on: its stack and CUDA or ROCm version."""

    stack: str  # cuda | rocm | cpu | unknown
    cuda: str | None = None
    rocm: str | None = None
    source: str = ""  # where the version came from, for messages
    exists: bool | None = None  # an official build of that release exists


def _variant_cuda(kb: Knowledge, variant: str) -> str | None:
    """The CUDA release a wheel tag such as `cu121` names, by the tables' own releases."""
    for row in kb.cuda.releases:
        line = release_line(row.cuda)
        if line is not None and variant == f"cu{line.major}{line.minor}":
            return row.cuda
    return None


def _same(version: str | None, builds: list[str], parts: int | None = None) -> bool:
    if version is None:
        return False
    if parts is None:
        return any(parse_version(version) == parse_version(b) for b in builds)
    return any(release_line(version, parts) == release_line(b, parts) for b in builds)


# Wheel tags: `+cu121`, `+rocm6.1`, `+cpu` (PyTorch's naming), first match wins.
_TAGS = (("cpu", "cpu"), ("rocm", "rocm"), ("cu", "cuda"))


def _explicit_build(kb: Knowledge, row: FrameworkRelease | None, variant: str) -> Build:
    stack = next((s for prefix, s in _TAGS if variant.startswith(prefix)), "unknown")
    # The CUDA a tag names is looked up among the tables' releases (cu121 -> 12.1).
    cuda = _variant_cuda(kb, variant) if stack == "cuda" else None
    rocm = variant.removeprefix("rocm") if stack == "rocm" else None
    official = {"cuda": (cuda, row.cuda if row else []), "rocm": (rocm, row.rocm if row else [])}
    version, builds = official.get(stack, (None, []))
    exists = None if stack == "cpu" else _same(version, builds)
    return Build(stack, cuda=cuda, rocm=rocm, source="variant", exists=exists)


def _implicit_build(fw: Framework, row: FrameworkRelease | None, software: m.Software) -> Build:
    if not fw.variants:
        # One tested build per release (TensorFlow): its CUDA is the table's.
        return Build("cuda", cuda=row.cuda[0] if row and row.cuda else None, source="tested build")
    if software.rocm is not None and software.cuda is None:
        exists = bool(row and _same(software.rocm, row.rocm, 2))
        return Build("rocm", rocm=software.rocm, source="software.rocm", exists=exists)
    if software.cuda is None:
        return Build("unknown", source="software.cuda")
    exists = bool(row and _same(software.cuda, row.cuda, 2))
    return Build("cuda", cuda=software.cuda, source="software.cuda", exists=exists)


def _build_values(build: Build, row: FrameworkRelease | None, kb: Knowledge) -> Values:
    values: Values = {
        "stack": build.stack,
        "build_from": build.source,
        "build_exists": build.exists if row is not None else None,
        "builds": _builds(row),
        **_versioned("cuda", build.cuda),
        **_versioned("rocm", build.rocm),
        **_cuda_values("", kb.cuda.row(build.cuda)),
    }
    return values


def _builds(row: FrameworkRelease | None) -> str | None:
    if row is None:
        return None
    names = [f"CUDA {c}" for c in row.cuda] + [f"ROCm {r}" for r in row.rocm]
    return ", ".join(names) or "none"


def _arch_values(fw: Framework, gpu: m.GpuModel | None, stack: str) -> Values:
    if gpu is None:
        return {}
    arch = fw.architecture(gpu.architecture)
    values: Values = {"gpu.vendor": gpu.vendor, "gpu.architecture": gpu.architecture}
    if stack == "cuda":
        values.update(_versioned("arch_min_cuda", arch.min_cuda if arch and arch.min_cuda else gpu.min_cuda))
    if stack == "rocm":
        values.update(_versioned("gpu.min_rocm", gpu.min_rocm))
    if arch is not None:
        values.update(_versioned("arch_min_release", arch.min_release))
        values.update(_versioned("arch_warn_from", arch.warn_from))
        values["arch_note"] = arch.notes
    return values


# What framework_values gives: the fields of a `framework` fact.
FRAMEWORK_FIELDS = (
    derived("server", "string", "", "server the framework is installed on"),
    derived("name", "string", "", "framework name as written (a key of software.frameworks)"),
    derived("canonical", "string", "", "the tables' name for it (torch -> pytorch)"),
    derived("version", "string", "", "version as written, with its build variant (2.3.1+cu121)"),
    derived("known", "boolean", "", "the tables know the framework"),
    derived("release", "string", "", "release line of the version (2.3.1 -> 2.3)"),
    derived("release_num", "number", "version", "release line as a version number"),
    derived("release_known", "boolean", "", "the tables know the release (absent for an unknown framework)"),
    derived("stack", "string", "", "cuda | rocm | cpu | unknown: what the build runs on"),
    derived("build_from", "string", "", "where the build's CUDA/ROCm came from: variant | software.cuda | "
       "software.rocm | tested build"),
    derived("build_exists", "boolean", "", "an official build of this release exists for that CUDA/ROCm"),
    derived("builds", "string", "", "the official builds of the release, for messages"),
    derived(
        "cuda", "string", "",
        "CUDA the framework runs with (wheel variant, software.cuda or tested build)",
    ),
    derived("cuda_num", "number", "version", "that CUDA as a version number"),
    derived("rocm", "string", "", "ROCm the framework runs with"),
    derived("rocm_num", "number", "version", "that ROCm as a version number"),
    derived("cuda_full_driver", "string", "", "full-feature minimum driver of the framework's CUDA"),
    derived("cuda_full_driver_num", "number", "version", "that driver as a version number"),
    derived("cuda_driver_floor", "string", "", "minor-version-compatibility minimum driver of its CUDA"),
    derived("cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    derived("driver", "string", "", "the server's NVIDIA driver"),
    derived("driver_num", "number", "version", "that driver as a version number"),
    derived("gpu.model", "string", "", "the server's GPU model"),
    derived("gpu.vendor", "string", "", "NVIDIA | AMD"),
    derived("gpu.architecture", "string", "", "GPU architecture"),
    derived("gpu.min_rocm", "string", "", "first ROCm that supports the GPU"),
    derived("gpu.min_rocm_num", "number", "version", "that ROCm as a version number"),
    derived("arch_min_cuda", "string", "", "oldest framework CUDA build that runs the GPU's architecture"),
    derived("arch_min_cuda_num", "number", "version", "that CUDA as a version number"),
    derived("arch_min_release", "string", "", "first framework release that runs the architecture"),
    derived("arch_min_release_num", "number", "version", "that release as a version number"),
    derived("arch_warn_from", "string", "", "first release whose support for the architecture is in doubt"),
    derived("arch_warn_from_num", "number", "version", "that release as a version number"),
    derived("arch_note", "string", "", "the table's note on the architecture"),
)


def framework_values(
    name: str, version: str, software: m.Software, gpu: m.GpuModel | None, kb: Knowledge
) -> Values:
    """One installed framework: its release and build against the tables and the GPU."""
    fw = kb.frameworks.get(name)
    parsed = parse_version(version)
    values: Values = {
        "name": name,
        "version": version,
        "known": fw is not None,
        "gpu.model": gpu.name if gpu else None,
        **_versioned("driver", software.driver),
    }
    if fw is None or parsed is None:
        values["release_known"] = False if fw is not None else None
        return values
    row = fw.release(version)
    release = str(release_line(version))
    build = _explicit_build(kb, row, parsed.local) if parsed.local else _implicit_build(fw, row, software)
    values.update(
        {
            "canonical": fw.name,
            **_versioned("release", release),
            "release_known": row is not None,
            **_build_values(build, row, kb),
            **_arch_values(fw, gpu, build.stack),
        }
    )
    return values


def installed(software: m.Software | None, framework: str, kb: Knowledge) -> bool:
    """Whether the framework (by name or alias) is installed."""
    if software is None:
        return False
    wanted = kb.frameworks.get(framework)
    if wanted is None:
        return framework in software.frameworks
    return any(kb.frameworks.get(n) is wanted for n in software.frameworks)
