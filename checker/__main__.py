"""`python -m checker` and the `checker` command.

Only this module's imports are certain to work: checker's own modules load
compiled code (durable-rules' engine, numpy, pydantic), and an install whose
compiled code does not load (built for another Python, half removed) is not
bad input and not a finding. It exits 3, the internal-error code, with the one
command that repairs it, never 1 (findings) with a traceback.
"""

from __future__ import annotations

import sys

from checker.core.install import broken

EXIT_INTERNAL = 3


def main() -> int:
    try:
        from checker.cli import run
    except ImportError as exc:
        print(broken(exc), file=sys.stderr)
        return EXIT_INTERNAL
    run()  # ends the process (checker.cli.run); a stage that does not load is reported there


if __name__ == "__main__":
    sys.exit(main())
