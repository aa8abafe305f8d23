"""Workload fit: the worked examples, the aggregation, and the fit rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checker.decide.config import Config
from checker.derive import fit
from checker.derive.knowledge import builtin
from checker.load import models as m
from checker.load.build import Placed, ServerEntry, load, with_shape
from checker.source.parse import Src
from tests.rollout import audit, rules_by_entity

FIT = builtin().fit


def _catalog() -> tuple[dict[str, m.GpuModel], dict[str, m.LanguageModel]]:
    inv, problems = load([])
    assert problems == []
    return ({k: p.value for k, p in inv.gpu_models.items()},
            {k: p.value for k, p in inv.language_models.items()})


GPUS, MODELS = _catalog()


def _entries(servers: list[m.Server]) -> list[ServerEntry]:
    """The servers as the inventory holds them (fit reads their entries)."""
    return [ServerEntry(s, "f", None, Placed(s, "servers.yaml", Src(1, 1))) for s in servers]


def _workload(fields: dict[str, Any]) -> m.Workload:
    wl = m.Workload.model_validate({"name": "w", **fields})
    return with_shape(wl, MODELS[wl.model]) if wl.model else wl


def _figures(workload: dict[str, Any], servers: list[tuple[str, int]]) -> dict[str, Any]:
    """Fit figures of one workload over servers given as (gpu model, count)."""
    wl = _workload(workload)
    models = [
        m.Server.model_validate(
            {"name": f"s{i}", "rack": "R", "gpu": {"model": g, "count": n}, "workload": "w"}
        )
        for i, (g, n) in enumerate(servers)
    ]
    return fit.workload_values([wl], fit.server_columns(_entries(models), GPUS, ["w"]), FIT)[0]


# (id, workload, servers, required GB, available GB, fits). Training is sized
# per GPU (the floor: states / GPUs + activations + 1.3 GB runtime) times the
# GPUs; inference within its smallest server.
WORKED = [
    # 70 x 16 x 1.2 / 8 + 1.3 = 169.3 GB a GPU, 8 x 169.3 = 1354.4 GB
    ("70b-training-bf16-on-8xA100-80", {"task": "training", "params_b": 70, "precision": "bf16"},
     [("a100-sxm-80gb", 8)], 1354.4, 640, False),
    ("7b-bf16-inference-on-one-L40S", {"task": "inference", "params_b": 7, "precision": "bf16"},
     [("l40s", 1)], 16.8, 48, True),
    # 13 x 16 x 1.2 / 4 + 1.3 = 63.7 GB a GPU
    ("13b-fine-tuning-on-4xRTX4090", {"task": "fine-tuning", "params_b": 13, "precision": "bf16"},
     [("rtx-4090", 4)], 254.8, 96, False),
    ("70b-int8-inference-on-8xL40S", {"task": "inference", "params_b": 70, "precision": "int8"},
     [("l40s", 8)], 84, 384, True),
    # 1344 / 96 + 1.3 = 15.3 GB a GPU
    ("70b-training-sharded-over-12xDGX-H100", {"task": "training", "params_b": 70, "precision": "bf16"},
     [("h100-sxm-80gb", 8)] * 12, 1468.8, 7680, True),
    # Inference must fit every server that serves it: the smallest decides.
    ("inference-smallest-server-decides", {"task": "inference", "params_b": 70, "precision": "bf16"},
     [("l40s", 8), ("l40s", 2)], 168, 96, False),
    # An MI250X package is two 64 GB GPUs: 4 packages are 8 GPUs, 512 GB.
    # 20 x 16 x 1.2 / 8 + 1.3 = 49.3 GB a GPU
    ("mi250x-counts-two-gpus", {"task": "training", "params_b": 20, "precision": "bf16"},
     [("mi250x", 4)], 394.4, 512, True),
]


@pytest.mark.parametrize(("workload", "servers", "required", "available", "fits"),
                         [pytest.param(*c[1:], id=c[0]) for c in WORKED])
def test_worked_examples(
    workload: dict[str, Any], servers: list[tuple[str, int]], required: float, available: float, fits: bool
) -> None:
    got = _figures(workload, servers)
    assert got["memory_required_gb"] == pytest.approx(required)
    assert got["memory_available_gb"] == pytest.approx(available)
    assert (got["memory_required_gb"] <= got["memory_available_gb"]) is fits


# (id, workload, servers, expected figures): the cases of issue #24, by hand.
KIB = 1024
SHAPED = [
    # QLoRA: 0.56 B/param 4-bit base + 0.2 % adapters x 16 B = 0.592 B/param;
    # 70 x 0.592 = 41.44 GB, x 1.2 (no shape: allowance) = 49.728, + 1.3 = 51.03 GB < 94.
    ("qlora-70b-on-one-h100-nvl",
     {"task": "fine-tuning", "params_b": 70, "precision": "int4", "mode": "qlora"}, [("h100-nvl", 1)],
     {"bytes_per_param": 0.592, "model_memory_gb": 41.44, "memory_per_gpu_floor_gb": 51.03,
      "gpu_memory_gb_min": 94}),
    # LoRA on a bf16 base: 2 + 0.032 = 2.032 B/param; 8 x 2.032 = 16.256 GB.
    ("lora-8b-on-one-l40s", {"task": "fine-tuning", "params_b": 8, "precision": "bf16", "mode": "lora"},
     [("l40s", 1)], {"bytes_per_param": 2.032, "model_memory_gb": 16.26}),
    # Llama 3.1 8B, 128K context: 2 x 32 x 8 x 128 x 2 B = 128 KiB a token;
    # x 131,072 tokens = 16 GiB = 17.18 GB; + 16 GB of bf16 weights.
    ("8b-at-128k-context",
     {"task": "inference", "params_b": 8, "precision": "bf16", "model": "llama-3.1-8b",
      "context_len": 131072},
     [("l40s", 1)], {"kv_bytes_per_token": 128 * KIB, "kv_cache_gb": 17.18, "memory_required_gb": 33.18}),
    # Llama 3.1 70B, 32 x 8K sessions: 2 x 80 x 8 x 128 x 2 B = 320 KiB a token;
    # x 262,144 tokens = 80 GiB = 85.9 GB; + 140 GB of weights = 225.9 GB > 8 x 24 GB.
    ("70b-32x8k-sessions",
     {"task": "inference", "params_b": 70, "precision": "bf16", "model": "llama-3.1-70b",
      "context_len": 8192, "concurrency": 32},
     [("l4", 8)], {"kv_bytes_per_token": 320 * KIB, "kv_cache_gb": 85.9, "memory_required_gb": 225.9,
                   "memory_available_gb": 192}),
    # An fp8 KV cache halves it: 160 KiB a token.
    ("70b-fp8-kv-cache",
     {"task": "inference", "params_b": 70, "precision": "fp8", "model": "llama-3.1-70b",
      "context_len": 8192, "concurrency": 32, "kv_precision": "fp8"},
     [("h100-sxm-80gb", 8)], {"kv_bytes_per_token": 160 * KIB, "kv_cache_gb": 42.95}),
    # DeepSeek-V3's latent attention: 61 x 576 x 2 B = 70,272 B a token.
    ("deepseek-v3-mla",
     {"task": "inference", "params_b": 671, "precision": "fp8", "model": "deepseek-v3", "context_len": 4096},
     [("h200-sxm-141gb", 8)], {"kv_bytes_per_token": 70272, "model_memory_gb": 671}),
    # 70B over 64 x L4: states 70 x 16 / 64 = 17.5 GB a GPU; activations per rank
    # (2 x 80 + 34) x 4096 x 8192 B = 6.51 GB; + 1.3 GB runtime = 25.31 GB > 24 GB.
    ("70b-on-64xL4-fails-on-the-floor",
     {"task": "training", "params_b": 70, "precision": "bf16", "model": "llama-3.1-70b", "seq_len": 4096},
     [("l4", 8)] * 8, {"activations_gb": 6.51, "memory_per_gpu_floor_gb": 25.31, "gpu_memory_gb_min": 24,
                       "job_gpu_count": 64}),
]


@pytest.mark.parametrize(("workload", "servers", "expected"), [pytest.param(*c[1:], id=c[0]) for c in SHAPED])
def test_shaped_memory(
    workload: dict[str, Any], servers: list[tuple[str, int]], expected: dict[str, Any]
) -> None:
    got = _figures(workload, servers)
    assert {k: got.get(k) for k in expected} == pytest.approx(expected)


def test_activations_do_not_shrink_with_more_gpus() -> None:
    wl = {"task": "training", "params_b": 70, "precision": "bf16", "model": "llama-3.1-70b", "seq_len": 4096}
    small, large = _figures(wl, [("h100-sxm-80gb", 8)] * 8), _figures(wl, [("h100-sxm-80gb", 8)] * 32)
    assert small["activations_gb"] == large["activations_gb"] == 6.51
    assert large["memory_per_gpu_floor_gb"] == pytest.approx(1120 / 256 + 6.51 + 1.3, abs=0.01)


def test_mi250x_gpu_count_and_memory_per_gpu() -> None:
    got = _figures({"task": "training", "params_b": 20, "precision": "bf16"}, [("mi250x", 4)])
    assert (got["gpu_count"], got["gpu_memory_gb_min"]) == (8, 64)


def test_time_to_train_estimate() -> None:
    # 6 x 70e9 x 1e12 FLOPs / (96 x 989e12 x 0.35) s = 146.3 days
    got = _figures({"task": "training", "params_b": 70, "precision": "bf16", "tokens_b": 1000},
                   [("h100-sxm-80gb", 8)] * 12)
    assert got["train_days"] == pytest.approx(146.3) and got["estimate_unverified"] is False
    assert got["peak_tflops"] == 96 * 989


# (id, workload, servers, days, more expected figures)
ESTIMATES = [
    # 6 x 37e9 x 14.8e12 FLOPs / (256 x 989e12 x 0.35) s = 429.1 days (with all 671B: 7,782)
    ("moe-671b-37b-active-on-256xH100",
     {"task": "training", "params_b": 671, "precision": "bf16", "model": "deepseek-v3", "tokens_b": 14800},
     [("h100-sxm-80gb", 8)] * 32, 429.1, {"flops_params_b": 37, "peak_precision": "bf16"}),
    # The same at FP8: 256 x 1979 TFLOPS: 214.5 days
    ("moe-at-fp8",
     {"task": "training", "params_b": 671, "precision": "fp8", "active_params_b": 37, "tokens_b": 14800},
     [("h100-sxm-80gb", 8)] * 32, 214.5, {"peak_precision": "fp8", "peak_tflops": 256 * 1979}),
    # LoRA: 4 x 70e9 x 1e9 / (8 x 989e12 x 0.35) s = 1.2 days
    ("lora-4-flops",
     {"task": "fine-tuning", "params_b": 70, "precision": "bf16", "mode": "lora", "tokens_b": 1},
     [("h100-sxm-80gb", 8)], 1.2, {"flops_per_param_token": 4}),
    # FP8 on an A100 runs at its BF16 peak: 6 x 7e9 x 1e11 / (8 x 312e12 x 0.35) s = 55.6 days
    ("fp8-on-a100-at-bf16",
     {"task": "training", "params_b": 7, "precision": "fp8", "tokens_b": 100}, [("a100-sxm-80gb", 8)], 55.6,
     {"peak_precision": "bf16", "estimate_pcie_only": False}),
    # 8 x L40S over PCIe: 6 x 7e9 x 1e11 / (8 x 362e12 x 0.35) s = 48.0 days, optimistic
    ("pcie-only-is-optimistic",
     {"task": "training", "params_b": 7, "precision": "bf16", "tokens_b": 100}, [("l40s", 8)], 48.0,
     {"estimate_pcie_only": True}),
]


@pytest.mark.parametrize(("workload", "servers", "days", "expected"),
                         [pytest.param(*c[1:], id=c[0]) for c in ESTIMATES])
def test_time_to_train(
    workload: dict[str, Any], servers: list[tuple[str, int]], days: float, expected: dict[str, Any]
) -> None:
    got = _figures(workload, servers)
    assert got["train_days"] == pytest.approx(days)
    assert {k: got.get(k) for k in expected} == expected


def test_no_estimate_without_a_peak_figure() -> None:
    got = _figures({"task": "training", "params_b": 1, "precision": "bf16", "tokens_b": 10},
                   [("rtx-6000-ada", 4)])  # the catalog has no dense BF16 figure for it
    assert "train_days" not in got or got["train_days"] is None


def test_estimate_with_an_unverified_peak_says_so() -> None:
    got = _figures({"task": "training", "params_b": 7, "precision": "bf16", "tokens_b": 100}, [("mi250x", 4)])
    assert got["estimate_unverified"] is True


def test_workload_without_servers() -> None:
    wl = m.Workload.model_validate({"name": "w", "task": "inference", "params_b": 7, "precision": "bf16"})
    got = fit.workload_values([wl], fit.server_columns([], GPUS, ["w"]), FIT)[0]
    assert {k: v for k, v in got.items() if v is not None} == {
        "memory_required_gb": 16.8, "memory_scope": "server", "bytes_per_param": 2, "model_memory_gb": 14,
        "memory_allowance_pct": 20}


# ---------------------------------------------------------------- the rules on the worked examples
def _wl(name: str, task: str, params_b: float, precision: str = "bf16", **more: Any) -> dict[str, Any]:
    return {"name": name, "task": task, "params_b": params_b, "precision": precision, **more}


def _srv(name: str, gpu: str, count: int, workload: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "gpu": {"model": gpu, "count": count}, "workload": workload, **more}


FIT_RULES = {
    "workload/llm-70b": {"workload-fit.gpu-memory"},
    "workload/llm-7b-serve": set(),
    "workload/ft-13b": {"workload-fit.gpu-memory", "workload-fit.gpu-count-large-model",
                        "workload-fit.training-gpu-memory"},
    "workload/tiny": {"workload-fit.over-provisioned"},
    "workload/late": {"workload-fit.deadline"},
    "workload/no-tokens": {"workload-fit.no-estimate"},
    # Precision against architecture (Transformer Engine support matrix).
    "workload/fp8-on-a100": {"workload-fit.precision-fp8"},
    "workload/bf16-on-v100": {"workload-fit.precision-bf16"},
    "workload/fp8-on-h100": set(),
    "workload/fp8-on-l40s": set(),
    "workload/fp8-on-mi250x": {"workload-fit.precision-fp8"},
    "workload/nvfp4-on-h200": {"workload-fit.precision-microscaling"},
    "workload/nvfp4-on-b200": set(),
}


@pytest.fixture(scope="module")
def fired(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    workloads = [
        _wl("llm-70b", "training", 70),
        _wl("llm-7b-serve", "inference", 7),
        _wl("ft-13b", "fine-tuning", 13),
        _wl("tiny", "inference", 0.01),
        _wl("late", "training", 70, tokens_b=2000, deadline_days=90),
        _wl("no-tokens", "training", 7, deadline_days=30),
        _wl("fp8-on-a100", "inference", 8, "fp8"),
        _wl("bf16-on-v100", "inference", 8, "bf16"),
        _wl("fp8-on-h100", "inference", 8, "fp8"),
        _wl("fp8-on-l40s", "inference", 8, "fp8"),
        _wl("fp8-on-mi250x", "inference", 8, "fp8"),
        _wl("nvfp4-on-h200", "inference", 8, "nvfp4"),
        _wl("nvfp4-on-b200", "inference", 8, "nvfp4"),
    ]
    servers = [
        _srv("a100", "a100-sxm-80gb", 8, "llm-70b"),
        _srv("l40s", "l40s", 1, "llm-7b-serve"),
        _srv("rtx", "rtx-4090", 4, "ft-13b"),
        _srv("h100", "h100-sxm-80gb", 8, "tiny"),
        *[_srv(f"late{i}", "h100-sxm-80gb", 8, "late") for i in range(4)],
        _srv("nt", "h100-sxm-80gb", 8, "no-tokens"),
        _srv("a100-fp8", "a100-sxm-80gb", 1, "fp8-on-a100"),
        _srv("v100-bf16", "v100-sxm2-32gb", 1, "bf16-on-v100"),
        _srv("h100-fp8", "h100-sxm-80gb", 1, "fp8-on-h100"),
        _srv("l40s-fp8", "l40s", 1, "fp8-on-l40s"),
        _srv("mi250x-fp8", "mi250x", 1, "fp8-on-mi250x"),
        _srv("h200-nvfp4", "h200-sxm-141gb", 1, "nvfp4-on-h200"),
        _srv("b200-nvfp4", "b200", 1, "nvfp4-on-b200"),
    ]
    result = audit(tmp_path_factory.mktemp("fit"), servers, workloads)
    return rules_by_entity(result, ["workload-fit"])


@pytest.mark.parametrize(("entity", "rules"), sorted(FIT_RULES.items()))
def test_fit_rules_on_workloads(fired: dict[str, set[str]], entity: str, rules: set[str]) -> None:
    assert fired.get(entity, set()) == rules


# (id, server fields, workload, rules that fire on the server)
SERVER_CASES: list[tuple[str, dict[str, Any], dict[str, Any], set[str]]] = [
    ("dgx-without-its-framework", {"model": "dgx-h100", "memory_gb": 2048, "cpu": {"pcie_lanes": 160},
                  "storage": {"nvme_tb": 30.7, "raid": "1"},
                  "network": {"fabric": "infiniband", "gbps": 400, "ports": 8}},
     _wl("w-good", "training", 70, framework="pytorch"), {"workload-fit.framework-installed"}),
    ("short-ram", {"gpu": {"model": "h100-sxm-80gb", "count": 8}, "memory_gb": 1024,
                   "storage": {"nvme_tb": 30.7, "raid": "1"},
                   "network": {"fabric": "infiniband", "gbps": 400}},
     _wl("w-ram", "training", 70), {"workload-fit.host-memory"}),
    ("small-ram-large-model", {"gpu": {"model": "l4", "count": 2}, "memory_gb": 256,
                               "storage": {"nvme_tb": 3.84, "raid": "1"},
                               "network": {"fabric": "infiniband", "gbps": 200}},
     _wl("w-512", "fine-tuning", 1.5), {"workload-fit.host-memory-large-model"}),
    ("no-nvme-raid0", {"gpu": {"model": "h100-sxm-80gb", "count": 8}, "memory_gb": 2048,
                       "storage": {"nvme_tb": 0}, "network": {"fabric": "roce", "gbps": 400}},
     _wl("w-nvme", "training", 70), {"workload-fit.nvme"}),
    ("raid0", {"gpu": {"model": "h100-sxm-80gb", "count": 8}, "memory_gb": 2048,
               "storage": {"nvme_tb": 30.7, "raid": "0"}, "network": {"fabric": "roce", "gbps": 400}},
     _wl("w-raid", "training", 70), {"workload-fit.raid"}),
    ("pcie-training", {"gpu": {"model": "l40s", "count": 8}, "memory_gb": 1024, "cpu": {"pcie_lanes": 160},
                       "storage": {"nvme_tb": 15.36, "raid": "1"},
                       "network": {"fabric": "roce", "gbps": 200, "nvlink": False}},
     _wl("w-pcie", "training", 7), {"workload-fit.nvlink"}),
    ("tp-over-pcie", {"gpu": {"model": "l40s", "count": 8}, "memory_gb": 1024,
                      "network": {"nvlink": False}},
     _wl("w-tp", "inference", 70, "int8"), {"workload-fit.tensor-parallel-pcie"}),
    ("slow-fabric", {"gpu": {"model": "h100-sxm-80gb", "count": 8}, "memory_gb": 2048,
                     "storage": {"nvme_tb": 30.7, "raid": "1"},
                     "network": {"fabric": "ethernet", "gbps": 100}},
     _wl("w-fabric", "training", 70), {"workload-fit.fabric"}),
    # A 1B model is not large (> 1B: checker.yaml large_model_params_b): 384 GB of RAM is enough.
    ("pretrain-1b-is-not-large", {"gpu": {"model": "a100-sxm-80gb", "count": 2}, "memory_gb": 384,
                                  "storage": {"nvme_tb": 7.68, "raid": "1"},
                                  "network": {"fabric": "infiniband", "gbps": 400}},
     _wl("w-1b", "training", 1), set()),
    ("few-lanes", {"gpu": {"model": "l40s", "count": 8}, "memory_gb": 1024, "cpu": {"pcie_lanes": 64},
                   "network": {"nvlink": False}},
     _wl("w-lanes", "inference", 7), {"workload-fit.pcie-lanes"}),
    # Fast links other than SXM NVLink: an 8 x MI300X Infinity Fabric mesh, NVLink bridge pairs or fours.
    ("mi300x-8-training", {"gpu": {"model": "mi300x", "count": 8}, "memory_gb": 4096,
                           "cpu": {"pcie_lanes": 160}, "storage": {"nvme_tb": 30.7, "raid": "1"},
                           "network": {"fabric": "infiniband", "gbps": 400}},
     _wl("w-mi300x", "training", 70), set()),
    ("mi300x-8-serving", {"gpu": {"model": "mi300x", "count": 8}, "memory_gb": 4096,
                          "cpu": {"pcie_lanes": 160}},
     _wl("w-mi300x-405b", "inference", 405), set()),
    ("h100-nvl-pair", {"gpu": {"model": "h100-nvl", "count": 2}, "memory_gb": 512},
     _wl("w-nvl-70b", "inference", 70), set()),
    ("h100-nvl-8-training", {"gpu": {"model": "h100-nvl", "count": 8}, "memory_gb": 2048,
                             "cpu": {"pcie_lanes": 160}, "storage": {"nvme_tb": 30.7, "raid": "1"},
                             "network": {"fabric": "infiniband", "gbps": 400}},
     _wl("w-nvl-train", "training", 70), {"workload-fit.nvlink"}),
    ("h200-nvl-2way", {"gpu": {"model": "h200-nvl", "count": 8}, "memory_gb": 4096,
                       "cpu": {"pcie_lanes": 160}},
     _wl("w-h200nvl-2", "inference", 405, "int8"), {"workload-fit.tensor-parallel-pcie"}),
    ("h200-nvl-4way", {"gpu": {"model": "h200-nvl", "count": 8}, "memory_gb": 4096,
                       "cpu": {"pcie_lanes": 160}, "network": {"nvlink_bridge": 4}},
     _wl("w-h200nvl-4", "inference", 405, "int8"), set()),
]


@pytest.fixture(scope="module")
def fired_on_servers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    servers, workloads = [], []
    for case_id, fields, workload, _ in SERVER_CASES:
        # Two servers per multi-node case, so the fabric rule has a multi-node job to look at.
        servers += [{"name": f"{case_id}-{i}", "workload": workload["name"], **fields} for i in range(2)]
        workloads.append(workload)
    result = audit(tmp_path_factory.mktemp("fit-servers"), servers, workloads)
    return rules_by_entity(result, ["workload-fit"])


def test_large_model_threshold_is_a_setting(tmp_path: Path) -> None:
    server = _srv("s", "a100-sxm-80gb", 2, "w-1b", memory_gb=384)
    workload = _wl("w-1b", "training", 1)
    for threshold, fired in ((1.0, set()), (0.5, {"workload-fit.host-memory-large-model"})):
        folder = tmp_path / str(threshold)
        folder.mkdir()
        result = audit(folder, [server], [workload], config=Config(large_model_params_b=threshold))
        got = rules_by_entity(result, ["workload-fit"]).get("server/s", set())
        assert got & {"workload-fit.host-memory-large-model"} == fired


@pytest.mark.parametrize(("case_id", "rules"), [pytest.param(c[0], c[3], id=c[0]) for c in SERVER_CASES])
def test_fit_rules_on_servers(fired_on_servers: dict[str, set[str]], case_id: str, rules: set[str]) -> None:
    assert fired_on_servers.get(f"server/{case_id}-0", set()) == rules


def test_a_row_is_worked_out_from_everything_it_reads() -> None:
    """server_columns works a row out once per distinct workload, GPU set-up,
    network and trays, the loader sharing equal parts between servers: servers
    that share their GPU part and differ in another of those get rows of their own."""
    gpu = m.GpuRef(model="gb200", count=4)  # one part, shared as the loader shares it
    varied = [
        {"workload": "w"},
        {"workload": "other"},
        {"workload": "w", "network": {"nvlink": False}},
        {"workload": "w", "trays": 18},
        {"workload": "w", "trays": 18, "network": {"nvlink_domain": 36}},
    ]
    servers = [
        m.Server.model_validate({"name": f"s{i}", "rack": "R", **fields}).model_copy(update={"gpu": gpu})
        for i, fields in enumerate(varied)
    ]
    together = fit.server_columns(_entries(servers), GPUS, ["w", "other"])
    for i, server in enumerate(servers):
        alone = fit.server_columns(_entries([server]), GPUS, ["w", "other"])
        for name in ("workload", "devices", "domain", "nodes", "pcie_only"):
            assert getattr(together, name)[i] == getattr(alone, name)[0], (varied[i], name)
