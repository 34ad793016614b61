"""Moving a reading out of a spider into the shared parsing and normalization changes no row:
the recorded snapshots of lambda_cloud, tencent_cn_list and huaweicloud_cn normalize to the rows
(or quarantine reasons) recorded before the move (tests/spiders/snapshot_rows.py)."""

from tests.spiders.snapshot_rows import RECORD, rows


def test_the_recorded_snapshots_normalize_to_the_rows_recorded_before_the_move():
    recorded = RECORD.read_text(encoding="utf-8").splitlines()
    assert len(recorded) == 111
    assert rows() == recorded
