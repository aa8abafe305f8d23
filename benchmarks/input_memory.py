"""Memory of hostile inputs: peak resident memory over the file's size, one run.

    python benchmarks/input_memory.py          # each case about 20 MB
    python benchmarks/input_memory.py 5        # each case about 5 MB

Issue 17 reported a 20 MB YAML list peaking at 2.5 GB, a million unknown keys
at 2.2 GB and a 50 MB name printed back in full. Each case below is written to
a temporary folder and audited once, in a fresh process, through the command
line as CI runs it (`checker audit FILE --no-cache --jobs 1 --format json`),
for whichever checker is first on `sys.path` (as benchmarks/memory.py, so two
versions compare on the same files). It prints the peak resident memory
(ru_maxrss), what the audit adds to the peak of an audit of a tiny inventory
(start-up: imports and the built-in knowledge), and that over the file's size:
the factor docs/security.md states. Also the size of the output and its
longest line, which a long value must not make long. Linux and macOS
(ru_maxrss is KiB on Linux, bytes on macOS).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fleet import SERVERS_PER_RACK, facility, servers

AS_OF = "2027-01-15"
MB = 1_000_000
FACILITY = "kind: Facility\nname: f1\npower: {it_capacity_kw: 100}\ncooling: {capacity_kw: 100}\n"
SERVERS_HEAD = "---\nkind: Servers\nfacility: f1\nrollout_date: 2027-02-01\nservers:\n"


def _lines(line: str, size: int) -> str:
    return line * (size // len(line))


def top_level_list(size: int) -> str:
    return _lines("- 1\n", size)


def servers_not_mappings(size: int) -> str:
    return FACILITY + SERVERS_HEAD + _lines("  - 1\n", size)


def empty_servers(size: int) -> str:
    return FACILITY + SERVERS_HEAD + _lines("  - {}\n", size)


def unknown_keys_in_one_mapping(size: int) -> str:
    return FACILITY + "".join(f"k{i:09d}: 1\n" for i in range(size // 13))


def unknown_keys_in_every_rack(size: int) -> str:
    rack = "  - {name: R%d, " + ", ".join(f"k{i:03d}: 1" for i in range(900)) + "}\n"
    return FACILITY + "racks:\n" + "".join(rack % r for r in range(size // len(rack)))


def unknown_keys_in_nested_lists(size: int) -> str:
    """Racks of 1,000 feeds (the most a list inside an entry holds), each feed
    with 900 unknown keys: a rack is one entry, validated in one call, so
    pydantic holds its 900,000 errors at once (~400 bytes each)."""
    unknown = ", ".join(f"k{i:03d}: 1" for i in range(900))
    feed = "      - {name: F%d, voltage: 230, amps: 32, " + unknown + "}\n"
    parts, total, rack = [FACILITY, "racks:\n"], 0, 0
    while total < size:
        parts.append(f"  - name: R{rack}\n    feeds:\n")
        rack += 1
        for number in range(1000):
            parts.append(feed % number)
            total += len(parts[-1])
            if total >= size:
                break
    return "".join(parts)


def long_name(size: int) -> str:
    return FACILITY.replace("name: f1", "name: " + "a" * size)


def fleet(size: int) -> str:
    """A valid fleet in one file, for comparison (~540 bytes per server)."""
    count = max(size // 560 // SERVERS_PER_RACK * SERVERS_PER_RACK, SERVERS_PER_RACK)
    return facility(count // SERVERS_PER_RACK) + "---\n" + servers(0, count)


CASES: list[tuple[str, Callable[[int], str]]] = [
    ("valid fleet, one file", fleet),
    ("top-level list (`- 1`)", top_level_list),
    ("servers that are not mappings", servers_not_mappings),
    ("empty servers (`- {}`)", empty_servers),
    ("unknown keys, one mapping", unknown_keys_in_one_mapping),
    ("unknown keys, 900 per rack", unknown_keys_in_every_rack),
    ("unknown keys in nested lists", unknown_keys_in_nested_lists),
    ("a long name", long_name),
]


def audit(file: Path) -> tuple[float, int, int]:
    """Peak resident MiB of one audit of `file`, its output's size and longest line."""
    argv = [sys.executable, "-m", "checker.cli", "audit", str(file), "--as-of", AS_OF]
    options = ["--format", "json", "--no-cache", "--jobs", "1"]
    here = Path(__file__).resolve().parent  # where no checker is: the one on sys.path runs
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with subprocess.Popen([*argv, *options], stdout=out, stderr=err, cwd=here) as child:
            _, _, usage = os.wait4(child.pid, 0)
            child.returncode = 0  # reaped here; Popen must not wait for it again
        longest, total = 0, 0
        for stream in (out, err):
            stream.seek(0)
            for line in stream:
                longest, total = max(longest, len(line)), total + len(line)
    kib = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)
    return kib / 1024, total, longest


def main(size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.yaml"
        tiny.write_text(FACILITY)
        base, _, _ = audit(tiny)
        print(f"start-up (a tiny inventory): peak {base:.0f} MiB")
        heads = ("file", 8), ("peak", 9), ("added", 9), ("factor", 7), ("output", 9), ("longest line", 13)
        print(f"{'case':32}", *(f"{head:>{width}}" for head, width in heads))
        for name, make in CASES:
            file = Path(tmp) / "case.yaml"
            file.write_text(make(size))
            file_mb = file.stat().st_size / 2**20
            peak, output, longest = audit(file)
            factor = (peak - base) / file_mb
            print(f"{name:32} {file_mb:6.1f}MB {peak:7.0f}MB {peak - base:7.0f}MB {factor:6.1f}x"
                  f" {output / 2**20:7.2f}MB {longest:13,}")


if __name__ == "__main__":
    main(int(float(sys.argv[1]) * MB) if len(sys.argv) > 1 else 20 * MB)
