"""A small JSON cache kept in a `__pycache__` folder beside the code or files it serves (ignored
by git, as Python's own): what one process computed and the next would compute again. It is
only ever a shortcut: a cache that cannot be read is empty, one that cannot be written is not."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def read_cache(path: Path) -> dict:
    """The cached object at `path`; {} when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_cache(path: Path, data: dict) -> None:
    """Replace the cache at `path` by `data` in one rename (a reader sees the old file or the new
    one); a folder that cannot be written leaves it as it was."""
    try:
        path.parent.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False,
                                         encoding="utf-8") as out:
            json.dump(data, out)
        os.chmod(out.name, 0o644)
        os.replace(out.name, path)
    except OSError:
        pass
