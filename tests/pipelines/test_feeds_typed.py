"""Feeds every tool reads: the Parquet feed opens in pandas (pyarrow), and the CSV feed read with
its companion <mart>.schema.json gets the types the Parquet feed carries."""

import json
from decimal import Decimal

import duckdb
import pandas as pd
import pytest

from pipelines.publish import publish_feed

# One column per DuckDB type the marts use, a row with values and a row of nulls.
TYPED_MART = """create table marts.typed as
select * from (values
  ('A100-80GB', 8::integer, 3::bigint, 1.5::double, 62.5::decimal(18,6), 0.25::decimal(9,6),
   true, date '2026-11-30', timestamptz '2026-11-30 09:00:00+00', 7::hugeint, 2::ubigint,
   ['a', 'b'], '=HYPERLINK("x")', 'NA'),
  (null, null, null, null, null, null, null, null, null, null, null, null, null, null)
) as t(gpu_model, gpu_count, offers, dip_pct, price_cny, fraction, available, measured_on,
       last_seen_at, total, big, tags, sku, note)"""
# The CSV cannot carry these Parquet types; the schema documents what it gives instead.
CSV_INSTEAD = {"DECIMAL": "Float64", "DATE": "datetime64[ns]", "VARCHAR[]": "string"}


@pytest.fixture
def feed(tmp_path):
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute(TYPED_MART)
    return publish_feed(con, "marts.typed", tmp_path, bom=True)


def read_csv_typed(feed) -> pd.DataFrame:
    """The one-liner the README shows."""
    return pd.read_csv(feed["csv"], **json.loads(feed["schema"].read_text())["pandas_read_csv"])


def test_parquet_feed_opens_in_pandas(feed):
    frame = pd.read_parquet(feed["parquet"])
    assert frame.loc[0, "price_cny"] == Decimal("62.500000")
    assert frame.loc[0, "last_seen_at"] == pd.Timestamp("2026-11-30 09:00", tz="UTC")


def test_csv_with_schema_has_the_parquet_types(feed):
    schema = json.loads(feed["schema"].read_text())
    from_csv = read_csv_typed(feed)
    from_parquet = pd.read_parquet(feed["parquet"], dtype_backend="numpy_nullable")
    assert list(from_csv.columns) == list(from_parquet.columns)
    for field in schema["fields"]:
        name, duckdb_type = field["name"], field["duckdb_type"]
        instead = CSV_INSTEAD.get(duckdb_type.split("(")[0])
        if instead:
            assert str(from_csv[name].dtype) == instead, name
        elif duckdb_type == "TIMESTAMP WITH TIME ZONE":   # UTC both; pandas 2 parses CSV to ns
            assert str(from_csv[name].dtype) == "datetime64[ns, UTC]", name
            assert from_csv[name].equals(from_parquet[name].astype("datetime64[ns, UTC]"))
        else:
            assert from_csv[name].dtype == from_parquet[name].dtype, name
    assert from_csv.loc[0, "price_cny"] == 62.5 and from_csv.loc[0, "available"]
    assert from_csv.loc[0, "measured_on"] == pd.Timestamp("2026-11-30")
    assert from_csv.loc[0, "note"] == "NA"          # vendor text, not a missing value
    assert from_csv.iloc[1].isna().all()            # nulls come back missing, of every type


def test_schema_fields_are_frictionless_like(feed):
    schema = json.loads(feed["schema"].read_text())
    types = {f["name"]: f["type"] for f in schema["fields"]}
    assert types == {"gpu_model": "string", "gpu_count": "integer", "offers": "integer",
                     "dip_pct": "number", "price_cny": "number", "fraction": "number",
                     "available": "boolean", "measured_on": "date", "last_seen_at": "datetime",
                     "total": "number", "big": "integer", "tags": "string", "sku": "string",
                     "note": "string"}
    assert schema["path"] == "typed.csv" and schema["missingValues"] == [""]
    assert not list(feed["schema"].parent.glob(".*.tmp"))
