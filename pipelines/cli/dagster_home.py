"""The Dagster instance directory that `run` and `ui` share, so run history and schedules
persist between them."""

import os
import shutil
from pathlib import Path

from spiders.layout import REPO_ROOT


def dagster_home() -> Path:
    """DAGSTER_HOME, or the project-local .dagster_home; set in the environment for Dagster and
    the processes it starts. The project-local home always holds the repository's dagster.yaml
    (refreshed when it changed, as `make ui` does: an older copy would lack the run queue or run
    monitoring); a DAGSTER_HOME the user set gets it only when it has none, and is otherwise
    the user's to configure."""
    project_home = (REPO_ROOT / ".dagster_home").resolve()
    home = Path(os.environ.get("DAGSTER_HOME") or project_home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config, project_config = home / "dagster.yaml", REPO_ROOT / "dagster.yaml"
    if not config.exists() or (home == project_home
                               and config.read_bytes() != project_config.read_bytes()):
        shutil.copy(project_config, config)
    os.environ["DAGSTER_HOME"] = str(home)
    return home
