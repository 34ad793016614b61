"""The bench's summary of one history size, from made-up phase results: which hourly updates the
median is taken over, and what the report says when the floor was skipped."""

from tests.workshop.bench.command import parse_args
from tests.workshop.bench.history import steady_updates, summarize_size
from tests.workshop.bench.targets import targets

GIB = 1024**3


def _update(seconds: float, models: float) -> dict:
    return {"seconds": seconds, "models_seconds": models, "load_seconds": seconds - models,
            "peak_rss_bytes": GIB}


def _size(updates: list[dict], floor: dict | None) -> dict:
    size = {"days": 365, "offers": 20_000, "generate": {"peak_rss_bytes": 2 * GIB},
            "floor": floor, "full": {"seconds": 12.0, "peak_rss_bytes": 2 * GIB},
            "incremental": updates,
            "publish": {"seconds": 0.5, "peak_rss_bytes": GIB, "method": "generations",
                        "bytes": GIB}}
    size.update(summarize_size(size))
    return size


def test_the_first_update_after_the_full_rebuild_is_reported_alone():
    updates = [_update(9.0, 8.0), _update(2.0, 1.5), _update(2.4, 1.9), _update(2.2, 1.7)]
    size = _size(updates, {"seconds": 10.0, "peak_rss_bytes": GIB})
    assert steady_updates(updates) == updates[1:]
    assert size["incremental_first_seconds"] == 9.0
    assert size["incremental_median_seconds"] == 2.2
    assert size["incremental_models_median_seconds"] == 1.7
    assert size["full_over_floor"] == 1.2


def test_one_update_alone_is_its_own_median():
    size = _size([_update(3.0, 2.5)], {"seconds": 10.0, "peak_rss_bytes": GIB})
    assert size["incremental_first_seconds"] == size["incremental_median_seconds"] == 3.0


def test_a_skipped_floor_is_said_not_measured_and_the_large_target_is_judged():
    size = _size([_update(9.0, 8.0), _update(2.0, 1.5)], None)
    assert size["full_over_floor"] is None
    assert "floor" not in size["peak_rss_bytes_by_phase"]
    rows = {r["figure"].split(",")[0]: r for r in targets({"history": [size]})}
    assert rows["full rebuild / bare-DuckDB floor"]["gap"] == "not measured (--skip-floor)"
    assert rows["full rebuild / bare-DuckDB floor"]["met"] is None
    both = rows["hourly update + publish (medians)"]
    assert both["value"] == 2.5 and both["met"] is True


def test_skip_floor_and_the_default_hours_on_the_command_line():
    _, config = parse_args(["--skip-floor", "--year-offers", "20000", "--days", "365"])
    assert (config.floor, config.offers, config.sizes) == (False, 20_000, (365,))
    assert config.incremental_hours == 4      # the first, then three to take the median of
    _, default = parse_args([])
    assert default.floor is True
