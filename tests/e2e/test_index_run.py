"""End to end: the price index through the real Dagster job. A data directory whose working
database holds three earlier days of the two sources' offers (a template IDC's table in CNY, a
paged JSON cloud in USD) is run again over the replay server: the run's price_index step
publishes those closed days (today is still open) into prices.db and its feed; late data for a
published day and a further run leave every published row as it was, byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import duckdb

from pipelines.index import INDEX_COLUMNS
from tests.helpers.observations import insert
from tests.helpers.runs import TWO_SOURCES, gpuprices, query

TEXT = ", ".join(f"{c}::varchar" for c in INDEX_COLUMNS)
ROWS = f"select {TEXT} from marts.price_index order by series_id, index_date"


def earlier_days(work_db, days: int, crawl_id: str):
    """Every observation of the run, copied to each of the `days` days before its own at 13:00
    UTC (21:00 in Beijing: both calendars' days are fresh), and again as a second vendor's (each
    source is one vendor, and a level needs two), loaded as one normalized crawl. Returns the
    run's own day (a replayed snapshot's observations keep their recorded time)."""
    with duckdb.connect(str(work_db)) as con:
        cursor = con.execute("select * from observations")
        names = [d[0] for d in cursor.description]
        today = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        rows = []
        for back in range(1, days + 1):
            for row in today:
                day = row["observed_at"].astimezone(UTC).date() - timedelta(days=back)
                at = datetime.combine(day, time(13), UTC)
                rows.append({**row, "observed_at": at, "observed_hour": at})
                rows.append({**row, "observed_at": at, "observed_hour": at,
                             "vendor": f"{row['vendor']} twin", "source": f"{row['source']}_twin",
                             "offer_id": f"{row['offer_id']}-twin"})
        insert(con, rows, crawl_id)
    return max(row["observed_at"].astimezone(UTC).date() for row in today)


def test_the_run_publishes_closed_days_and_never_rewrites_them(two_source_run, tmp_path):
    assert two_source_run.returncode == 0, two_source_run.stdout + two_source_run.stderr
    data_dir = two_source_run.copy_to(tmp_path)
    work_db = data_dir / ".work" / "prices.db"
    today = earlier_days(work_db, 3, "history-1")
    first = gpuprices(data_dir, "run", *TWO_SOURCES)
    assert first.returncode == 0, first.stdout + first.stderr
    published = query(data_dir, ROWS)
    series = {r[0] for r in published}
    # the cloud's series, in USD; the IDC is a template (no operator behind it): in no series
    assert series and all("|world|" in s for s in series)
    days = {r[INDEX_COLUMNS.index("index_date")] for r in published}
    assert str(today) not in days and str(today - timedelta(days=3)) in days
    levels = query(data_dir, "select count(*) from marts.price_index where index_level is not null")
    assert levels[0][0] > 0
    feed = (data_dir / "feeds" / "price_index.csv").read_text(encoding="utf-8").splitlines()
    assert len(feed) == 1 + len(published)

    # late data for a published day (every price of two days ago, 20 % lower at 14:00), then
    # another run: the published days stay as they were
    with duckdb.connect(str(work_db)) as con:
        cursor = con.execute("select * from observations where crawl_id = 'history-1' and "
                             "timezone('UTC', observed_at)::date = ?",
                             [today - timedelta(days=2)])
        names = [d[0] for d in cursor.description]
        late = [{**dict(zip(names, row, strict=True)),
                 "observed_at": datetime.combine(today - timedelta(days=2), time(14), UTC),
                 "observed_hour": datetime.combine(today - timedelta(days=2), time(14), UTC)}
                for row in cursor.fetchall()]
        for row in late:
            row["price_amount"] = row["price_amount"] * type(row["price_amount"])("0.8")
        assert late
        insert(con, late, "late-1")
    second = gpuprices(data_dir, "run", *TWO_SOURCES)
    assert second.returncode == 0, second.stdout + second.stderr
    assert query(data_dir, ROWS)[:len(published)] == published
