"""`python -m checker`: the same as the `checker` command."""

from __future__ import annotations

import sys

from checker.cli import main

if __name__ == "__main__":
    sys.exit(main())
