"""`python -m checker` and the `checker` command.

Only this module's imports are certain to work: checker's own modules load
compiled code (durable-rules' engine, numpy, pydantic), and an install whose
compiled code does not load (built for another Python, half removed) is not
bad input and not a finding. It exits 3, the internal-error code, with the one
command that repairs it, never 1 (findings) with a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from urllib.parse import unquote, urlparse

EXIT_INTERNAL = 3


def reinstall_command() -> str:
    """The command that reinstalls checker where it was installed from."""
    if os.environ.get("PRE_COMMIT") == "1":  # pre-commit sets it for its hooks
        return "pre-commit clean (the next run installs the hook again)"
    source, editable = "checker", False
    try:
        direct = metadata.distribution("checker").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    if direct:  # installed from a folder, an archive or git, not from an index (PEP 610)
        info = json.loads(direct)
        url = str(info.get("url", ""))
        vcs = info.get("vcs_info") or {}
        if url.startswith("file://") and not vcs:
            source = unquote(urlparse(url).path)
            editable = bool((info.get("dir_info") or {}).get("editable"))
        elif vcs:
            source = f"{vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id', '')}".rstrip("@")
        elif url:
            source = url
    return f"{sys.executable} -m pip install --force-reinstall --no-cache-dir {'-e ' if editable else ''}'{source}'"


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
