"""The compose topology of docs/deploy/ as processes on one machine (`make deploy-local`).

* postgres.py: Debian's PostgreSQL (installed when missing), a cluster owned by the project in a
  directory of its own, on 127.0.0.1 with a generated password;
* processes.py: starting, watching and stopping the Dagster processes (pid files, process groups);
* topology.py: the whole topology (Postgres, the code location's gRPC server, the daemon, the
  webserver) with docs/deploy/dagster.yaml and workspace.yaml adapted by environment variables;
* __main__.py: `python -m pipelines.deploy up|stop|status`, what the Makefile runs.
"""
