"""`python -m checker` and the `checker` command.

Only this module's imports are certain to work: checker's own modules load
compiled code (durable-rules' engine, numpy, pydantic), and an install whose
compiled code does not load (built for another Python, half removed) is not
bad input and not a finding. It exits 3, the internal-error code, with the one
command that repairs it, never 1 (findings) with a traceback.
"""

from __future__ import annotations

import os
import sys

from checker.core.install import source

EXIT_INTERNAL = 3


def reinstall_command() -> str:
    """The command that reinstalls checker where it was installed from."""
    if os.environ.get("PRE_COMMIT") == "1":  # pre-commit sets it for its hooks
        return "pre-commit clean (the next run installs the hook again)"
    found = source()
    install = f"{sys.executable} -m pip install --force-reinstall --no-cache-dir"
    return f"{install} -e '{found.requirement}'" if found.editable else f"{install} '{found.requirement}'"


def main() -> int:
    try:
        from checker.cli import main as run
    except ImportError as exc:
        print(
            f"checker: this installation is broken ({type(exc).__name__}: {exc});"
            f" reinstall it: {reinstall_command()}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return run()


if __name__ == "__main__":
    sys.exit(main())
