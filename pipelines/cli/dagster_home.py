"""The Dagster instance directory that `run` and `ui` share, so run history and schedules
persist between them."""

import os
import shutil
from pathlib import Path

from spiders.layout import REPO_ROOT


def dagster_home() -> Path:
    """DAGSTER_HOME, or the project-local .dagster_home (created, with the project's dagster.yaml,
    when missing); set in the environment for Dagster and the processes it starts."""
    home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home
