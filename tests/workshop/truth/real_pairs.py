"""Like-for-like pairs on real histories (`make truth-real`, issue 41 item 4): on a published
prices.db, per pair family the pairs the marts publish, those outside the plausible range, those
of two machines or of a machine not stated, self-comparisons, and the least and greatest published
discount; for the regional discount, rows whose reference holds the region itself. The plausible
ranges and the machine tolerance are intermediate.int_pair_rules as the code states it (run here,
so a database from before the rules is judged by the same ones). No truth is known: a published
pair that breaks a rule is a failure whatever its price."""

from __future__ import annotations

import duckdb
import pandas as pd

from pipelines.warehouse.sql_files import sql_text
from spiders.layout import SQL_DIR

RULES = SQL_DIR / "intermediate" / "int_pair_rules.sql"


def _register_rules(con: duckdb.DuckDBPyConnection) -> None:
    con.register("pair_rules", con.execute(RULES.read_text(encoding="utf-8")).df())


def _round(value) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), 2)


def family_figures(pairs: pd.DataFrame) -> dict:
    """Per family, rows of sql/real_pairs_published.sql -> the family's figures."""
    figures = {}
    for family, rows in pairs.groupby("comparison"):
        figures[family] = {
            "pairs": len(rows),
            "out_of_range": int(rows["out_of_range"].sum()),
            "machine_differs": int(rows["machine_differs"].sum()),
            "machine_unknown": int(rows["machine_unknown"].sum()),
            "self_comparisons": int(rows["itself"].sum()),
            "discount_pct_min": _round(rows["discount_pct"].min()),
            "discount_pct_max": _round(rows["discount_pct"].max()),
        }
    return figures


def regional_figures(rows: pd.DataFrame) -> dict:
    """Rows of sql/real_pairs_regional.sql -> the regional discount's figures. A self-comparison:
    the region among the reference's region groups (reference_region_groups); a database from
    before that column priced a region against a reference that held the region's own offers
    whenever it had any (region_in_reference)."""
    if "reference_region_groups" in rows.columns:
        itself = rows.apply(lambda r: r["reference_region_groups"] is not None
                            and r["region_group"] in list(r["reference_region_groups"]), axis=1)
    else:
        itself = rows["region_in_reference"]
    return {
        "rows": len(rows),
        "out_of_range": int(rows["out_of_range"].sum()),
        "self_comparisons": int(itself.sum()) if len(rows) else 0,
        "us_rows": int((rows["region_group"] == "US").sum()),
        "discount_pct_min": _round(rows["discount_pct"].min()),
        "discount_pct_max": _round(rows["discount_pct"].max()),
    }


def score(con: duckdb.DuckDBPyConnection) -> dict:
    """The pair figures of a published prices.db (opened read-only)."""
    _register_rules(con)
    pairs = con.execute(sql_text(__file__, "real_pairs_published")).df()
    families = family_figures(pairs)
    families["regional"] = regional_figures(
        con.execute(sql_text(__file__, "real_pairs_regional")).df())
    totals = {key: sum(f.get(key, 0) for f in families.values())
              for key in ("out_of_range", "machine_differs", "machine_unknown",
                          "self_comparisons")}
    return {**{f"{family}.{k}": v for family, f in families.items() for k, v in f.items()},
            **{f"total.{k}": v for k, v in totals.items()}}


if __name__ == "__main__":      # python -m tests.workshop.truth.real_pairs <published prices.db>
    import json
    import sys

    with duckdb.connect(sys.argv[1], read_only=True) as connection:
        print(json.dumps(score(connection), indent=1, ensure_ascii=False))
