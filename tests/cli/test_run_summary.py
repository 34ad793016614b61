"""The run summary names where the report is and what became of the alerts: read from the
materializations of a real (tiny) Dagster run with the same asset keys as the pipeline's."""

from __future__ import annotations

import dagster as dg
import pytest

from pipelines.cli.run_summary import outputs_summary


def run_with(report: bool, alerts: dict | None):
    assets = []
    if report:
        @dg.asset(key=["report", "price_report"])
        def price_report() -> dg.MaterializeResult:
            return dg.MaterializeResult(metadata={
                "path": dg.MetadataValue.path("/data/report/index.html")})
        assets.append(price_report)
    if alerts is not None:
        @dg.asset(key=["alerts", "price_alerts"])
        def price_alerts() -> dg.MaterializeResult:
            return dg.MaterializeResult(metadata={
                **alerts, "channels": dg.MetadataValue.json(alerts["channels"])})
        assets.append(price_alerts)

    @dg.asset
    def other() -> None:
        return None

    return dg.materialize([*assets, other], raise_on_error=False)


@pytest.mark.parametrize(("alerts", "expected"), [
    ({"detected": 3, "delivered": 2, "failed": 1, "pending": 1, "channels": ["json"]},
     "alerts: 3 new; 2 sent, 1 failed, 1 unsent in alerts.outbox"),
    ({"detected": 4, "delivered": 0, "failed": 0, "pending": 4, "channels": []},
     "alerts: 4 new, none sent: no notification URLs configured; 4 wait in alerts.outbox"),
])
def test_summary_names_the_report_and_the_alerts(alerts, expected):
    report_line, alerts_line = outputs_summary(run_with(report=True, alerts=alerts))
    assert report_line == "report: /data/report/index.html"
    assert alerts_line.startswith(expected)


def test_summary_says_when_neither_ran():
    report_line, alerts_line = outputs_summary(run_with(report=False, alerts=None))
    assert "report: not written this run" in report_line
    assert "alerts: not checked this run" in alerts_line and "alerts.outbox" in alerts_line
