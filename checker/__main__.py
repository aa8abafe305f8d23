"""`python -m checker`: the same as the `checker` command."""

from __future__ import annotations

from checker.cli import run

if __name__ == "__main__":
    run()
