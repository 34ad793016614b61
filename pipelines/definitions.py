"""The gpuprices code location (crawl -> normalize -> check -> SQL models -> feeds): every module
of pipelines/defs/ declares its own assets, checks, jobs, schedules and sensors, and Dagster's
loader collects them ([tool.dg] in pyproject.toml names the package and the location)."""

from pathlib import Path

import dagster as dg

defs = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
