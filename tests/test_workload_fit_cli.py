"""Workload fit end to end (issue #24): adapters, the per-GPU floor, the KV
cache and the model catalog, with exact findings and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import AS_OF, CliRunner, Writer, summary

FACILITY = """\
kind: Facility
name: f1
power: {it_capacity_kw: 1000}
cooling: {capacity_kw: 1000}
racks:
  - name: R01
    feeds: [{name: R01-A, voltage: 415, amps: 400, phase: 3}]
"""

SERVERS = """\
kind: Servers
facility: f1
defaults:
  rack: R01
  power_w: {max: 1000}
  memory_gb: 2048
  storage: {nvme_tb: 8, raid: "1"}
  network: {fabric: infiniband, gbps: 400, nvlink: true}
  support: {vendor: Acme, level: 24x7, until: 2030-12-31}
servers:
  - {name: nvl1, gpu: {model: h100-nvl, count: 1}, workload: qlora-70b}
""" + "".join(f"  - {{name: l4-{i}, gpu: {{model: l4, count: 8}}, workload: llm-70b}}\n" for i in range(8))

WORKLOADS = """\
kind: Workloads
workloads:
  - {name: qlora-70b, task: fine-tuning, mode: qlora, params_b: 70, precision: int4}
  - {name: llm-70b, task: training, model: llama-3.1-70b, params_b: 70, precision: bf16, seq_len: 4096}
"""


def test_qlora_fits_one_gpu_and_70b_over_64_l4_fails_on_the_floor(cli: CliRunner, workdir: Writer) -> None:
    workdir("facility.yaml", FACILITY)
    workdir("servers.yaml", SERVERS)
    workdir("workloads.yaml", WORKLOADS)
    run = cli("audit", ".", *AS_OF)
    # QLoRA 70B: 70 x 0.592 x 1.2 + 1.3 = 51.0 GB on a 94 GB H100 NVL: no finding.
    # 70B over 64 x L4: 1120 / 64 + 6.51 + 1.3 = 25.3 GB a GPU, over 24 GB.
    assert (run.code, run.err) == (1, "")
    assert run.lines == [
        "workloads.yaml:4:5: error workload-fit.gpu-memory workload llm-70b (70B training, bf16) needs about "
        "25.3 GB on each of its 64 GPUs (1120 GB of states sharded, 6.51 GB of activations per GPU, "
        "1.3 GB runtime), but its smallest GPU has 24 GB",
        "workloads.yaml:4:5: warning workload-fit.training-gpu-memory workload llm-70b trains on GPUs with "
        "24 GB; training GPUs should have 32 GB or more",
        summary(error=1, warning=1),
    ]


def test_kv_cache_of_the_sessions(cli: CliRunner, workdir: Writer) -> None:
    workdir("workloads.yaml", """\
kind: Workloads
workloads:
  - {name: w1, task: inference, params_b: 8, precision: bf16, model: llama-3.1-8b, context_len: 131072}
""", minimal=("facility", "servers"))
    run = cli("audit", ".", *AS_OF)
    # 128 KiB a token x 131,072 tokens = 17.18 GB + 16 GB of weights = 33.2 GB: within the
    # server's 2 x 24 GB, but more than one L4, so it runs tensor-parallel over PCIe.
    assert (run.code, run.lines) == (0, [
        "servers.yaml:10:11: warning workload-fit.tensor-parallel-pcie server s1: w1 needs about 33.2 GB, "
        "more than one l4 (24 GB), so it runs tensor-parallel over PCIe",
        summary(warning=1, verdict="pass"),
    ])


def test_unknown_catalog_model_is_a_located_input_error(cli: CliRunner, workdir: Writer) -> None:
    workdir("workloads.yaml", """\
kind: Workloads
workloads:
  - {name: w1, task: inference, params_b: 8, precision: bf16, model: llama-3.1-8}
""", minimal=("facility", "servers"))
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.lines[0]) == (
        2, "workloads.yaml:3:70: error schema.reference unknown model 'llama-3.1-8' "
           "(did you mean 'llama-3.1-8b'?)")


def test_a_training_field_on_a_serving_workload_is_an_input_error(cli: CliRunner, workdir: Writer) -> None:
    workdir("workloads.yaml", """\
kind: Workloads
workloads:
  - {name: w1, task: inference, params_b: 8, precision: bf16, seq_len: 4096}
""", minimal=("facility", "servers"))
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.lines[0]) == (
        2, "workloads.yaml:3:5: error schema.invalid workloads.0: "
           "seq_len: not a field of an inference workload")


PRECISION_SERVERS = """\
kind: Servers
facility: f1
defaults: {rack: R01, power_w: {max: 1000}}
servers:
  - {name: a, gpu: {model: a100-sxm-80gb, count: 1}, workload: fp8-a100}
  - {name: v, gpu: {model: v100-sxm2-32gb, count: 1}, workload: bf16-v100}
  - {name: h, gpu: {model: h100-sxm-80gb, count: 1}, workload: fp8-h100}
  - {name: l, gpu: {model: l40s, count: 1}, workload: fp8-l40s}
"""

PRECISION_WORKLOADS = """\
kind: Workloads
workloads:
  - {name: fp8-a100, task: inference, params_b: 8, precision: fp8}
  - {name: bf16-v100, task: inference, params_b: 8, precision: bf16}
  - {name: fp8-h100, task: inference, params_b: 8, precision: fp8}
  - {name: fp8-l40s, task: inference, params_b: 8, precision: fp8}
"""


def test_precision_against_architecture(cli: CliRunner, workdir: Writer) -> None:
    workdir("facility.yaml", FACILITY)
    workdir("servers.yaml", PRECISION_SERVERS)
    workdir("workloads.yaml", PRECISION_WORKLOADS)
    run = cli("audit", ".", *AS_OF, "--select", "workload-fit.precision-*")
    assert (run.code, run.lines) == (0, [
        "workloads.yaml:3:5: warning workload-fit.precision-fp8 workload fp8-a100 runs in fp8 on "
        "a100-sxm-80gb (Ampere, compute capability 8.0); FP8 needs compute capability 8.9 or newer "
        "(Ada, Hopper, Blackwell)",
        "workloads.yaml:4:5: warning workload-fit.precision-bf16 workload bf16-v100 runs in bf16 on "
        "v100-sxm2-32gb (Volta, compute capability 7.0); BF16 needs compute capability 8.0 or newer",
        summary(warning=2, verdict="pass"),
    ])


def test_the_report_shows_the_per_gpu_floor_and_the_kv_cache(
    cli: CliRunner, in_fixtures: Path, tmp_path: Path
) -> None:
    out = tmp_path / "readiness.md"
    assert cli("report", "workload-shapes", *AS_OF, "-o", str(out)).code == 0
    text = out.read_text(encoding="utf-8")
    header = next(line for line in text.splitlines() if line.startswith("| name | task |"))
    assert "| GPU memory needed | needed per GPU | KV cache | GPU memory available |" in header
    # serve-70b: 70 GB of fp8 weights + 85.9 GB of KV cache (32 x 8K sessions at 320 KiB a token)
    row = next(line for line in text.splitlines() if line.startswith("| [serve-70b]"))
    assert "| 155.9 GB | — | 85.9 GB | 640 GB |" in row


def test_fewer_parameters_than_the_catalog_model_activates_is_an_input_error(
    cli: CliRunner, workdir: Writer
) -> None:
    workdir("workloads.yaml", """\
kind: Workloads
workloads:
  - {name: w1, task: inference, params_b: 8, precision: bf16, model: mixtral-8x7b}
""", minimal=("facility", "servers"))
    run = cli("audit", ".", *AS_OF)
    assert (run.code, run.lines[0]) == (
        2, "workloads.yaml:3:43: error schema.invalid params_b 8 is less than the 12.9B active parameters "
           "of model 'mixtral-8x7b'")


MULTI_NODE_SERVERS = """\
kind: Servers
facility: f1
defaults: {rack: R01, model: dgx-h100, workload: serve-405b}
servers:
  - {name: g1, position: 1}
  - {name: g2, position: 11}
"""


def _serve_405b(parallel: str) -> str:
    return (
        "kind: Workloads\nworkloads:\n  - {name: serve-405b, task: inference, model: llama-3.1-405b,"
        f" params_b: 405, precision: bf16, context_len: 8192{parallel}}}\n"
    )


OVER = (
    "workloads.yaml:3:5: error workload-fit.gpu-memory workload serve-405b (405B inference, bf16) needs about"
    " 814.2 GB of GPU memory within one %s (810 GB of weights, 4.23 GB of KV cache for 8192 tokens), but"
    " has 640 GB"
)


# Llama 3.1 405B in bf16: 810 GB of weights, and 8,192 tokens of KV cache at 2 x 126 layers x 8 KV heads
# x 128 x 2 bytes = 516,096 bytes a token, 4.23 GB: 814.2 GB. One DGX H100 has 8 x 80 = 640 GB.
@pytest.mark.parametrize(
    ("parallel", "lines"),
    [
        # Within one server (nothing declared): over.
        ("", [OVER % "server", summary(error=1)]),
        # 8 x 2 = 16 GPUs over both servers: 1,280 GB, it fits.
        (", tensor_parallel: 8, pipeline_parallel: 2", [summary(verdict="pass")]),
        # 8 GPUs declared: 640 GB, over, said per instance.
        (", tensor_parallel: 8", [OVER % "instance of 8 GPUs", summary(error=1)]),
        # 8 x 4 = 32 GPUs of the 16 there are.
        (", tensor_parallel: 8, pipeline_parallel: 4", [
            "workloads.yaml:3:5: error workload-fit.replica-gpus workload serve-405b spans 32 GPUs a model"
            " instance (8 tensor x 4 pipeline parallel), but its servers have 16", summary(error=1)]),
    ],
)
def test_a_serving_instance_may_span_servers_it_declares(
    cli: CliRunner, workdir: Writer, parallel: str, lines: list[str]
) -> None:
    workdir("facility.yaml", FACILITY)
    workdir("servers.yaml", MULTI_NODE_SERVERS)
    workdir("workloads.yaml", _serve_405b(parallel))
    run = cli("audit", ".", "--select", "workload-fit.*", *AS_OF)
    assert run.lines == lines
    assert run.code == (0 if lines == [summary(verdict="pass")] else 1)
