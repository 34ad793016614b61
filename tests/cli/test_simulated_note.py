"""Every reading command over a simulated database (`gpuprices demo`, `simulate`) says so first,
on stderr; over real data it says nothing of the kind."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.cli.published import SIMULATED_NOTE, published_db


@pytest.mark.parametrize("simulated", [True, False])
def test_a_simulated_database_is_named_so(tmp_path, monkeypatch, capsys, simulated):
    monkeypatch.setenv("GPUPRICES_DATA_DIR", str(tmp_path))
    with duckdb.connect(str(tmp_path / "prices.db")) as con:
        con.execute("create schema marts; create table marts.latest_prices (offer_id varchar)")
        if simulated:
            con.execute("create schema truth; create table truth.scenario (offers integer)")
    with published_db("marts.latest_prices") as con:
        assert con.execute("select count(*) from marts.latest_prices").fetchone() == (0,)
    captured = capsys.readouterr()
    assert (SIMULATED_NOTE in " ".join(captured.err.split())) == simulated
    assert SIMULATED_NOTE not in captured.out
