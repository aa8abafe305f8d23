"""Workload fit figures: GPU memory required vs available, GPUs, and a
time-to-train estimate, per workload over the servers that run it (numpy).

Memory (decimal GB, like the catalog): training and fine-tuning keep their
states (full: 16 bytes a parameter; LoRA / QLoRA: the frozen base plus
adapters) sharded over every GPU of the job (ZeRO-3 / FSDP), and on each GPU
a whole data-parallel rank's activations and the runtime: the per-GPU floor.
Inference keeps the weights at the workload's precision plus the KV cache of
its sessions within each one server. Where the model's shape is not given, a
planning allowance stands for the activations or the KV cache. An MI250X
counts as two 64 GB GPUs, as software sees it. The factors are in
rules/knowledge/fit.yaml, the formulas in docs/workload-fit.md; rules in
rules/workload.yaml compare the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from checker.core.carried import Carried
from checker.derive.carried_columns import Columns, per_item
from checker.derive.fields import derived
from checker.derive.knowledge import FitModel
from checker.load import models as m
from checker.load.build import ServerEntry, server_fields

_SECONDS_PER_DAY = 86_400.0
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ServerGpus:
    """The per-server columns the aggregation reads (one row per server)."""

    workload: npt.NDArray[np.int64]  # index into the workloads, -1 for none
    devices: Floats  # logical GPUs of the whole server or system
    # Logical GPUs one model instance may span within a server (the memory of
    # `server` scope): a server's GPUs; a rack-scale system's NVLink domain
    # (network.nvlink_domain), else one compute tray.
    domain: Floats
    nodes: Floats  # nodes software sees: compute trays, else 1
    device_gb: Floats  # memory of one logical GPU (nan without a GPU)
    tflops: Floats  # dense BF16 (FP16 where there is no BF16) per logical GPU, nan if unknown
    tflops_unverified: npt.NDArray[np.bool_]
    # Dense FP8 per logical GPU where the catalog gives it, else the BF16 peak:
    # what an fp8 workload runs at.
    fp8_tflops: Floats
    fp8_unverified: npt.NDArray[np.bool_]
    fp8_used: npt.NDArray[np.bool_]  # the FP8 figure (not the BF16 fallback)
    pcie_only: npt.NDArray[np.bool_]  # GPUs without NVLink or another fast link between them
    # Per workload index: what its GPU models support (precision_values).
    precision: Mapping[int, dict[str, Any]] = field(default_factory=dict)


_DTYPES = (np.int64, *(np.float64,) * 4, np.float64, np.bool_, np.float64, np.bool_, np.bool_, np.bool_)


def server_columns(
    servers: Sequence[ServerEntry], gpus: Mapping[str, m.GpuModel], workloads: Sequence[str],
    carried: Carried | None = None,
) -> ServerGpus:
    """The columns of `servers` running `workloads` on GPUs of `gpus`. `carried`:
    the resident process's (checker.core.carried), where a server that is the
    last command's (the same entry: it holds the server's model) has the row it
    had, while the GPU models and the workloads are what they were."""
    index = {name: i for i, name in enumerate(workloads)}

    def rows(some: Sequence[int]) -> Columns:
        return _columns([servers[i] for i in some], gpus, index)

    arrays = per_item(carried, "workload fit columns", servers, (index, list(gpus.items())), rows)
    models = arrays.pop("gpu_model")
    ran = zip(arrays["workload"].tolist(), models, strict=True)
    pairs = {(w, g) for w, g in ran if w >= 0 and g is not None}
    by_workload: dict[int, list[m.GpuModel]] = {}
    for i, name in sorted(pairs):
        if name in gpus:
            by_workload.setdefault(i, []).append(gpus[name])
    return ServerGpus(**arrays, precision={i: precision_values(g) for i, g in by_workload.items()})


_NAMES = [f.name for f in fields(ServerGpus)][: len(_DTYPES)]


def _columns(
    servers: Sequence[ServerEntry], gpus: Mapping[str, m.GpuModel], index: Mapping[str, int]
) -> Columns:
    """ServerGpus' arrays of `servers`, and each one's GPU model name (`gpu_model`, None: no GPU)."""
    # A row reads the server's workload, GPU set-up, network and trays only: worked
    # out once per distinct set of those (the loader shares equal parts, so their
    # identities tell them apart; the columns hold them alive while this runs).
    workload, gpu, network, trays = server_fields(servers, "workload", "gpu", "network", "trays")
    keys = list(zip(workload, map(id, gpu), map(id, network), trays, strict=True))
    # Each distinct key numbered, with a server that has it (its last: all have the same parts).
    last = dict(zip(keys, range(len(keys)), strict=True))
    number = {key: n for n, key in enumerate(last)}
    firsts = list(last.values())
    rows = [_row((workload[i], gpu[i], network[i], trays[i]), gpus, index) for i in firsts]
    # Each column made of the distinct rows, then spread to every server by its key's number in numpy.
    at = np.fromiter(map(number.__getitem__, keys), np.intp, len(keys))
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(_DTYPES)
    arrays = zip(_NAMES, columns, _DTYPES, strict=True)
    models = [gpu[i].model if gpu[i] else None for i in firsts]
    return {
        **{name: np.array(c, dtype=t)[at] for name, c, t in arrays},
        "gpu_model": list(map(models.__getitem__, at.tolist())),
    }


def _cc(gpu: m.GpuModel) -> float:
    """Compute capability as a number rules compare: 8.9 -> 8.9, 10.3 -> 10.3
    (one digit of minor version, as every NVIDIA compute capability has)."""
    major, _, minor = str(gpu.compute_capability).partition(".")
    return int(major) + int(minor or 0) / 10


# AMD targets without FP8 (the team reference: MI250X, gfx90a, has no FP8).
NO_FP8_TARGETS = ("gfx90a",)


def precision_values(gpus: Sequence[m.GpuModel]) -> dict[str, Any]:
    """The lowest and highest compute capability among the NVIDIA GPU models
    of a workload's servers (with a model that has each), and an AMD model
    without FP8: what the precision rules compare."""
    nvidia = sorted((g for g in gpus if g.compute_capability is not None), key=lambda g: _cc(g))
    no_fp8 = [g.name for g in gpus if g.llvm_target in NO_FP8_TARGETS]
    if not nvidia:
        return {"gpu_no_fp8_model": no_fp8[0] if no_fp8 else None}
    low, high = nvidia[0], nvidia[-1]
    return {
        "gpu_cc_min": _cc(low),
        "gpu_cc_min_model": low.name,
        "gpu_cc_min_architecture": low.architecture,
        "gpu_cc_max": _cc(high),
        "gpu_cc_max_model": high.name,
        "gpu_no_fp8_model": no_fp8[0] if no_fp8 else None,
    }


def _pcie_only(network: m.Network | None, gpu: m.GpuModel) -> bool:
    """No fast link between the GPUs: network.nvlink says so, else the catalog
    interconnect is PCIe or none (NVLink, a bridge and Infinity Fabric are links)."""
    nvlink = network.nvlink if network else None
    return not nvlink if nvlink is not None else gpu.interconnect in ("pcie", "none")


def _row(
    key: tuple[str | None, m.GpuRef | None, m.Network | None, int | None],
    gpus: Mapping[str, m.GpuModel],
    index: Mapping[str, int],
) -> tuple[Any, ...]:
    """The row of a server with this workload, GPU set-up, network and trays."""
    workload_name, ref, network, trays = key
    workload = index.get(workload_name, -1) if workload_name else -1
    gpu = gpus.get(ref.model) if ref else None
    nodes = float(m.nodes_of(trays))
    if ref is None or gpu is None:
        return workload, 0.0, 0.0, nodes, np.nan, np.nan, False, np.nan, False, False, False
    peak = gpu.bf16_tflops or gpu.fp16_tflops
    field = "bf16_tflops" if gpu.bf16_tflops else "fp16_tflops"
    per_device = peak / gpu.logical_gpus if peak else np.nan
    fp8 = gpu.fp8_tflops / gpu.logical_gpus if gpu.fp8_tflops else per_device
    fp8_unverified = ("fp8_tflops" if gpu.fp8_tflops else field) in gpu.unverified
    per_node = float(ref.count * gpu.logical_gpus)
    devices = per_node * nodes
    domain = network.nvlink_domain if network else None
    span = devices if trays is None else min(float(domain), devices) if domain else per_node
    unverified = field in gpu.unverified
    return (workload, devices, span, nodes, gpu.memory_gb / gpu.logical_gpus, per_device, unverified,
            fp8, fp8_unverified, bool(gpu.fp8_tflops), _pcie_only(network, gpu))


def _group(cols: ServerGpus, n: int) -> dict[str, npt.NDArray[Any]]:
    """Per-workload sums, minima and maxima over its servers."""
    mask = cols.workload >= 0
    w = cols.workload[mask]
    devices, device_gb, tflops = cols.devices[mask], cols.device_gb[mask], cols.tflops[mask]
    domain = cols.domain[mask]
    server_gb = domain * np.nan_to_num(device_gb)
    out: dict[str, npt.NDArray[Any]] = {
        "servers": np.bincount(w, minlength=n).astype(np.float64),
        "nodes": np.bincount(w, weights=cols.nodes[mask], minlength=n),
        "gpus": np.bincount(w, weights=devices, minlength=n),
        "memory_gb": np.bincount(w, weights=server_gb, minlength=n),
        # nan where any server's peak is unknown: no estimate rather than a wrong one
        "peak_tflops": np.bincount(w, weights=np.where(devices > 0, devices * tflops, 0.0), minlength=n),
        "unverified": np.bincount(w, weights=cols.tflops_unverified[mask] & (devices > 0), minlength=n),
        "peak_fp8_tflops": np.bincount(
            w, weights=np.where(devices > 0, devices * cols.fp8_tflops[mask], 0.0), minlength=n
        ),
        "fp8_unverified": np.bincount(w, weights=cols.fp8_unverified[mask] & (devices > 0), minlength=n),
        "fp8_used": np.bincount(w, weights=cols.fp8_used[mask] & (devices > 0), minlength=n),
        "pcie_only": np.bincount(w, weights=cols.pcie_only[mask] & (devices > 0), minlength=n),
    }
    for name, values, fn, start in (
        ("gpus_per_server_min", domain, np.minimum, np.inf),
        ("server_memory_gb_min", server_gb, np.minimum, np.inf),
        ("gpu_memory_gb_min", np.where(devices > 0, device_gb, np.inf), np.minimum, np.inf),
        ("gpu_memory_gb_max", np.where(devices > 0, device_gb, -np.inf), np.maximum, -np.inf),
    ):
        acc = np.full(n, start)
        fn.at(acc, w, values)
        out[name] = acc
    return out


@dataclass(frozen=True)
class Memory:
    """What a workload keeps in GPU memory, before it is spread over GPUs."""

    mode: str | None  # training and fine-tuning: full | lora | qlora
    bytes_per_param: float  # the states (training) or the weights (inference)
    model_gb: float  # params x bytes_per_param
    allowance: float | None  # the planning allowance, where the shape does not give the figure
    activations_gb: float | None = None  # per data-parallel rank (training)
    kv_bytes_per_token: float | None = None  # inference, from the shape
    kv_cache_gb: float | None = None  # inference: its sessions' KV cache


def kv_bytes_per_token(workload: m.Workload, fit: FitModel) -> float | None:
    """2 x layers x kv_heads x head_dim x bytes (or layers x kv_elements x bytes)."""
    elements = workload.kv_elements
    if elements is None and workload.kv_heads is not None and workload.head_dim is not None:
        elements = 2 * workload.kv_heads * workload.head_dim
    if elements is None or workload.layers is None:
        return None
    precision = workload.kv_precision or ("fp32" if workload.precision == "fp32" else "bf16")
    return float(elements * workload.layers * fit.weights.bytes[precision])


def memory(workload: m.Workload, fit: FitModel) -> Memory:
    task = fit.tasks[workload.task]
    n = workload.params_b  # billions: bytes per parameter x n is GB
    if workload.task == "inference":
        per_param = fit.weights.bytes[workload.precision]
        per_token = kv_bytes_per_token(workload, fit)
        if per_token is None or workload.context_len is None:
            return Memory(None, per_param, n * per_param, task.allowance, kv_bytes_per_token=per_token)
        tokens = workload.context_len * (workload.concurrency or 1)
        kv = per_token * tokens / 1e9
        return Memory(None, per_param, n * per_param, None, kv_bytes_per_token=per_token, kv_cache_gb=kv)
    mode = workload.mode or "full"
    state = task.state_bytes or 16.0
    adapter = fit.modes.get(mode) if mode != "full" else None
    per_param = state if adapter is None else adapter.base_bytes + adapter.adapter_fraction * state
    h, layers, s = workload.hidden_size, workload.layers, workload.seq_len
    if h is None or layers is None or s is None:
        return Memory(mode, per_param, n * per_param, task.allowance)
    act = fit.activations
    tokens = s * (workload.micro_batch or 1)
    activations = (act.checkpoint_bytes * layers + act.layer_bytes) * tokens * h / 1e9
    return Memory(mode, per_param, n * per_param, None, activations_gb=activations)


def _required_gb(mem: Memory) -> float:
    """Memory needed without the per-GPU terms (what one job holds in all)."""
    return mem.model_gb * (1 + (mem.allowance or 0)) + (mem.kv_cache_gb or 0)


def flops_per_param_token(workload: m.Workload, fit: FitModel) -> float:
    """6 (forward and backward of every weight), about 4 with adapters (no
    weight gradients of the frozen base)."""
    adapters = workload.mode in ("lora", "qlora")
    return fit.estimate.lora_flops_per_param_token if adapters else fit.estimate.flops_per_param_token


def _train_days(workload: m.Workload, peak_tflops: float, fit: FitModel) -> float | None:
    if workload.task == "inference" or workload.tokens_b is None or not np.isfinite(peak_tflops):
        return None
    if peak_tflops <= 0:
        return None
    n = workload.active_params_b or workload.params_b
    flops = flops_per_param_token(workload, fit) * n * 1e9 * workload.tokens_b * 1e9
    return float(flops / (peak_tflops * 1e12 * fit.estimate.mfu) / _SECONDS_PER_DAY)


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


# What workload_values gives for each workload.
WORKLOAD_FIT_FIELDS = (
    derived("memory_scope", "string", "", "job: sharded over all its GPUs; server: within each server"),
    derived("training_mode", "string", "", "training and fine-tuning: full | lora | qlora (default full)"),
    derived(
        "bytes_per_param", "number", "bytes",
        "training: states per parameter (full: 16, lora: 2 + adapters, qlora: 0.56 + adapters); "
        "inference: the weights at the workload's precision",
    ),
    derived("model_memory_gb", "number", "GB", "params_b x bytes_per_param: the states or the weights"),
    derived("memory_allowance_pct", "number", "%", "activation / KV-cache allowance in memory_required_gb, "
       "used only where the model's shape does not give the figure (a planning default, unverified)"),
    derived(
        "activations_gb", "number", "GB",
        "training: activations per GPU (each data-parallel rank; not sharded), "
        "(2 x layers + 34) x seq_len x micro_batch x hidden_size bytes",
    ),
    derived("runtime_overhead_gb", "number", "GB", "training: CUDA context and kernels on each GPU"),
    derived(
        "memory_per_gpu_floor_gb", "number", "GB",
        "training: model_memory_gb / job_gpu_count (x the allowance without a shape) + activations_gb "
        "+ runtime_overhead_gb: what each GPU of the job holds",
    ),
    derived("kv_bytes_per_token", "number", "bytes", "inference: 2 x layers x kv_heads x head_dim x bytes"),
    derived("kv_tokens", "number", "", "inference: context_len x concurrency"),
    derived("kv_cache_gb", "number", "GB", "inference: kv_bytes_per_token x kv_tokens"),
    derived(
        "memory_required_gb", "number", "GB",
        "GPU memory needed: model_memory_gb + kv_cache_gb (inference), or memory_per_gpu_floor_gb "
        "x job_gpu_count (training); with the allowance where the shape is unknown",
    ),
    derived(
        "memory_available_gb", "number", "GB",
        "GPU memory of the job, or of one model instance: replica_gpus x its smallest GPU's where the"
        " workload declares tensor_parallel / pipeline_parallel, else its smallest server's (a rack-scale"
        " system: of its NVLink domain, network.nvlink_domain, else of one compute tray)",
    ),
    derived(
        "replica_gpus", "number", "",
        "inference: GPUs one model instance spans, tensor_parallel x pipeline_parallel (absent: one server)",
    ),
    derived(
        "replica_spans_servers", "boolean", "",
        "a model instance spans more GPUs than its smallest server has (multi-node serving)",
    ),
    derived("memory_per_gpu_gb", "number", "GB", "memory_required_gb over job_gpu_count"),
    derived("gpu_count", "number", "", "GPUs of all its servers, as software sees them"),
    derived(
        "job_gpu_count", "number", "",
        "GPUs one job uses: all (job scope), one model instance's (replica_gpus), or its smallest server's",
    ),
    derived(
        "gpus_per_server_min", "number", "",
        "GPUs of its smallest server (a rack-scale system: its NVLink domain, else one tray)",
    ),
    derived("node_count", "number", "", "nodes that run it: servers, a rack-scale system's compute trays"),
    derived("gpu_memory_gb_min", "number", "GB", "smallest per-GPU memory among its servers"),
    derived("gpu_memory_gb_max", "number", "GB", "largest per-GPU memory among its servers"),
    derived(
        "peak_tflops", "number", "TFLOPS",
        "dense peak of all its GPUs at peak_precision (absent if one is unknown)",
    ),
    derived(
        "peak_precision", "string", "",
        "fp8: an fp8 workload on GPUs with an FP8 figure (each GPU without one at its BF16 peak); else bf16",
    ),
    derived("mfu", "number", "", "model FLOPs utilisation the estimate assumes"),
    derived("flops_params_b", "number", "billion", "N of the estimate: active_params_b, else params_b"),
    derived("flops_per_param_token", "number", "FLOPs", "6 (full), about 4 (lora, qlora)"),
    derived(
        "train_days", "number", "days",
        "flops_per_param_token x flops_params_b x tokens / (peak_tflops x MFU), training and fine-tuning",
    ),
    derived("estimate_unverified", "boolean", "", "the estimate uses a peak the catalog marks unverified"),
    derived("gpu_cc_min", "number", "", "lowest compute capability among its NVIDIA GPU models (8.9)"),
    derived("gpu_cc_min_model", "string", "", "a GPU model of its servers with gpu_cc_min"),
    derived("gpu_cc_min_architecture", "string", "", "architecture of gpu_cc_min_model"),
    derived("gpu_cc_max", "number", "", "highest compute capability among its NVIDIA GPU models"),
    derived("gpu_cc_max_model", "string", "", "a GPU model of its servers with gpu_cc_max"),
    derived("gpu_no_fp8_model", "string", "", "an AMD GPU model of its servers without FP8 (MI250X, gfx90a)"),
    derived(
        "estimate_pcie_only", "boolean", "",
        "a multi-GPU job with GPUs that exchange gradients over PCIe: the MFU is optimistic",
    ),
)


def workload_values(
    workloads: Sequence[m.Workload], cols: ServerGpus, fit: FitModel
) -> list[dict[str, Any]]:
    """Fit figures for each workload, in order (fact field name -> value)."""
    agg = _group(cols, len(workloads))
    return [
        {**_one(w, {k: float(v[i]) for k, v in agg.items()}, fit), **cols.precision.get(i, {})}
        for i, w in enumerate(workloads)
    ]


def _memory_values(mem: Memory, workload: m.Workload) -> dict[str, Any]:
    tokens = workload.context_len * (workload.concurrency or 1) if workload.context_len else None
    return {
        "training_mode": mem.mode,
        "bytes_per_param": round(mem.bytes_per_param, 4),
        "model_memory_gb": round(mem.model_gb, 2),
        "memory_allowance_pct": round(mem.allowance * 100, 1) if mem.allowance is not None else None,
        "activations_gb": _rounded(mem.activations_gb),
        "kv_bytes_per_token": mem.kv_bytes_per_token,
        "kv_tokens": tokens if mem.kv_cache_gb is not None else None,
        "kv_cache_gb": _rounded(mem.kv_cache_gb),
    }


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def _available_gb(a: Mapping[str, float], job: bool, replica: int | None) -> float:
    """GPU memory a model instance has: the whole job's (sharded), a declared
    replica's (its GPUs at the smallest GPU's memory), or its smallest server's."""
    if job:
        return a["memory_gb"]
    return replica * a["gpu_memory_gb_min"] if replica else a["server_memory_gb_min"]


def _one(workload: m.Workload, a: Mapping[str, float], fit: FitModel) -> dict[str, Any]:
    task = fit.tasks[workload.task]
    mem = memory(workload, fit)
    values = {"memory_scope": task.scope, **_memory_values(mem, workload)}
    if a["servers"] == 0:
        return {**values, "memory_required_gb": round(_required_gb(mem), 2)}
    job = task.scope == "job"
    replica = workload.replica_gpus if not job else None
    gpus = a["gpus"] if job else replica or a["gpus_per_server_min"]
    required = _required_gb(mem)
    floor = None
    if job and gpus:
        overhead = fit.runtime.overhead_gb
        floor = required / gpus + (mem.activations_gb or 0) + overhead
        required = floor * gpus
        values |= {"runtime_overhead_gb": overhead, "memory_per_gpu_floor_gb": round(floor, 2)}
    # MXFP8 runs on the FP8 tensor cores of the GPUs that have it.
    fp8 = workload.precision in ("fp8", "mxfp8") and a["fp8_used"] > 0
    peak = a["peak_fp8_tflops"] if fp8 else a["peak_tflops"]
    days = _train_days(workload, peak, fit)
    estimate: dict[str, Any] = {}
    if days is not None:
        estimate = {
            "flops_params_b": workload.active_params_b or workload.params_b,
            "flops_per_param_token": flops_per_param_token(workload, fit),
            "peak_precision": "fp8" if fp8 else "bf16",
            "estimate_pcie_only": bool(a["pcie_only"] > 0 and gpus > 1),
        }
    return {
        **values,
        "memory_required_gb": round(required, 2),
        "memory_available_gb": round(_available_gb(a, job, replica), 1),
        "replica_gpus": replica,
        "replica_spans_servers": None if replica is None else bool(replica > a["gpus_per_server_min"]),
        "memory_per_gpu_gb": round(required / gpus, 2) if gpus else None,
        "gpu_count": a["gpus"],
        "job_gpu_count": gpus,
        "gpus_per_server_min": a["gpus_per_server_min"],
        "node_count": a["nodes"],
        "gpu_memory_gb_min": _finite(a["gpu_memory_gb_min"]),
        "gpu_memory_gb_max": _finite(a["gpu_memory_gb_max"]),
        "peak_tflops": _finite(peak),
        "mfu": fit.estimate.mfu,
        "train_days": round(days, 1) if days is not None else None,
        "estimate_unverified": bool(a["fp8_unverified" if fp8 else "unverified"]) if estimate else None,
        **estimate,
    }
