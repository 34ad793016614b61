"""The soak of the hourly schedule (issue 39): one simulated day, 24 hourly runs of five JSON
sources (vastai, gpugeek_cn, matpool_cn, vultr, lambda_cloud), with a rotating fault (FAULTS): one
source every few hours gets a 3.4x price level for an hour, a 1000x unit slip for an hour, its
volume cut to 40 % for an hour, a renamed field for two hours, a 5x spike for an hour, a 3.4x
level followed by seven hours of failed crawls (the hold outlives HOLD_ALERT_HOURS), a lasting
real move (70 % off from hour 16 to the end of the day); and two holds a person settles between
two runs (`gpuprices reject` of a 3.4x level, `gpuprices accept` of a 70 % move).

Covered: every hour, every source without a fault that hour published that hour's observations
(a faulty source never stops the others); a faulty crawl is failed (naming the field) or held,
never published as it came; a failed source's observations stay as they were. At the end, every
held crawl was settled the way its rule says (pipelines/quality/settlement.py): a level that
reverts rejected as a glitch, the lasting move confirmed and landed with its own hours, the long
hold alerted on as unresolved once before it was settled, a person's decision recorded as theirs
and acted on by the next run, no crawl left held; and nothing was lost
or counted twice: observations are unique per offer and hour, every raw crawl is published,
rejected with a reason, or failed with a reason.

How: each (source, fault) is crawled once for real over the replay server (6 crawls, in
tests/helpers/soak.py); each hour then runs the real crawl step, normalization, blocking checks
and publish in process over the recorded crawl of that hour, stamped with the simulated hour;
the settlement's clock (observation_batch's `now`) is the simulated one, 40 minutes past the hour.
Loopback only; a few minutes on 2 cores. The figures are printed (`pytest -rP` shows them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg
import duckdb
import pytest

from pipelines.cli.reject import decide_crawls
from pipelines.defs import normalize as normalize_module
from pipelines.defs.ingest import raw_assets
from pipelines.defs.normalize import observation_batch, observations
from pipelines.defs.quality import (
    observation_batch_meets_expectations,
    observation_batch_sources_consistent,
    observations_unique_per_offer_hour,
)
from pipelines.quality.thresholds import CONFIRMING_CRAWLS, HOLD_ALERT_HOURS
from pipelines.resources import WorkingDuckDB
from spiders.layout import work_db_path
from tests.helpers.soak import (
    SOAK_SOURCES,
    Fault,
    HourOutcome,
    SoakCrawler,
    crawl_variants,
    run_hour,
)

HOURS = 24
FAULTS = [
    Fault("3.4x level", "vastai", range(3, 4), "reverted", factor=3.4),
    Fault("1000x unit slip", "gpugeek_cn", range(5, 6), "reverted", factor=1000),
    Fault("volume cut to 40 %", "vastai", range(7, 8), "reverted", keep_share=0.4),
    Fault("renamed field", "matpool_cn", range(9, 11), "failed", renamed=True, named="gpu_model"),
    Fault("5x spike", "vultr", range(11, 12), "reverted", factor=5),
    Fault("3.4x level, then 7 h down", "matpool_cn", range(13, 14), "reverted", factor=3.4,
          alerted=True),
    Fault("renamed field", "matpool_cn", range(14, 21), "failed", renamed=True, named="gpu_model"),
    Fault("lasting real move (70 % off)", "gpugeek_cn", range(16, HOURS), "confirmed",
          factor=0.3),
    Fault("3.4x level, a person rejects it", "vastai", range(19, 20), "rejected", factor=3.4,
          person="rejected"),
    Fault("lasting move (70 % off), a person accepts it", "vultr", range(21, HOURS), "accepted",
          factor=0.3, person="accepted"),
]
SETTLED_BY = {"reverted": "rule:", "confirmed": "rule:", "rejected": "person:",
              "accepted": "person:"}
SETTLING = [f for f in FAULTS if f.settles != "failed"]
ASSETS = [*raw_assets, observation_batch, observations, observation_batch_meets_expectations,
          observation_batch_sources_consistent, observations_unique_per_offer_hour]
SELECTION = [*(dg.AssetKey(["raw", s]) for s in SOAK_SOURCES),
             dg.AssetKey("observation_batch"), dg.AssetKey("quarantine"),
             dg.AssetKey("observations")]
SETTLED_AFTER = timedelta(minutes=40)   # the simulated clock of a run: 40 min past its hour


def faults_at(hour: int) -> dict[str, Fault]:
    return {f.source: f for f in FAULTS if hour in f.hours}


def read(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()


def outcome(con, hour: int, at: datetime, success: bool) -> HourOutcome:
    crawls = read(con, "select source, passed, failures, status from raw.crawls "
                       "where started_at >= ? and started_at < ?", [at, at + timedelta(hours=1)])
    published = {s for (s,) in read(con, "select distinct source from observations "
                                         "where observed_hour = ?", [at])}
    latest = {s: (newest, count) for s, newest, count in read(
        con, "select source, max(observed_hour), count(*) from observations group by 1")}
    return HourOutcome(hour, success, published,
                       failed={s: "; ".join(f) for s, ok, f, status in crawls
                               if status == "failed"},
                       held={s for s, _, _, status in crawls if status == "held"}, latest=latest)


@pytest.fixture(scope="module")
def soak(tmp_path_factory):
    """The day's runs: (the outcome of every hour, the working database's path, day start)."""
    root = tmp_path_factory.mktemp("soak")
    library = crawl_variants(root, FAULTS)
    data = root / "data"
    day = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=HOURS + 1)
    clock = [day]

    class SimulatedClock(datetime):
        @classmethod
        def now(cls, tz=None):
            return clock[0]

    mp = pytest.MonkeyPatch()
    mp.setenv("GPUPRICES_DATA_DIR", str(data))
    mp.setattr(normalize_module, "datetime", SimulatedClock)   # the settlement's clock
    database = WorkingDuckDB(database=str(work_db_path(data)))
    work_db_path(data).parent.mkdir(parents=True, exist_ok=True)
    hours = []
    try:
        for hour in range(HOURS):
            at = day + timedelta(hours=hour)
            clock[0] = at + SETTLED_AFTER
            crawler = SoakCrawler(library=str(library), hour=at.isoformat(),
                                  data_dir=str(data), opt_in=["all"],
                                  variants={s: f.variant for s, f in faults_at(hour).items()})
            result = run_hour(ASSETS, SELECTION, crawler, database)
            with duckdb.connect(database.database, read_only=True) as con:
                hours.append(outcome(con, hour, at, result.success))
                held = {s: c for s, c in read(con, "select source, crawl_id from raw.crawls "
                                                   "where status = 'held'")}
            for fault in (f for f in FAULTS if f.person and f.hours.start == hour):
                # what `gpuprices accept|reject <crawl_id>` does, between two runs
                decide_crawls((held[fault.source],), fault.person, "soak: a person settles it")
    finally:
        mp.undo()
    yield hours, database.database, day


def crawls_of(con, fault: Fault, day: datetime) -> list[tuple]:
    """(crawl_id, hour, status, failures) of the fault's source over its hours."""
    return read(con, "select crawl_id, hour(started_at - ?::timestamptz)::int, status, failures "
                     "from raw.crawls where source = ? and started_at >= ? and started_at < ? "
                     "order by started_at",
                [day, fault.source, day + timedelta(hours=fault.hours.start),
                 day + timedelta(hours=fault.hours.stop)])


def decisions_of(con, crawl_id: str) -> list[tuple]:
    """In the order they were recorded (a person's decision carries the real clock's time, the
    rules' the simulated one)."""
    return read(con, "select decision, decided_by, reason from raw.crawl_decisions "
                     "where crawl_id = ? order by rowid", [crawl_id])


def lands_from(fault: Fault) -> int:
    """The first hour whose run lands the fault's move: confirmed by CONFIRMING_CRAWLS crawls
    after it, or in the run after a person accepted it."""
    return fault.hours.start + (CONFIRMING_CRAWLS if fault.settles == "confirmed" else 1)


def test_every_run_succeeds_and_the_sources_without_a_fault_publish(soak):
    hours, _, _ = soak
    for h in hours:
        healthy = set(SOAK_SOURCES) - set(faults_at(h.hour))
        assert h.success, h
        assert healthy <= h.published, (h.hour, healthy - h.published, h)


def test_a_faulty_crawl_is_failed_naming_the_field_or_held(soak):
    hours, _, _ = soak
    for h in hours:
        for source, fault in faults_at(h.hour).items():
            if fault.settles == "failed":
                assert fault.named in h.failed.get(source, ""), (h.hour, fault, h)
                continue
            lands_now = fault.settles in ("confirmed", "accepted") and h.hour >= lands_from(fault)
            assert (source in h.published) == lands_now, (h.hour, fault, h)


def test_a_failed_source_keeps_its_last_good_prices(soak):
    """While its crawls fail, a source's observations stay as its last good crawl left them: its
    newest hour and its count do not move (and the freshness check reports it stale: the
    freshness test in tests/faults/test_source_faults.py)."""
    hours, _, _ = soak
    for fault in (f for f in FAULTS if f.settles == "failed"):
        before = hours[fault.hours.start - 1].latest[fault.source]
        for hour in fault.hours:
            assert hours[hour].latest[fault.source] == before, (hour, fault)


def test_every_held_crawl_is_settled_by_its_rule(soak):
    """A reverting level is rejected as a glitch, a lasting move lands with its own hours, the
    long hold is alerted on once before it is settled; a person's accept or reject settles a
    hold before any rule, and is recorded as theirs; every other decision is a rule's."""
    _, path, day = soak
    with duckdb.connect(path, read_only=True) as con:
        for fault in SETTLING:
            crawls = crawls_of(con, fault, day)
            assert len(crawls) == len(fault.hours), fault
            for crawl_id, hour, status, failures in crawls:
                made = decisions_of(con, crawl_id)
                words = [d for d, _, _ in made]
                published = read(con, "select count(*) from observations where source = ? "
                                      "and observed_hour = ?",
                                 [fault.source, day + timedelta(hours=hour)])[0][0]
                assert ("unresolved" in words) == (fault.alerted and bool(made)), (fault, made)
                if fault.settles in ("reverted", "rejected"):
                    assert words[0] == "held" and words[-1] == fault.settles, (fault, made)
                    assert made[-1][1].startswith(SETTLED_BY[fault.settles]), made
                    assert status == "rejected" and published == 0, (fault, hour, status)
                    assert any(fault.settles in f for f in failures), failures
                    continue
                # a move: landed with its original observation hour
                assert status == "passed" and published > 0, (fault, hour, status)
                if hour == fault.hours.start:   # held, then settled by the rule or the person
                    assert words[0] == "held" and words[-1] == fault.settles, (fault, made)
                    assert made[-1][1].startswith(SETTLED_BY[fault.settles]), made
                elif hour < lands_from(fault):   # held too, then landed at the move's level
                    assert words == ["held", "confirmed"], (fault, hour, made)
                elif made:                       # the crawl whose run landed the move
                    assert words == ["confirmed"] and hour == lands_from(fault), (fault, made)
                # later crawls: the move's level is the source's own, they land as they come
        alerts = read(con, "select count(*) from alerts.outbox where rule = 'held_crawl'")
    assert alerts == [(sum(f.alerted for f in SETTLING),)]


def test_nothing_is_lost_or_left_held(soak):
    """Every raw crawl of the day is published, rejected with a reason or failed with a reason;
    none is left held or pending."""
    _, path, _ = soak
    with duckdb.connect(path, read_only=True) as con:
        crawls = read(con, "select crawl_id, status, passed, normalized_at is not null, failures "
                           "from raw.crawls")
    assert len(crawls) == HOURS * len(SOAK_SOURCES)
    for crawl_id, status, passed, published, failures in crawls:
        if status == "passed":
            assert passed and published, crawl_id
        else:
            assert status in ("rejected", "failed") and not passed and failures, (
                crawl_id, status)


def test_observations_are_unique_per_offer_hour(soak):
    _, path, _ = soak
    with duckdb.connect(path, read_only=True) as con:
        assert read(con, "select offer_id, observed_hour, count(*) from observations "
                         "group by all having count(*) > 1") == []


def test_figures(soak):
    """The soak's figures, printed for the closing note (`pytest -rP`)."""
    hours, path, day = soak
    per_hour = [len(h.published) for h in hours]
    print(f"soak: {len(hours)} hourly runs, {len(SOAK_SOURCES)} sources, {len(FAULTS)} faults "
          f"({sum(len(f.hours) for f in FAULTS)} faulty source-hours); HOLD_ALERT_HOURS "
          f"{HOLD_ALERT_HOURS:g}, CONFIRMING_CRAWLS {CONFIRMING_CRAWLS}")
    print(f"runs that succeeded: {sum(h.success for h in hours)} of {len(hours)}")
    print(f"sources published per hour: {per_hour}")
    with duckdb.connect(path, read_only=True) as con:
        statuses = read(con, "select status, count(*) from raw.crawls group by 1 order by 1")
        made = read(con, "select decision, split_part(decided_by, ':', 1), count(*) "
                         "from raw.crawl_decisions group by all order by all")
        by_check = read(con, "select source, hour(c.started_at - ?::timestamptz)::int, "
                             "d.check_name, d.figure, d.bound from raw.crawl_decisions as d "
                             "join raw.crawls as c using (crawl_id, source) "
                             "where d.decision = 'held' order by 2", [day])
        # every crawl ever held: its last decision, and by whom (a rule or a person)
        holds = read(con, "select arg_max(decision, rowid), "
                          "split_part(arg_max(decided_by, rowid), ':', 1), "
                          "bool_or(decision = 'unresolved') from raw.crawl_decisions "
                          "group by crawl_id having bool_or(decision = 'held')")
    print(f"crawls by final status: {dict(statuses)}")
    print("decisions: " + ", ".join(f"{d} by {by} {n}" for d, by, n in made))
    for source, hour, check, figure, bound in by_check:
        print(f"  held: hour {hour} {source}: {check} {figure}, bound {bound}")
    settled = {by: sorted(d for d, b, _ in holds if b == by and d not in ("held", "unresolved"))
               for by in ("rule", "person")}
    print(f"holds: {len(holds)}; settled by rule: {len(settled['rule'])} "
          f"({', '.join(settled['rule'])}); by a person: {len(settled['person'])}; "
          f"unresolved at the end: {sum(d in ('held', 'unresolved') for d, _, _ in holds)}; "
          f"alerted as unresolved before being settled: {sum(a for _, _, a in holds)}")
    # the holds the faults make: every crawl of a reverting one, a move's until it lands
    assert len(holds) == sum(len(f.hours) if f.settles in ("reverted", "rejected")
                             else lands_from(f) - f.hours.start for f in SETTLING)
