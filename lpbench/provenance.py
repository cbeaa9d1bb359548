"""Which code computed a result: the git commit of a checkout. Standard library only, and no import from
lpbench: setup.py loads this file by its path at build time, to record the commit a wheel is built from."""
from __future__ import annotations

import subprocess
from pathlib import Path


def checkout_commit(root: str | Path) -> str | None:
    """The commit checked out at ``root`` (``-dirty`` with uncommitted changes to tracked files), or None where
    git cannot tell (no git, or not a checkout)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None
