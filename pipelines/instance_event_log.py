"""The Dagster instance's event log for a local DAGSTER_HOME (dagster.yaml names it): Dagster's
own SQLite event log, in the same files (history/runs/<run id>.db and index.db), that keeps its
connections open and commits without waiting for the disk.

Dagster's SqliteEventLogStorage makes a new engine and connection for every event it stores and
closes them after: one `gpuprices run` stores about 600 events (each asset event twice, in its
run's file and in the index), 3,000 connects, and every commit and close in SQLite's default
rollback-journal mode syncs the file to disk. Measured under cProfile, those commits and closes
were a third of a run's time outside the crawl. Here each file keeps one engine whose connections
are pooled, and SQLite does not sync to disk (synchronous=off): a killed process loses nothing
it committed (the write is in the operating system's cache); an operating system crash or a
power cut during a write may damage the run history (never the prices: those are in DuckDB).
The journal stays SQLite's default: in write-ahead-log mode the writes would go to a -wal file,
and the UI, which follows a run by watching its .db file change, would not see them. The deploy's
Postgres storage (docs/deploy) is not affected.

A run's planned events (one per asset and check, about 200, written before its first step) are
stored as one batch, in one transaction per file instead of two per event: Dagster hands them to
store_event_batch when DAGSTER_EVENT_BATCH_SIZE is set, which this module sets (its default, 0,
stores them one by one); Dagster's SQLite storage would store a batch one by one too."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS, BATCH_WRITABLE_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.sqlalchemy_compat import db_result
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

# Engines kept open at once (one per file: the index, the run being written, the runs a UI is
# reading); the least recently used beyond these is closed.
OPEN_FILES = 8
SQLITE_BUSY_TIMEOUT_SECONDS = 30
PRAGMAS = ("pragma synchronous=off",)
# Events Dagster gathers into one store_event_batch call at most (its planned events come as one
# batch, about 200 in a `gpuprices run`); read by Dagster from the environment at every event.
EVENT_BATCH_SIZE = 1000
os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", str(EVENT_BATCH_SIZE))


def event_logs_dir(dagster_home: str) -> str:
    """Where Dagster's default SQLite storage keeps the run event logs: <home>/history/runs."""
    return os.path.join(os.path.abspath(dagster_home), "history", "runs", "")


def _set_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in PRAGMAS:
        cursor.execute(pragma)
    cursor.close()


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage with one pooled engine per file, in WAL mode."""

    def __init__(self, dagster_home: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines: OrderedDict[tuple[int, str], Engine] = OrderedDict()
        # (thread, shard, connection) of the transaction store_event_batch holds, or None
        self._held: tuple[int, str, Connection] | None = None
        super().__init__(event_logs_dir(dagster_home), inst_data)

    @classmethod
    def config_type(cls):
        from dagster import StringSource

        # the instance's own directory ({env: DAGSTER_HOME}): the class is not told it
        return {"dagster_home": StringSource}

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> Engine:
        """The shard's engine, made once per process (a forked step process makes its own)."""
        key = (os.getpid(), shard)
        engine = self._engines.get(key)
        if engine is None:
            engine = create_engine(self.conn_string_for_shard(shard),
                                   connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
            event.listen(engine, "connect", _set_pragmas)
            self._engines[key] = engine
            while len(self._engines) > OPEN_FILES:
                _, oldest = self._engines.popitem(last=False)
                oldest.dispose()
        self._engines.move_to_end(key)
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        held = self._held
        if held is not None and held[:2] == (threading.get_ident(), shard):
            yield held[2]       # within store_event_batch's transaction (it holds the lock)
            return
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    @contextmanager
    def _one_transaction(self, shard: str) -> Iterator[Connection]:
        """One transaction on `shard` that every connection this thread opens to it joins."""
        with self._connect(shard) as conn:
            self._held = (threading.get_ident(), shard, conn)
            try:
                yield conn
            finally:
                self._held = None

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """What store_event does for each event, for a batch of the kinds Dagster batches
        (BATCH_WRITABLE_EVENTS) of one run, in one transaction per file: the run's rows, then the
        index's copy of its asset and check events with what Dagster records beside them. Any
        other batch is stored one by one. Should the index's transaction fail, Dagster stores the
        batch again one by one: the run's file then holds those planned events twice, which
        nothing reads as anything but a plan."""
        if not events or any(e.dagster_event_type not in BATCH_WRITABLE_EVENTS
                             or e.run_id != events[0].run_id for e in events):
            super().store_event_batch(events)
            return
        statements = [self.prepare_insert_event(event) for event in events]
        with self._one_transaction(events[0].run_id) as conn:
            for statement in statements:
                conn.execute(statement)
        with self._one_transaction(INDEX_SHARD_NAME) as conn:
            for event, statement in zip(events, statements, strict=True):
                kind = event.dagster_event_type
                if kind not in ASSET_EVENTS and kind not in ASSET_CHECK_EVENTS:
                    continue
                with db_result(conn, statement) as result:
                    event_id = result.inserted_primary_key[0]
                if kind in ASSET_EVENTS:
                    self._store_asset_event_tags(conn, [event], [event_id])
                    self._store_asset_event(conn, event, event_id)
                else:
                    self.store_asset_check_event(event, event_id)   # joins the transaction

    def dispose(self) -> None:
        super().dispose()
        while self._engines:
            _, engine = self._engines.popitem()
            engine.dispose()
