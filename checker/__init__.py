"""checker: audits datacenter GPU rollout inventories before the racks are filled."""

from __future__ import annotations

__version__ = "0.1.0"
