"""The deployment files (docs/deploy/) and the project's dagster.yaml, checked without Docker or
Kubernetes (neither runs here): every instance configuration validates against Dagster's own
schema (`dagster_instance_config`, which `DagsterInstance` loads them with), the configurable
classes they name import and accept their config, the compose file, workspace and Dockerfile agree
with each other and with the project, and every key of the Helm values exists in the official
chart's values.schema.json.

The chart's keys below are transcribed from dagster-io/dagster helm/dagster/values.schema.json
(the version in the reference index, commit bdb8547); a key missing from CHART_KEYS fails the test
until someone checks it against the chart and adds it.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster._config import validate_config
from dagster._core.errors import DagsterInvalidConfigError
from dagster._core.instance.config import dagster_instance_config
from dagster._core.instance.ref import class_from_code_pointer

from spiders.layout import REPO_ROOT

DEPLOY = REPO_ROOT / "docs" / "deploy"
INSTANCE_FILES = [REPO_ROOT / "dagster.yaml", DEPLOY / "dagster.yaml"]
LOCATION = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "tool"]["dagster"]["code_location_name"]

FREE = None   # a free-form subtree (Kubernetes objects, env lists): the chart passes it through
IMAGE = {"repository": FREE, "tag": FREE, "pullPolicy": FREE}
CHART_KEYS: dict[str, Any] = {
    "dagster-user-deployments": {
        "enabled": FREE, "enableSubchart": FREE, "imagePullSecrets": FREE,
        "deployments": [{
            "name": FREE, "image": IMAGE, "dagsterApiGrpcArgs": FREE, "codeServerArgs": FREE,
            "includeConfigInLaunchedRuns": {"enabled": FREE}, "deploymentNamespace": FREE,
            "port": FREE, "env": FREE, "envConfigMaps": FREE, "envSecrets": FREE,
            "annotations": FREE, "nodeSelector": FREE, "affinity": FREE, "tolerations": FREE,
            "podSecurityContext": FREE, "securityContext": FREE, "resources": FREE,
            "livenessProbe": FREE, "readinessProbe": FREE, "startupProbe": FREE, "labels": FREE,
            "volumeMounts": FREE, "volumes": FREE, "schedulerName": FREE,
            "initContainers": FREE, "sidecarContainers": FREE}]},
    "postgresql": {"image": IMAGE, "enabled": FREE, "postgresqlHost": FREE,
                   "postgresqlUsername": FREE, "postgresqlPassword": FREE,
                   "postgresqlDatabase": FREE, "postgresqlParams": FREE,
                   "postgresqlScheme": FREE, "service": {"port": FREE}},
    "generatePostgresqlPasswordSecret": FREE,
    "global": {"postgresqlSecretName": FREE, "dagsterHome": FREE, "serviceAccountName": FREE,
               "celeryConfigSecretName": FREE},
    "runLauncher": {"type": FREE, "config": {"k8sRunLauncher": {
        "image": FREE, "imagePullPolicy": FREE, "jobNamespace": FREE,
        "loadInclusterConfig": FREE, "kubeconfigFile": FREE, "envConfigMaps": FREE,
        "envSecrets": FREE, "envVars": FREE, "volumeMounts": FREE, "volumes": FREE,
        "labels": FREE, "failPodOnRunFailure": FREE, "resources": FREE, "schedulerName": FREE,
        "securityContext": FREE, "runK8sConfig": FREE}}},
    "dagsterDaemon": {
        "enabled": FREE, "image": IMAGE, "heartbeatTolerance": FREE, "env": FREE,
        "envSecrets": FREE, "resources": FREE, "runMonitoring": FREE, "runRetries": FREE,
        "runCoordinator": {"enabled": FREE, "type": FREE, "config": {"queuedRunCoordinator": {
            "maxConcurrentRuns": FREE, "tagConcurrencyLimits": FREE,
            "dequeueIntervalSeconds": FREE, "dequeueNumWorkers": FREE,
            "dequeueUseThreads": FREE, "blockOpConcurrencyLimitedRuns": FREE}}}},
    "additionalInstanceConfig": FREE,
    "telemetry": {"enabled": FREE},
}
CHART_ENUMS = {("runLauncher", "type"): {"CeleryK8sRunLauncher", "K8sRunLauncher",
                                         "CustomRunLauncher"},
               ("dagsterDaemon", "runCoordinator", "type"): {"QueuedRunCoordinator",
                                                              "CustomRunCoordinator"}}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def validate_instance(directory: Path, name: str = "dagster.yaml") -> dict:
    """Dagster's own loading of an instance file: its schema plus the cross-field rules."""
    config, _ = dagster_instance_config(str(directory), name)
    return dict(config)


def validate_classes(config: dict) -> None:
    """Each configurable class the instance names imports and accepts its config."""
    for section in ("run_launcher", "compute_logs", "run_coordinator"):
        if section in config:
            spec = config[section]
            cls = class_from_code_pointer(spec["module"], spec["class"])
            result = validate_config(cls.config_type(), spec.get("config") or {})
            assert result.success, (section, result.errors)


@pytest.mark.parametrize("path", INSTANCE_FILES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_instance_files_pass_dagsters_schema(path):
    config = validate_instance(path.parent, path.name)
    validate_classes(config)
    pools = config.get("concurrency", {}).get("pools", {})
    assert pools.get("default_limit") == 1      # the duckdb_writer pool: one step at a time
    # one launched run of the location at a time (the CLI's runs: the data directory's lock)
    limits = config["concurrency"]["runs"]["tag_concurrency_limits"]
    assert {"key": "dagster/code_location", "value": LOCATION, "limit": 1} in limits


@pytest.mark.parametrize("path", INSTANCE_FILES[:1], ids=["dagster.yaml"])
def test_the_project_instance_queues_one_run_of_the_location_at_a_time(path, tmp_path):
    """The instance `make ui` and `gpuprices run` load (DAGSTER_HOME gets a copy of the file):
    its run queue holds a second run of the location back while one is in progress."""
    import dagster as dg
    from dagster._core.run_coordinator.queued_run_coordinator import QueuedRunCoordinator
    from dagster._utils.tags import TagConcurrencyLimitsCounter

    (tmp_path / "dagster.yaml").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        queue = instance.get_concurrency_config().run_queue_config
        launched = dg.DagsterRun(job_name="gpuprices_job", run_id="a",
                                 tags={"dagster/code_location": LOCATION})
        counter = TagConcurrencyLimitsCounter(queue.tag_concurrency_limits, [launched])
        assert counter.is_blocked(dg.DagsterRun(job_name="report_job", run_id="b",
                                                tags={"dagster/code_location": LOCATION}))
        assert not TagConcurrencyLimitsCounter(queue.tag_concurrency_limits, []).is_blocked(
            launched)
        # a `gpuprices run` killed mid-run stays "started" in the run storage: no limit counts it
        stale_cli_run = dg.DagsterRun(job_name="gpuprices_job", run_id="c", tags={})
        assert not TagConcurrencyLimitsCounter(queue.tag_concurrency_limits,
                                               [stale_cli_run]).is_blocked(launched)
        assert queue.max_concurrent_runs == -1


def test_deploy_instance_uses_postgres_and_one_run_of_the_location_at_a_time():
    config = validate_instance(DEPLOY)
    db = config["storage"]["postgres"]["postgres_db"]
    assert {k: v for k, v in db.items() if isinstance(v, dict)} == {
        "hostname": {"env": "DAGSTER_PG_HOST"}, "port": {"env": "DAGSTER_PG_PORT"},
        "db_name": {"env": "DAGSTER_PG_DB"}, "username": {"env": "DAGSTER_PG_USER"},
        "password": {"env": "DAGSTER_PG_PASSWORD"}}
    assert_driver_installed(db["scheme"])
    limits = config["concurrency"]["runs"]["tag_concurrency_limits"]
    assert {"key": "dagster/code_location", "value": LOCATION, "limit": 1} in limits
    assert config["concurrency"]["pools"]["granularity"] == "op"
    import dagster_postgres  # storage: postgres needs it in the image (requirements.lock)

    assert dagster_postgres.PostgresRunStorage


def assert_driver_installed(scheme: str) -> None:
    """The database driver the storage's URL scheme names imports: SQLAlchemy 2.1 reads a bare
    postgresql:// as psycopg 3, which dagster-postgres does not install (psycopg2-binary)."""
    import sqlalchemy

    sqlalchemy.engine.make_url(f"{scheme}://u@h/d").get_dialect().import_dbapi()


@pytest.mark.parametrize("scheme, installed", [("postgresql+psycopg2", True),
                                               ("postgresql+psycopg", False)])
def test_the_driver_check_tells_an_installed_driver_from_a_missing_one(scheme, installed):
    try:
        assert_driver_installed(scheme)
    except ImportError:
        assert not installed
    else:
        assert installed


def test_the_run_queue_tag_is_one_dagster_puts_on_every_run():
    from dagster._core.storage.tags import CODE_LOCATION_TAG

    assert CODE_LOCATION_TAG == "dagster/code_location"


@pytest.mark.parametrize("broken, message", [
    # tag limits in two places: Dagster refuses run_queue limits next to `concurrency`
    ({"run_queue": {"tag_concurrency_limits": [{"key": "a", "limit": 1}]}}, "run_queue"),
    ({"concurrency": {"pools": {"default_limit": -1}}}, "default_limit"),
    ({"storage": {"postgres": {"postgres_db": {"hostname": "h"}}}}, "postgres_db"),
    ({"run_launcher": {"module": "dagster._core.launcher"}}, "run_launcher"),
])
def test_the_validation_refuses_a_broken_instance(tmp_path, broken, message):
    config = load_yaml(DEPLOY / "dagster.yaml")
    config.update(broken)   # one section replaced, the rest as shipped
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(DagsterInvalidConfigError) as error:
        validate_instance(tmp_path)
    assert message in str(error.value) + repr(getattr(error.value, "errors", ""))


def _command_option(command: list[str], option: str) -> str:
    return command[command.index(option) + 1]


def test_compose_names_the_services_and_agrees_with_workspace_and_instance():
    compose = load_yaml(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert set(services) == {"postgres", "code", "daemon", "webserver"}
    code = services["code"]["command"]
    assert code[:3] == ["dagster", "code-server", "start"]
    assert _command_option(code, "-m") == "pipelines.definitions"
    assert _command_option(code, "--location-name") == LOCATION
    server = load_yaml(DEPLOY / "workspace.yaml")["load_from"][0]["grpc_server"]
    env = services["daemon"]["environment"]    # the workspace's address comes from the env
    assert (env[server["host"]["env"]], env[server["port"]["env"]], server["location_name"]) == (
        "code", _command_option(code, "-p"), LOCATION)
    assert services["daemon"]["command"][:2] == ["dagster-daemon", "run"]
    assert services["webserver"]["command"][0] == "dagster-webserver"
    # every env var the instance reads is set for each Dagster process, secrets by reference
    wanted = {name for file in ("dagster.yaml", "workspace.yaml")
              for name in re.findall(r"\{env: (\w+)\}", (DEPLOY / file).read_text("utf-8"))}
    for name in ("code", "daemon", "webserver"):
        env = services[name]["environment"]
        assert wanted <= set(env), name
        assert env["DAGSTER_PG_PASSWORD"].startswith("${")
        assert "logs:/opt/dagster/logs" in services[name]["volumes"]   # the shared compute logs
    assert all(p.startswith("127.0.0.1:") for p in services["webserver"]["ports"])
    assert "data:/data" in services["code"]["volumes"]   # runs execute in the code container


def test_dockerfile_builds_the_locked_venv_with_debian_chromium_as_non_root():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.replace("\\\n", " ").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert re.match(r"FROM python:3\.11-slim-(bookworm|trixie)$", lines[0])
    assert any("apt-get install" in line and "chromium" in line.split()
               and "fonts-noto-cjk" in line.split() for line in lines)
    assert any("uv pip install" in line and "-r requirements.lock" in line for line in lines)
    assert any("pip install" in line and "--no-deps -e ." in line for line in lines)
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    for line in lines:   # every file the build copies exists in the repository
        if line.startswith("COPY "):
            for source in shlex.split(line)[1:-1]:
                assert (REPO_ROOT / source).exists(), source
    assert "COPY docs/deploy/dagster.yaml" in text


def _unknown_keys(values: Any, schema: Any, path: tuple = ()) -> list[str]:
    if schema is FREE:
        return []
    if isinstance(schema, list):
        return [k for item in values for k in _unknown_keys(item, schema[0], (*path, "[]"))]
    unknown = []
    for key, value in values.items():
        if key not in schema:
            unknown.append(".".join((*path, key)))
        else:
            unknown += _unknown_keys(value, schema[key], (*path, key))
    return unknown


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def chart_instance(values: dict) -> dict:
    """The instance dagster.yaml the chart renders from `values`, for the parts these values set
    (storage, run coordinator, run launcher, run retries, telemetry) plus
    additionalInstanceConfig, which the chart appends as it is."""
    pg, daemon = values["postgresql"], values["dagsterDaemon"]
    coordinator = daemon["runCoordinator"]
    instance: dict[str, Any] = {
        "storage": {"postgres": {"postgres_db": {
            "username": pg["postgresqlUsername"], "password": {"env": "DAGSTER_PG_PASSWORD"},
            "hostname": pg["postgresqlHost"], "db_name": pg["postgresqlDatabase"],
            "port": pg["service"]["port"], "scheme": pg.get("postgresqlScheme", "postgresql")}}},
        "run_launcher": {"module": "dagster_k8s", "class": values["runLauncher"]["type"],
                         "config": {"load_incluster_config": True}},
        "telemetry": {"enabled": values["telemetry"]["enabled"]},
        "run_retries": {_snake(k): v for k, v in daemon.get("runRetries", {}).items()},
    }
    if coordinator["enabled"]:
        instance["run_coordinator"] = {
            "module": "dagster._core.run_coordinator", "class": coordinator["type"],
            "config": {_snake(k): v for k, v in
                       (coordinator["config"].get("queuedRunCoordinator") or {}).items()}}
    return {**instance, **values.get("additionalInstanceConfig", {})}


def test_helm_values_use_only_the_charts_keys_and_k8s_run_launcher():
    values = load_yaml(DEPLOY / "helm-values.yaml")
    assert _unknown_keys(values, CHART_KEYS) == []
    for path, allowed in CHART_ENUMS.items():
        node = values
        for key in path:
            node = node[key]
        assert node in allowed, path
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    assert deployment["name"] == LOCATION
    assert deployment["codeServerArgs"] == ["-m", "pipelines.definitions"]
    mounts = values["runLauncher"]["config"]["k8sRunLauncher"]["volumeMounts"]
    assert {"name": "gpuprices-data", "mountPath": "/data"} in mounts


def test_unknown_chart_keys_are_caught():
    assert _unknown_keys({"runLauncher": {"type": "K8sRunLauncher", "config": {
        "k8sRunLauncher": {"jobNamepsace": "x"}}}}, CHART_KEYS) == [
        "runLauncher.config.k8sRunLauncher.jobNamepsace"]
    assert _unknown_keys({"dagster-user-deployments": {"deployments": [{"nam": "x"}]}},
                         CHART_KEYS) == ["dagster-user-deployments.deployments.[].nam"]


def test_the_instance_the_chart_renders_passes_dagsters_schema(tmp_path):
    rendered = chart_instance(load_yaml(DEPLOY / "helm-values.yaml"))
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(rendered), encoding="utf-8")
    config = validate_instance(tmp_path)
    assert config["concurrency"]["pools"]["default_limit"] == 1
    assert {"key": "dagster/code_location", "value": LOCATION, "limit": 1} in \
        config["concurrency"]["runs"]["tag_concurrency_limits"]
    assert_driver_installed(config["storage"]["postgres"]["postgres_db"]["scheme"])


def test_tag_limits_in_the_charts_run_coordinator_would_be_refused(tmp_path):
    """Why the values keep the run limits in additionalInstanceConfig: the chart renders
    queuedRunCoordinator's limits into run_coordinator, which Dagster refuses next to the
    `concurrency` section the pool needs."""
    values = load_yaml(DEPLOY / "helm-values.yaml")
    values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"] = {
        "tagConcurrencyLimits": [{"key": "dagster/code_location", "value": LOCATION,
                                  "limit": 1}]}
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(chart_instance(values)), "utf-8")
    with pytest.raises(DagsterInvalidConfigError, match="run_coordinator"):
        validate_instance(tmp_path)


def test_dagster_postgres_is_locked_with_dagster():
    lock = (REPO_ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins = dict(re.findall(r"^([a-z0-9-]+)==(\S+)$", lock, re.MULTILINE))
    assert pins["dagster-postgres"] == pins["dagster-duckdb"]     # the 0.x libraries move together
    # dagster 1.N.P ships its libraries as 0.(N+16).P
    major, minor, patch = pins["dagster"].split(".")
    assert pins["dagster-postgres"] == f"0.{int(minor) + 16}.{patch}" and major == "1"
