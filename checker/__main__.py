"""`python -m checker` and the `checker` command.

Only this module's imports are certain to work: checker's own modules load
compiled code (durable-rules' engine, numpy, pydantic), and an install whose
compiled code does not load (built for another Python, half removed) is not
bad input and not a finding. It exits 3, the internal-error code, with the one
command that repairs it, never 1 (findings) with a traceback.
"""

from __future__ import annotations

import sys

EXIT_INTERNAL = 3


def main() -> int:
    # A resident process of this installation (`checker resident start`) runs the
    # command, if there is one; checker.resident imports only the standard library.
    from checker.resident import forwarded

    code = forwarded(sys.argv[1:])
    if code is not None:
        return code
    try:
        from checker.cli import run
    except ImportError as exc:
        from checker.core.install import broken  # standard library only, and not needed before

        print(broken(exc), file=sys.stderr)
        return EXIT_INTERNAL
    run()  # ends the process (checker.cli.run); a stage that does not load is reported there


if __name__ == "__main__":
    sys.exit(main())
