"""Imported once by the multiprocess executor's forkserver (pipelines/defs/automation.py), so that
every step process forked from it starts with what each of them would otherwise import afresh:
the code location, the module of the job's code pointer (pipelines/cli/run.py), and the classes of
the Dagster instance each step opens (its run and event storage pull in SQLAlchemy and Alembic,
about 0.6 s a step here). Only imports: no instance, connection or thread is made here, because
the step processes are forks of this one."""

import contextlib
import importlib
import os

from dagster._core.instance.ref import InstanceRef
from dagster._serdes.config_class import ConfigurableClassData

# The code location, and the job's code pointer (each step process loads the job through it).
OWN_MODULES = ("pipelines.definitions", "pipelines.cli.run")
# Imported by every step process on its way to running the step (measured: the modules that 50 or
# more of a run's 60 step processes imported afresh). Dagster's private layout may change: a
# module that is gone only costs its step processes the import, so it is skipped here.
STEP_MODULES = ("dagster._core.instance.factory", "dagster._core.secrets.env_file",
                "dagster._core.storage.migration.utils", "dagster._core.workspace.autodiscovery",
                "dagster._core.system_config.composite_descent", "dagster._core.utility_ops",
                "upath")


def instance_modules(home: str) -> list[str]:
    """The modules of every configurable class (storage, compute logs, coordinator, launcher...)
    the instance in `home` names."""
    ref = InstanceRef.from_dir(home)
    return sorted({value.module_name for value in ref._asdict().values()
                   if isinstance(value, ConfigurableClassData)})


for name in OWN_MODULES:
    importlib.import_module(name)
for name in STEP_MODULES:
    with contextlib.suppress(ImportError):
        importlib.import_module(name)
# Only a speed-up: an instance this cannot read (the run itself reports why) must not take the
# forkserver down with it, which would fail every step with a less clear error.
if os.environ.get("DAGSTER_HOME"):
    with contextlib.suppress(Exception):
        for module in instance_modules(os.environ["DAGSTER_HOME"]):
            importlib.import_module(module)
