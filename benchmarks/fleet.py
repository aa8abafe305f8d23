"""Synthetic fleet generator: a facility with 2N racks and N servers, written as YAML
the way an operator keeps it: one file for the facility, one for the workloads,
and the servers split by pod (`servers-pod-NNN.yaml`, 100 racks of 4 each), so
10,000 servers make 27 files and a pull request that touches one pod changes one.

python benchmarks/fleet.py 10000 /tmp/fleet            # 10,000 servers below /tmp/fleet
python benchmarks/fleet.py --varied 10000 /tmp/fleet   # no two servers alike

Every server of the default fleet is the same but for its name and place, as
in a rollout of one configuration. Work done once per distinct configuration
(a part validated once, a fact sent to the rules engine once) is then done
once; `--varied` gives every server its own peak draw and memory, so each
server's power part and facts are its own: the worst case for that work.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVERS_PER_RACK = 4
RACKS_PER_POD = 100
SERVER = """\
  - name: gpu-{i:06d}
    rack: R{rack:05d}
    position: {position}
    u_height: 8
    weight_kg: 130
    power_w: {{max: {max}, typical: 8400}}
    psu: {{count: 6, rating_w: 3300, redundant: 2, efficiency: titanium}}
    gpu: {{model: h100-sxm-80gb, count: 8}}
    memory_gb: {memory}
    storage: {{nvme_tb: 30.7, raid: "1"}}
    network: {{fabric: infiniband, gbps: 400, ports: 8, nvlink: true}}
    software: {{os: ubuntu-22.04, driver: "580.95.05", cuda: "12.2"}}
    support: {{vendor: NVIDIA, level: 24x7, until: 2029-12-31}}
    workload: train
"""


def facility(racks: int) -> str:
    lines = [
        "x-feeds: &feeds",
        "  - {name: A, side: A, voltage: 415, amps: 63, phase: 3}",
        "  - {name: B, side: B, voltage: 415, amps: 63, phase: 3}",
        "kind: Facility",
        "name: bench",
        f"power: {{it_capacity_kw: {racks * 45}}}",
        "racks:",
    ]
    for r in range(racks):
        lines += [f"  - name: R{r:05d}", "    redundancy: 2N", "    feeds: *feeds"]
    return "\n".join(lines) + "\n"


def servers(first: int, stop: int, varied: bool = False) -> str:
    """Servers numbered first..stop-1 (whole racks)."""
    head = "kind: Servers\nfacility: bench\nrollout_date: 2027-02-01\nservers:\n"
    body = "".join(
        SERVER.format(
            i=i,
            rack=i // SERVERS_PER_RACK,
            position=1 + 10 * (i % SERVERS_PER_RACK),
            # Varied: 10,100-10,200 W (still over a rack's feeds four at a time)
            # and 1,024-2,048 GB, so no two of 100,000 servers are alike.
            max=f"{10100 + (i % 100_000) / 1000:.3f}" if varied else 10200,
            memory=2048 - i % 1024 if varied else 2048,
        )
        for i in range(first, stop)
    )
    return head + body


def pod_file(pod: int) -> str:
    return f"servers-pod-{pod:03d}.yaml"


WORKLOADS = "kind: Workloads\nworkloads:\n  - {name: train, task: training, params_b: 70, precision: bf16}\n"


def write(count: int, folder: Path, varied: bool = False) -> list[Path]:
    """Write the fleet; the files written, the facility first."""
    folder.mkdir(parents=True, exist_ok=True)
    racks = -(-count // SERVERS_PER_RACK)
    files = {"facility.yaml": facility(racks), "workloads.yaml": WORKLOADS}
    per_pod = RACKS_PER_POD * SERVERS_PER_RACK
    for pod, first in enumerate(range(0, count, per_pod)):
        files[pod_file(pod)] = servers(first, min(first + per_pod, count), varied)
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / name for name in files]


if __name__ == "__main__":
    args = sys.argv[1:]
    varied = args[:1] == ["--varied"]
    write(int(args[varied]), Path(args[varied + 1]), varied)
