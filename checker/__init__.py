"""checker: audits datacenter GPU rollout inventories before the racks are filled."""

from __future__ import annotations

import os

# numpy's BLAS (OpenBLAS in the PyPI wheels, MKL in some builds) starts a pool
# of threads at import, one per core, that checker never uses: its arrays are
# elementwise, with no matrix products. On 2 cores the pool cost about 7 % of
# the CPU of a 10,000-server audit (benchmarks/threads.py). Set before numpy
# is imported; a value the user set wins.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

__version__ = "0.1.0"
