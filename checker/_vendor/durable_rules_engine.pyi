# The C engine compiled from durable/src by hatch_build.py: untyped, as released.
from typing import Any

def __getattr__(name: str) -> Any: ...
