"""The code location's definitions, one module per step of the flow: ingest (raw/<source>),
normalize (observation_batch, quarantine, observations), quality (the checks), models (staging/,
intermediate/, marts/), feeds (feeds/), then alerts, advisor and report; automation holds the
jobs, schedules and sensors, resources the resources; execution reads GPUPRICES_EXECUTOR
(in process, or a process per step with the duckdb_writer pool). pipelines/definitions.py loads
them all."""
