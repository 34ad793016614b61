"""The pipeline's own steps, run in this process on the backfill's crawls: the same
normalization, quarantine and blocking checks as a crawl's (observation_batch, quarantine,
observations and their checks), then, once the backfill is loaded, the models, feeds, report and
published database an hourly run would build after it. Alerts are not run: history is not news.

Dagster is imported here, when a backfill publishes, not when the package is imported."""

from __future__ import annotations

import os
from pathlib import Path

OBSERVATION_ASSETS = (("observation_batch",), ("quarantine",), ("observations",))
# what an hourly run builds after the observations, but the alerts
AFTER_OBSERVATIONS = ("staging", "intermediate", "marts", "feeds", "report")
MODEL_GROUPS = AFTER_OBSERVATIONS[:3]
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _definitions():
    """The code location as the environment now says (its resources name the data directory):
    loaded again, cheaply (its modules are imported once), for each run."""
    import dagster as dg

    import pipelines.definitions

    return dg.load_from_defs_folder(
        path_within_project=Path(pipelines.definitions.__file__).parent)


def _run(selection, root: str | Path | None) -> tuple[bool, str]:
    """The assets of `selection` run on the data directory `root` (the environment's when
    None)."""
    import dagster as dg

    if root is not None:     # every step reads its paths from the environment as it runs
        os.environ["GPUPRICES_DATA_DIR"] = str(Path(root).resolve())
    defs = _definitions()
    job = defs.resolve_job_def("gpuprices_job")
    if not isinstance(selection, list):
        selection = list(selection.resolve(defs.resolve_asset_graph()))
    result = job.execute_in_process(instance=dg.DagsterInstance.ephemeral(),
                                    asset_selection=selection, raise_on_error=False,
                                    run_config=QUIET)
    failed = [f"{e.step_key}: {e.event_specific_data.error.message.strip()}"
              if getattr(e.event_specific_data, "error", None) else str(e.step_key)
              for e in result.all_events if e.is_step_failure]
    # a failed blocking check stops the run; a warning (a stale source) does not
    checks = [f"{e.event_specific_data.check_name}: {e.event_specific_data.description}"
              for e in result.all_events
              if e.event_type_value == "ASSET_CHECK_EVALUATION"
              and not e.event_specific_data.passed
              and e.event_specific_data.severity.value != "WARN"]
    return result.success and not checks, "; ".join([*failed, *checks])


def publish_pending(root: str | Path | None = None) -> tuple[bool, str]:
    """Normalize, check and publish every pending crawl, as a run does; (ok, why not)."""
    import dagster as dg

    return _run([dg.AssetKey(list(k)) for k in OBSERVATION_ASSETS], root)


def build_after(root: str | Path | None = None,
                groups: tuple[str, ...] = AFTER_OBSERVATIONS) -> tuple[bool, str]:
    """The models (incremental: the days the backfill added are rebuilt), feeds, report and the
    published database (or the asset groups named)."""
    import dagster as dg

    return _run(dg.AssetSelection.groups(*groups), root)
