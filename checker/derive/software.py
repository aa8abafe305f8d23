"""Software compatibility figures: a server's GPU, driver, CUDA, ROCm and
frameworks set against the GPU catalog and the knowledge tables.

Nothing here decides: it looks values up and writes them as fact fields,
versions as numbers (:func:`checker.derive.knowledge.version_number`) next to their
thresholds from the tables, and the rules in rules/compatibility.yaml compare
them. A version or name the tables do not know gives a `*_known: false`
field, which a rule turns into a warning.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Any

from packaging.version import Version

from checker.derive.fields import derived
from checker.derive.knowledge import (
    CudaRelease,
    DriverBranch,
    Framework,
    FrameworkRelease,
    Knowledge,
    parse_version,
    release_line,
    same_release,
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
    derived(
        "gpu.devices", "number", "", "GPUs of one node as software sees them (an MI250X is two; a rack-scale "
        "system: per compute tray)",
    ),
    derived(
        "gpu.system_devices", "number", "",
        "GPUs of the whole system as software sees them: gpu.devices x trays (a server: gpu.devices)",
    ),
    derived("gpu.memory_gb", "number", "GB", "memory of one GPU as software sees it (MI250X: 64)"),
    derived("gpu.memory_total_gb", "number", "GB", "GPU memory of the server"),
    derived("gpu.tdp_w", "number", "W", "board power of one GPU package"),
    derived("gpu.tdp_total_w", "number", "W", "gpu.count x gpu.tdp_w"),
    derived("gpu.tdp_unverified", "boolean", "", "the catalog marks the TDP unverified"),
    derived(
        "gpu.nvlink", "boolean", "",
        "NVLink between the GPUs: network.nvlink, else the catalog interconnect",
    ),
    derived(
        "gpu.link", "string", "",
        "the fast GPU link: nvlink (SXM) | nvlink-bridge | infinity-fabric | pcie | none | unknown "
        "(the catalog interconnect; network.nvlink true makes it nvlink, false pcie)",
    ),
    derived(
        "gpu.link_domain_gpus", "number", "",
        "GPUs one fast link joins: NVLink, the server's (a rack-scale system's network.nvlink_domain, "
        "NVL72: 72); a bridge group (network.nvlink_bridge, else the catalog's smallest bridge, else 2), "
        "the catalog's link_domain (MI300X: 8), 1 over PCIe; absent where the catalog does not say",
    ),
    derived("gpu.link_domain_memory_gb", "number", "GB", "GPU memory of one fast-link domain"),
    derived(
        "gpu.link_domain_assumed", "boolean", "",
        "the bridge group size is the least a bridge joins (2): neither the catalog nor the server gives it",
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
    linked = gpu.interconnect == "nvlink" if nvlink is None else nvlink
    values: Values = {
        "gpu.vendor": gpu.vendor,
        "gpu.architecture": gpu.architecture,
        "gpu.form_factor": gpu.form_factor,
        "gpu.forward_compatible": gpu.forward_compatible,
        "gpu.devices": count * gpu.logical_gpus,
        "gpu.system_devices": count * gpu.logical_gpus * server.nodes,
        "gpu.memory_gb": gpu.memory_gb / gpu.logical_gpus,
        "gpu.memory_total_gb": gpu.memory_gb * count,
        "gpu.tdp_w": gpu.tdp_w,
        "gpu.tdp_total_w": gpu.tdp_w * count if gpu.tdp_w else None,
        "gpu.tdp_unverified": "tdp_w" in gpu.unverified,
        "gpu.nvlink": linked,
        "gpu.last_driver_branch": gpu.last_driver_branch,
        **_versioned("gpu.min_cuda", gpu.min_cuda),
        **_versioned("gpu.cuda_dropped", gpu.cuda_dropped),
        **_versioned("gpu.min_driver", gpu.min_driver),
        **_versioned("gpu.min_rocm", gpu.min_rocm),
    }
    values.update(_link_values(server, gpu, values["gpu.devices"], values["gpu.memory_gb"]))
    if model is not None and model.gpu_options:
        values["gpu.options"] = ", ".join(model.gpu_options)
        values["gpu.matches_server_model"] = server.gpu.model in model.gpu_options
    return values


def _link_values(server: m.Server, gpu: m.GpuModel, devices: int, memory_gb: float) -> Values:
    """The server's fast GPU link and how many GPUs one domain of it joins."""
    network = server.network
    said = network.nvlink if network else None
    link = gpu.interconnect or "unknown"
    if said is True and link not in ("nvlink", "nvlink-bridge"):
        link = "nvlink"  # the server says so (an NVLink board the catalog does not know)
    elif said is False and link in ("nvlink", "nvlink-bridge"):
        link = "pcie"  # no NVLink (bridges not fitted)
    assumed = None
    domain: int | None
    if link == "nvlink":
        # A rack-scale system's NVLink switch trays join its compute trays into one domain.
        spans = network.nvlink_domain if network else None
        domain = spans if spans is not None else devices
    elif link == "nvlink-bridge":
        declared = network.nvlink_bridge if network else None
        ways = declared or (min(gpu.bridge_ways) if gpu.bridge_ways else None)
        assumed = ways is None
        domain = min(devices, ways or 2)
    elif link == "infinity-fabric":
        domain = min(devices, gpu.link_domain) if gpu.link_domain else None
    elif link in ("pcie", "none"):
        domain = 1
    else:
        domain = None
    return {
        "gpu.link": link,
        "gpu.link_domain_gpus": domain,
        "gpu.link_domain_memory_gb": domain * memory_gb if domain else None,
        "gpu.link_domain_assumed": assumed,
    }


# ---------------------------------------------------------------- driver / CUDA / ROCm
def _cuda_values(prefix: str, row: CudaRelease | None) -> Values:
    if row is None:
        return {}
    return {
        **_versioned(f"{prefix}cuda_full_driver", row.driver),
        **_versioned(f"{prefix}cuda_driver_floor", row.floor),
        f"{prefix}cuda_driver_unverified": "driver" in row.unverified,
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
    derived(
        "software.cuda_driver_unverified", "boolean", "",
        "the tables mark the driver minimum of software.cuda unverified",
    ),
    derived(
        "software.cuda_update_listed", "boolean", "",
        "software.cuda is a GA release or an update release the tables list (12.8.1)",
    ),
    derived(
        "software.cuda_checked_as", "string", "",
        "the table row software.cuda was checked against (an unlisted 12.8.2: 12.8.1)",
    ),
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
        row = kb.cuda.row(software.cuda)
        values["software.cuda_known"] = row is not None and bool(values["software.cuda_num"])
        if row is not None:
            values["software.cuda_update_listed"] = kb.cuda.update_listed(software.cuda)
            values["software.cuda_checked_as"] = row.cuda
    if software.rocm is not None:
        values["software.rocm_known"] = kb.rocm.known(software.rocm) and bool(values["software.rocm_num"])
    return values


# ---------------------------------------------------------------- driver lifecycle
# What lifecycle_values gives: the driver branch's type and end of life.
LIFECYCLE_FIELDS = (
    derived(
        "software.driver_branch_listed", "boolean", "",
        "the driver tables list the branch of software.driver (built in or yours)",
    ),
    derived(
        "software.driver_branch_type", "string", "", "long-term | production | new-feature (driver tables)",
    ),
    derived(
        "software.driver_eol", "date", "", "end of life of the driver branch (the last day of its month)",
    ),
    derived("software.driver_eol_month", "string", "", "the end-of-life month as the sources give it"),
    derived(
        "software.driver_eol_days_after_rollout", "number", "days",
        "software.driver_eol minus support.checked_against",
    ),
    derived(
        "software.driver_lifecycle_unverified", "boolean", "",
        "the driver tables mark the branch's type or end of life unverified",
    ),
)


def lifecycle_values(driver: str | None, checked: dt.date, kb: Knowledge) -> Values:
    """The driver branch's type and end of life, against the rollout (or audit) date."""
    version = parse_version(driver)
    branch = kb.drivers.get(version.release[0]) if version else None
    if branch is None:
        return {} if version is None else {"software.driver_branch_listed": False}
    eol = branch.eol_date
    return {
        "software.driver_branch_listed": True,
        "software.driver_branch_type": branch.type,
        "software.driver_eol": eol.isoformat() if eol else None,
        "software.driver_eol_month": branch.eol,
        "software.driver_eol_days_after_rollout": (eol - checked).days if eol else None,
        "software.driver_lifecycle_unverified": not {"type", "eol"}.isdisjoint(branch.unverified),
    }


# ---------------------------------------------------------------- frameworks
@dataclass(frozen=True)
class Build:
    """What a framework install runs on: its stack and CUDA or ROCm version."""

    stack: str  # cuda | rocm | cpu | unknown
    cuda: str | None = None
    rocm: str | None = None
    source: str = ""  # where the version came from, for messages
    exists: bool | None = None  # an official build of that release exists
    listed: bool | None = None  # the tables list it (False: a partial list leaves it out)


PYPI_DEFAULT = "PyPI default build"


def _variant_cuda(kb: Knowledge, variant: str) -> str | None:
    """The CUDA release a wheel tag such as `cu121` names, by the tables' own GA releases."""
    for row in kb.cuda.ga():
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


def _official(build: Build, row: FrameworkRelease | None) -> Build:
    """The build, with whether PyPI has it: in the release's list, not in a
    complete list (exists: False), or not in a list that may leave it out (listed: False)."""
    if build.stack not in ("cuda", "rocm") or row is None:
        return build
    builds = row.cuda if build.stack == "cuda" else row.rocm
    if _same(build.cuda if build.stack == "cuda" else build.rocm, builds):
        return replace(build, exists=True, listed=True)
    if row.listed(build.stack):
        return replace(build, exists=False)
    return replace(build, listed=False)


# Wheel tags: `+cu121`, `+rocm6.1`, `+cpu` (PyTorch's naming), first match wins.
_TAGS = (("cpu", "cpu"), ("rocm", "rocm"), ("cu", "cuda"))


def _explicit_build(kb: Knowledge, variant: str) -> Build:
    stack = next((s for prefix, s in _TAGS if variant.startswith(prefix)), "unknown")
    # The CUDA a tag names is looked up among the tables' releases (cu121 -> 12.1).
    cuda = _variant_cuda(kb, variant) if stack == "cuda" else None
    rocm = variant.removeprefix("rocm") if stack == "rocm" else None
    exists = False if stack in ("cuda", "rocm") and not (cuda or rocm) else None
    return Build(stack, cuda=cuda, rocm=rocm, source="variant", exists=exists)


def _environment_build(fw: Framework, row: FrameworkRelease | None, software: m.Software) -> Build:
    """A build without a tag that is not PyPI's: it runs on the server's CUDA or ROCm."""
    if not fw.variants:
        # One tested build per release (TensorFlow): its CUDA is the table's.
        return Build("cuda", cuda=row.cuda[0] if row and row.cuda else None, source="tested build")
    if software.rocm is not None and software.cuda is None:
        return Build("rocm", rocm=software.rocm, source="software.rocm")
    if software.cuda is None:
        return Build("unknown", source="software.cuda")
    return Build("cuda", cuda=software.cuda, source="software.cuda")


def _build(
    fw: Framework, row: FrameworkRelease | None, install: m.FrameworkInstall, software: m.Software,
    kb: Knowledge,
) -> Build:
    """What the install runs on. PyPI's builds are checked against the release's
    official list; a plain version from PyPI is its default build (what
    `pip install` gets, whatever the host's CUDA), one from conda-forge, a
    container or a vendor runs on the server's software.cuda / software.rocm."""
    parsed = parse_version(install.version)
    pypi = install.source == "pypi"
    if parsed is not None and parsed.local:
        build = _explicit_build(kb, parsed.local)
        return _official(build, row) if pypi and build.exists is None else build
    if pypi and fw.variants:
        if row is None or row.pypi_default is None:
            return Build("unknown", source=PYPI_DEFAULT)
        unverified = " (unverified)" if "pypi_default" in row.unverified else ""
        return _official(Build("cuda", cuda=row.pypi_default, source=PYPI_DEFAULT + unverified), row)
    return _environment_build(fw, row, software)


def _build_values(build: Build, row: FrameworkRelease | None, kb: Knowledge) -> Values:
    values: Values = {
        "stack": build.stack,
        "build_from": build.source,
        "build_exists": build.exists if row is not None else None,
        "build_listed": build.listed if row is not None else None,
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
    listed = "none" if not names else ", ".join(names)
    return listed if not row.unverified or {"cuda", "rocm"}.isdisjoint(row.unverified) else (
        f"{listed}, as far as the tables know"
    )


def _arch_values(fw: Framework, gpu: m.GpuModel | None, build: Build, pypi: bool) -> Values:
    if gpu is None:
        return {}
    arch = fw.architecture(gpu.architecture)
    values: Values = {
        "gpu.vendor": gpu.vendor,
        "gpu.architecture": gpu.architecture,
        "gpu.compute_capability": gpu.compute_capability,
        **_versioned("gpu.cuda_dropped", gpu.cuda_dropped),
    }
    if build.stack == "cuda":
        values.update(_versioned("arch_min_cuda", arch.min_cuda if arch and arch.min_cuda else gpu.min_cuda))
    if build.stack == "rocm":
        values.update(_versioned("gpu.min_rocm", gpu.min_rocm))
    if arch is not None:
        values.update(_versioned("arch_min_release", arch.min_release))
        # A doubt about the official wheels (which CUDA variants hold the architecture).
        doubted = not arch.warn_cuda or (
            pypi and build.stack == "cuda" and _same(build.cuda, arch.warn_cuda, 2)
        )
        values.update(_versioned("arch_warn_from", arch.warn_from if doubted else None))
        values["arch_note"] = arch.notes
    return values


def _wheel_values(
    fw: Framework, release: str, gpu: m.GpuModel | None, build: Build, platform: str | None
) -> Values:
    """Whether the official wheel holds code for the GPU's compute capability
    (`wheels` rows: the lowest one of a CUDA variant, what a platform leaves out)."""
    if gpu is None or gpu.compute_capability is None or build.stack != "cuda" or not build.exists:
        return {}
    cc = Version(gpu.compute_capability)
    rows = fw.wheel_rows(release, build.cuda, platform)
    if not rows:
        return {}
    missing = [
        w for w in rows
        if (w.min_cc is not None and cc < Version(w.min_cc)) or any(cc == Version(x) for x in w.excludes)
    ]
    lowest = next((w.min_cc for w in rows if w.min_cc is not None), None)
    notes = [f"{w.notes}{' (unverified)' if not w.verified else ''}" for w in missing if w.notes]
    return {
        "platform": platform,
        "wheel_min_cc": lowest,
        "wheel_has_arch": not missing,
        "wheel_arch_note": "; ".join(notes) or None,
    }


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
    derived("source", "string", "", "where the install comes from: pypi | conda-forge | container | vendor"),
    derived(
        "build_exists", "boolean", "",
        "an official build of this release exists for that CUDA/ROCm (PyPI builds only)",
    ),
    derived(
        "build_listed", "boolean", "",
        "false: the build is not in a build list the tables mark as possibly incomplete",
    ),
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
    derived("cuda_driver_unverified", "boolean", "", "the tables mark that CUDA's driver minimum unverified"),
    derived("driver", "string", "", "the server's NVIDIA driver"),
    derived("driver_num", "number", "version", "that driver as a version number"),
    derived("gpu.model", "string", "", "the server's GPU model"),
    derived("gpu.vendor", "string", "", "NVIDIA | AMD"),
    derived("gpu.architecture", "string", "", "GPU architecture"),
    derived("gpu.min_rocm", "string", "", "first ROCm that supports the GPU"),
    derived("gpu.min_rocm_num", "number", "version", "that ROCm as a version number"),
    derived("gpu.compute_capability", "string", "", "the GPU's compute capability (NVIDIA)"),
    derived("gpu.cuda_dropped", "string", "", "first CUDA without support for the GPU"),
    derived("gpu.cuda_dropped_num", "number", "version", "that CUDA as a version number"),
    derived("platform", "string", "", "the server's cpu.arch, where the wheel tables use it"),
    derived("wheel_min_cc", "string", "", "lowest compute capability the official wheel holds code for"),
    derived(
        "wheel_has_arch", "boolean", "",
        "the official wheel holds code for the GPU's compute capability (absent: the tables do not say)",
    ),
    derived("wheel_arch_note", "string", "", "the wheel table's note on what the wheel leaves out"),
    derived("arch_min_cuda", "string", "", "oldest framework CUDA build that runs the GPU's architecture"),
    derived("arch_min_cuda_num", "number", "version", "that CUDA as a version number"),
    derived("arch_min_release", "string", "", "first framework release that runs the architecture"),
    derived("arch_min_release_num", "number", "version", "that release as a version number"),
    derived("arch_warn_from", "string", "", "first release whose support for the architecture is in doubt"),
    derived("arch_warn_from_num", "number", "version", "that release as a version number"),
    derived("arch_note", "string", "", "the table's note on the architecture"),
)


def framework_values(
    name: str,
    install: m.FrameworkInstall,
    software: m.Software,
    gpu: m.GpuModel | None,
    kb: Knowledge,
    platform: str | None = None,
) -> Values:
    """One installed framework: its release and build against the tables and the GPU."""
    fw = kb.frameworks.get(name)
    version = install.version
    parsed = parse_version(version)
    values: Values = {
        "name": name,
        "version": version,
        "source": install.source,
        "known": fw is not None,
        "gpu.model": gpu.name if gpu else None,
        **_versioned("driver", software.driver),
    }
    if fw is None or parsed is None:
        values["release_known"] = False if fw is not None else None
        return values
    row = fw.release(version)
    release = str(release_line(version))
    build = _build(fw, row, install, software, kb)
    values.update(
        {
            "canonical": fw.name,
            **_versioned("release", release),
            "release_known": row is not None,
            **_build_values(build, row, kb),
            **_arch_values(fw, gpu, build, install.source == "pypi"),
            **(_wheel_values(fw, release, gpu, build, platform) if install.source == "pypi" else {}),
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


# ---------------------------------------------------------------- containers
# The server's GPU as a container, engine or JAX fact sees it (their rules
# compare the stack's CUDA with what the GPU needs and what dropped it).
def _gpu_fields(gpu: m.GpuModel | None) -> Values:
    if gpu is None:
        return {}
    return {
        "gpu.model": gpu.name,
        "gpu.vendor": gpu.vendor,
        "gpu.architecture": gpu.architecture,
        "gpu.form_factor": gpu.form_factor,
        "gpu.forward_compatible": gpu.forward_compatible,
        **_versioned("gpu.min_cuda", gpu.min_cuda),
        **_versioned("gpu.cuda_dropped", gpu.cuda_dropped),
    }


_GPU_DOCS = (
    derived("gpu.model", "string", "", "the server's GPU model"),
    derived("gpu.vendor", "string", "", "NVIDIA | AMD"),
    derived("gpu.architecture", "string", "", "GPU architecture"),
    derived("gpu.form_factor", "string", "", "sxm | pcie | oam | embedded"),
    derived("gpu.forward_compatible", "boolean", "", "CUDA forward compatibility works on the GPU"),
    derived("gpu.min_cuda", "string", "", "first CUDA that supports the GPU"),
    derived("gpu.min_cuda_num", "number", "version", "that CUDA as a version number"),
    derived("gpu.cuda_dropped", "string", "", "first CUDA without support for the GPU"),
    derived("gpu.cuda_dropped_num", "number", "version", "that CUDA as a version number"),
)


# What container_values gives: the fields of a `container` fact.
CONTAINER_FIELDS = (
    derived("server", "string", "", "server that runs the container"),
    derived("image", "string", "", "image reference as written"),
    derived("repository", "string", "", "the image's repository (Docker Hub names without docker.io/)"),
    derived("tag", "string", "", "the image's tag (absent: none, which Docker reads as latest)"),
    derived("digest", "string", "", "the image's digest, where the reference pins one"),
    derived("latest", "boolean", "", "the image is not pinned: tag latest or none, and no digest"),
    derived("known", "boolean", "", "a row of the container table matches the image"),
    derived("image_unverified", "boolean", "", "the table marks what the image brings unverified"),
    derived(
        "image_row_from", "string", "",
        "where the row that matched is written (file:line), when it is one of yours (docs/knowledge.md)",
    ),
    derived(
        "image_row_overrides", "string", "",
        "where a built-in row that matches the image too is written: your row is used instead",
    ),
    derived("framework", "string", "", "the framework the image brings"),
    derived("framework_version", "string", "", "its version, where the tag or the table gives it"),
    derived("cuda", "string", "", "CUDA the image brings (declared, the image's tag or row, or the "
       "framework's tested build)"),
    derived("cuda_num", "number", "version", "that CUDA as a version number"),
    derived("cuda_from", "string", "", "declared | image | tested build"),
    derived("cuda_known", "boolean", "", "the CUDA table knows the image's CUDA"),
    derived("cudnn", "string", "", "cuDNN the image brings (declared, or from the tag or table)"),
    derived("nccl", "string", "", "NCCL the image brings (declared, or from the table)"),
    derived("cuda_full_driver", "string", "", "full-feature minimum driver of the image's CUDA"),
    derived("cuda_full_driver_num", "number", "version", "that driver as a version number"),
    derived("cuda_driver_floor", "string", "", "minor-version-compatibility minimum driver of its CUDA"),
    derived("cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    derived("cuda_driver_unverified", "boolean", "", "the tables mark that CUDA's driver minimum unverified"),
    derived(
        "image_min_driver", "string", "",
        "driver the image's release notes ask for (forward compatibility)",
    ),
    derived("image_min_driver_num", "number", "version", "that driver as a version number"),
    derived("driver", "string", "", "the server's NVIDIA driver"),
    derived("driver_num", "number", "version", "that driver as a version number"),
    derived("driver_branch", "number", "", "its branch (570)"),
    derived(
        "branch_forward_compatible", "boolean", "",
        "the driver tables list the branch as forward-compatible (absent: no source says)",
    ),
    derived(
        "forward_compatible", "boolean", "",
        "the image's CUDA runs on the driver through forward compatibility: a data-center GPU, a branch "
        "not listed as unsupported, and the driver the image asks for (or a listed branch)",
    ),
    *_GPU_DOCS,
)


def _image_versions(container: m.Container, kb: Knowledge) -> Values:
    """What the image brings: the table's row (its tag or fixed values, or the
    framework's tested build), with the inventory's declared values over them."""
    repository, tag, digest = m.image_parts(container.image)
    values: Values = {
        "image": container.image,
        "repository": repository,
        "tag": tag,
        "digest": digest,
        "latest": digest is None and tag in (None, "latest"),
        "known": False,
    }
    found = kb.containers.resolve(repository, tag)
    brought: dict[str, str] = {}
    if found is not None:
        row, brought = found
        values.update({"known": True, "image_unverified": not row.verified, "framework": row.framework})
        if row.origin is not None and not row.origin.builtin:
            values["image_row_from"] = row.origin.where()
            overridden = kb.containers.overridden(row, repository, tag) if tag else None
            if overridden is not None and overridden.origin is not None:
                values["image_row_overrides"] = overridden.origin.where()
        values.update(_versioned("image_min_driver", row.min_driver))
        fw = kb.frameworks.get(row.framework) if row.framework else None
        release = fw.release(brought["version"]) if fw and "version" in brought else None
        if release is not None and "cuda" not in brought and release.cuda:
            # One tested build per release (TensorFlow): the image is taken to be it.
            tested = {"cuda": release.cuda[0], **({"cudnn": release.cudnn} if release.cudnn else {})}
            brought = {**tested, **brought}
            values["cuda_from"] = "tested build"
        values["framework_version"] = brought.get("version")
    if "cuda" in brought and "cuda_from" not in values:
        values["cuda_from"] = "image"
    declared = {k: getattr(container, k) for k in ("cuda", "cudnn", "nccl") if getattr(container, k)}
    if "cuda" in declared:
        values["cuda_from"] = "declared"
    brought = {**brought, **declared}
    values.update({"cudnn": brought.get("cudnn"), "nccl": brought.get("nccl")})
    values.update(_versioned("cuda", brought.get("cuda")))
    return values


def container_values(
    container: m.Container, software: m.Software, gpu: m.GpuModel | None, kb: Knowledge
) -> Values:
    """One container image on a server: what it brings against the host driver and GPU."""
    values = _image_versions(container, kb)
    driver = parse_version(software.driver)
    branch = driver.release[0] if driver else None
    row = kb.cuda.row(values.get("cuda"))
    values.update({**_versioned("driver", software.driver), "driver_branch": branch, **_cuda_values("", row)})
    if values.get("cuda") is not None:
        values["cuda_known"] = row is not None and values["cuda_num"] is not None
    listed = kb.drivers.get(branch)
    values["branch_forward_compatible"] = listed.forward_compatible if listed else None
    values.update(_gpu_fields(gpu))
    if gpu is not None and driver is not None and values.get("cuda") is not None:
        values["forward_compatible"] = _forward_compatible(values, gpu, listed)
    return values


def _forward_compatible(values: Values, gpu: m.GpuModel, branch: DriverBranch | None) -> bool:
    """Whether the image's cuda-compat package runs its CUDA on the host driver:
    only on data-center GPUs, never on a branch listed as unsupported, and on
    the driver the image's release notes ask for (without one: on a branch the
    tables list as forward-compatible)."""
    if not gpu.forward_compatible or gpu.vendor != "NVIDIA":
        return False
    if branch is not None and branch.forward_compatible is False:
        return False
    wanted, driver = values.get("image_min_driver_num"), values.get("driver_num")
    if wanted is not None:
        return driver is not None and driver >= wanted
    return branch is not None and branch.forward_compatible is True


# ---------------------------------------------------------------- inference engines
_DRIVER_DOCS = (
    derived("cuda_full_driver", "string", "", "full-feature minimum driver of that CUDA"),
    derived("cuda_full_driver_num", "number", "version", "that driver as a version number"),
    derived("cuda_driver_floor", "string", "", "minor-version-compatibility minimum driver of that CUDA"),
    derived("cuda_driver_floor_num", "number", "version", "that driver as a version number"),
    derived("cuda_driver_unverified", "boolean", "", "the tables mark that CUDA's driver minimum unverified"),
    derived("driver", "string", "", "the server's NVIDIA driver"),
    derived("driver_num", "number", "version", "that driver as a version number"),
)

# What engine_values gives: the fields of an `engine` fact.
ENGINE_FIELDS = (
    derived("server", "string", "", "server the engine is installed on"),
    derived("name", "string", "", "the engine: vllm | sglang | tensorrt_llm (its software field)"),
    derived("description", "string", "", "the engine's name as its project writes it (vLLM)"),
    derived("version", "string", "", "version as written, with its build tag (0.11.0+cu126)"),
    derived("source", "string", "", "where the install comes from: pypi | conda-forge | container | vendor"),
    derived("known", "boolean", "", "the engine tables know the engine"),
    derived("release_known", "boolean", "", "the engine tables know this exact release"),
    derived("release_unverified", "string", "", "the values of the release the tables mark unverified"),
    derived("release_note", "string", "", "the table's note on the release"),
    derived("torch", "string", "", "the torch release the engine pins (its requirements)"),
    derived("torch_declared", "string", "", "the torch the server declares (software.frameworks)"),
    derived(
        "torch_matches", "boolean", "",
        "the declared torch is the pinned release (absent: either is unknown, or the install is not PyPI's)",
    ),
    derived("tensorrt", "string", "", "the TensorRT the release depends on (TensorRT-LLM)"),
    derived(
        "cuda", "string", "",
        "CUDA the engine runs: its build tag, its wheel's CUDA, the declared torch's build or the pinned "
        "torch's PyPI default build",
    ),
    derived("cuda_num", "number", "version", "that CUDA as a version number"),
    derived(
        "cuda_from", "string", "",
        "where that CUDA comes from: variant | engine wheel | declared torch | pinned torch's PyPI default",
    ),
    derived("cuda_known", "boolean", "", "the engine's CUDA is known and in the CUDA table"),
    *_DRIVER_DOCS,
    derived("driver_branch", "number", "", "the driver's branch (570)"),
    derived(
        "forward_compatible", "boolean", "",
        "the engine's CUDA runs on the driver through forward compatibility: only an engine run from a "
        "container image, on a data-center GPU and a branch listed as forward-compatible (a wheel: false)",
    ),
    *_GPU_DOCS,
)


def _declared_torch(software: m.Software, kb: Knowledge) -> m.FrameworkInstall | None:
    torch = kb.frameworks.get("pytorch")
    return next((i for n, i in software.frameworks.items() if kb.frameworks.get(n) is torch), None)


def _engine_cuda(
    engine_variants: bool, install: m.EngineInstall, cuda: str | None, torch_pin: str | None,
    declared: m.FrameworkInstall | None, kb: Knowledge,
) -> tuple[str | None, str | None]:
    """The CUDA an engine install runs, and where it comes from: a build tag
    (0.11.0+cu126), its PyPI wheel's own CUDA, the declared torch's build when it
    is the pinned one, or the pinned torch's PyPI default build."""
    parsed = parse_version(install.version)
    if engine_variants and parsed is not None and parsed.local:
        return _variant_cuda(kb, parsed.local), "variant"
    if cuda is not None:
        return cuda, "engine wheel"
    declared_tag = parse_version(declared.version) if declared else None
    if declared is not None and declared_tag is not None and declared_tag.local and (
        torch_pin is None or same_release(torch_pin, declared.version)
    ):
        return _variant_cuda(kb, declared_tag.local), "declared torch"
    torch = kb.frameworks.get("pytorch")
    row = torch.release(torch_pin) if torch and torch_pin else None
    if row is not None and row.pypi_default is not None:
        return row.pypi_default, "pinned torch's PyPI default"
    return None, None


def engine_values(
    name: str, install: m.EngineInstall, software: m.Software, gpu: m.GpuModel | None, kb: Knowledge
) -> Values:
    """One installed inference engine: its release's torch pin against the
    server's torch, and the CUDA it runs against the driver and the GPU."""
    engine = kb.engines.get(name)
    driver = parse_version(software.driver)
    values: Values = {
        "name": name,
        "version": install.version,
        "source": install.source,
        "known": engine is not None,
        **_versioned("driver", software.driver),
        "driver_branch": driver.release[0] if driver else None,
        **_gpu_fields(gpu),
    }
    if engine is None:
        return values
    row = engine.release(install.version)
    values.update({"description": engine.description, "release_known": row is not None})
    if row is None:
        return values
    declared = _declared_torch(software, kb)
    pypi = install.source == "pypi"
    values.update({
        "release_unverified": ", ".join(row.unverified) or None,
        "release_note": row.notes,
        "torch": row.torch,
        "torch_declared": declared.version if declared else None,
        "tensorrt": row.tensorrt,
    })
    if pypi and row.torch is not None and declared is not None:
        values["torch_matches"] = same_release(row.torch, declared.version)
    cuda, cuda_from = _engine_cuda(
        engine.variants, install, row.cuda, row.torch, declared if pypi else None, kb
    )
    cuda_row = kb.cuda.row(cuda)
    values.update({**_versioned("cuda", cuda), "cuda_from": cuda_from, **_cuda_values("", cuda_row)})
    values["cuda_known"] = cuda_row is not None and values["cuda_num"] is not None
    if gpu is not None and driver is not None:
        # A wheel runs on the host driver as it is; an engine image brings
        # cuda-compat, as any CUDA image does (the tables give no release notes
        # for it, so only a branch listed as forward-compatible counts).
        container = install.source == "container"
        values["forward_compatible"] = container and _forward_compatible(
            values, gpu, kb.drivers.get(driver.release[0])
        )
    return values


# ---------------------------------------------------------------- JAX
# What jax_values gives: the fields of a `jax` fact.
JAX_FIELDS = (
    derived("server", "string", "", "server JAX is installed on"),
    derived("version", "string", "", "the jax version as written"),
    derived("plugin", "string", "", "the CUDA plugin: cuda12 | cuda13 | cuda12-local | cuda13-local"),
    derived("plugin_cuda", "string", "", "the plugin's CUDA major: cuda12 | cuda13"),
    derived("local", "boolean", "", "a -local plugin: it runs on the host's (or image's) CUDA, cuDNN, NCCL"),
    derived("release_known", "boolean", "", "the JAX tables know the release"),
    derived("plugin_known", "boolean", "", "the JAX tables have the plugin for the release"),
    derived("cuda", "string", "", "the oldest CUDA the plugin runs (its major's driver floor applies)"),
    derived("cuda_num", "number", "version", "that CUDA as a version number"),
    derived("cuda_major", "number", "", "the plugin's CUDA major (12, 13)"),
    *_DRIVER_DOCS,
    derived("cudnn", "string", "", "the oldest cuDNN the plugin runs"),
    derived("cudnn_num", "number", "version", "that cuDNN as a version number"),
    derived("cudnn_major", "number", "", "the major of the oldest cuDNN the plugin runs (9)"),
    derived("cudnn_below", "string", "", "the cuDNN major the plugin no longer runs (10.0)"),
    derived("cudnn_below_major", "number", "", "that major (10)"),
    derived("cudnn_below_num", "number", "version", "that cuDNN as a version number"),
    derived("nccl", "string", "", "the oldest NCCL the plugin runs (multi-GPU work)"),
    derived("nccl_num", "number", "version", "that NCCL as a version number"),
    derived("plugin_unverified", "boolean", "", "the tables mark the plugin's requirements unverified"),
    derived("host_cuda", "string", "", "a -local plugin: the CUDA it finds (software.cuda, or the image's)"),
    derived("host_cuda_num", "number", "version", "that CUDA as a version number"),
    derived("host_cuda_major", "number", "", "that CUDA's major"),
    derived("host_cudnn", "string", "", "a -local plugin: the cuDNN it finds (software.cudnn, or image's)"),
    derived(
        "host_cudnn_num", "number", "version",
        "that cuDNN as a version number (absent when only its major is known, cudnn9)",
    ),
    derived("host_cudnn_major", "number", "", "that cuDNN's major"),
    derived("host_nccl", "string", "", "a -local plugin: the NCCL it finds (software.nccl, or the image's)"),
    derived("host_nccl_num", "number", "version", "that NCCL as a version number"),
    derived("libraries_from", "string", "", "where host_cuda / host_cudnn / host_nccl come from"),
    *_GPU_DOCS,
    derived("gpu.system_devices", "number", "", "GPUs of the system as software sees them"),
)


def _libraries(software: m.Software, kb: Knowledge) -> tuple[dict[str, str], str | None]:
    """The CUDA, cuDNN and NCCL a -local plugin finds: the server's declared
    ones, else those of the only container image the server runs."""
    declared = {k: getattr(software, k) for k in ("cuda", "cudnn", "nccl") if getattr(software, k)}
    if declared or len(software.containers) != 1:
        return declared, "declared" if declared else None
    image = _image_versions(software.containers[0], kb)
    brought = {k: image[k] for k in ("cuda", "cudnn", "nccl") if image.get(k)}
    return brought, f"container image {software.containers[0].image}" if brought else None


def jax_values(install: m.JaxInstall, software: m.Software, gpu: m.GpuModel | None, devices: int | None,
               kb: Knowledge) -> Values:
    """JAX and its CUDA plugin: the driver the plugin's CUDA family needs and,
    for a -local plugin, the CUDA, cuDNN and NCCL it finds."""
    plugin = install.plugin
    major = plugin.removesuffix("-local") if plugin else None
    values: Values = {
        "version": install.version,
        "plugin": plugin,
        "plugin_cuda": major,
        "local": plugin.endswith("-local") if plugin else None,
        "release_known": kb.jax.release(install.version) is not None,
        **_versioned("driver", software.driver),
        **_gpu_fields(gpu),
        "gpu.system_devices": devices,
    }
    row = kb.jax.plugin(major, install.version) if major else None
    if major is not None:
        values["plugin_known"] = row is not None
    if row is None:
        return values
    cuda = parse_version(row.cuda)
    values.update({
        **_versioned("cuda", row.cuda),
        "cuda_major": cuda.release[0] if cuda else None,
        **_cuda_values("", kb.cuda.row(row.cuda)),
        **_versioned("cudnn", row.cudnn),
        "cudnn_major": Version(row.cudnn).release[0],
        **_versioned("cudnn_below", row.cudnn_below),
        "cudnn_below_major": Version(row.cudnn_below).release[0],
        **_versioned("nccl", row.nccl),
        "plugin_unverified": not row.verified,
    })
    if values["local"]:
        found, where = _libraries(software, kb)
        host_cuda, host_cudnn = parse_version(found.get("cuda")), parse_version(found.get("cudnn"))
        values.update({
            "libraries_from": where,
            **_versioned("host_cuda", found.get("cuda")),
            "host_cuda_major": host_cuda.release[0] if host_cuda else None,
            "host_cudnn": found.get("cudnn"),
            # cudnn9 (an image tag) says the major alone: it cannot be ordered against 9.8.
            "host_cudnn_num": version_number(found.get("cudnn")) if host_cudnn and len(host_cudnn.release) > 1
            else None,
            "host_cudnn_major": host_cudnn.release[0] if host_cudnn else None,
            **_versioned("host_nccl", found.get("nccl")),
        })
    return values
