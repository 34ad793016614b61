"""`gpuprices simulate`: months of realistic hourly observations with known effects, in a DuckDB
file of their own, so that every signal can be tested against a known truth.

The offers are real: the latest offers of an existing database (`marts.latest_prices`), or the
bundled snapshots crawled in replay mode and normalized by the real code. Each offer's price then
follows its real price with small noise, and the effects that are switched on (month-end dips,
trends, drops, month-end listing churn, exchange-rate moves, and the structural ones: regional gaps,
region copies, slice/server/spot/monthly ratios) are injected exactly and recorded in the truth
tables (`truth.scenario`, `truth.offer_effects`). The rows have the `observations` schema and one
`raw.crawls` row per source and crawl hour, so the SQL models run on the simulated history
unchanged. See docs/simulator.md.

Everything random is a counter-based hash of (seed, offer_id, hour): an offer's price at an hour
does not depend on the other offers, on the start of the simulation or on the chunking, so the same
seed gives the same table and `append_hour` continues a history exactly as a longer simulation would
have written it. Rows are built with numpy per block of hours and inserted by DuckDB in chunks.

The package: `effects` (the time effects), `structure` (the structural effects), `calendar` (the
vendor's local calendar, as in SQL staging), `offers` (where offers come from), `randomness`,
`plan` (per-offer constants and the truth rows), `rows` (building and inserting rows), `api`
(simulate, append_hour, run_models, the truth tables, safety checks). A product module: the
commands `gpuprices simulate` and `gpuprices demo` (pipelines/cli/simulate.py, demo.py) run it;
the workshop (tests/workshop/: `make bench`, `make truth`) drives it too.
"""

from pipelines.simulate.api import (
    ModelBuild,
    SimulationResult,
    append_hour,
    check_target,
    hour_plan,
    months_to_days,
    run_models,
    simulate,
)
from pipelines.simulate.calendar import local_time_zone, month_end_window
from pipelines.simulate.common import (
    CHUNK_ROWS,
    DEFAULT_DB_NAME,
    NOISE_PCT,
    OFFER_COLUMNS,
    SimulationError,
)
from pipelines.simulate.effects import (
    Effect,
    FxMove,
    MonthEndChurn,
    MonthEndDip,
    PriceDrop,
    Trend,
    effect_record,
)
from pipelines.simulate.offers import (
    load_offers,
    offers_from_db,
    offers_from_snapshots,
    scale_offers,
)
from pipelines.simulate.structure import (
    STRUCTURAL_EFFECTS,
    MonthlyRatio,
    RegionalGap,
    RegionCopy,
    ServerRatio,
    SliceRatio,
    SpotRatio,
    apply_structure,
)
from pipelines.warehouse.db import DUCKDB_CONFIG

__all__ = ["CHUNK_ROWS", "DEFAULT_DB_NAME", "DUCKDB_CONFIG", "NOISE_PCT",
           "OFFER_COLUMNS", "STRUCTURAL_EFFECTS", "Effect", "FxMove", "ModelBuild",
           "MonthEndChurn", "MonthEndDip", "MonthlyRatio", "PriceDrop", "RegionCopy",
           "RegionalGap", "ServerRatio", "SimulationError", "SimulationResult",
           "SliceRatio", "SpotRatio", "Trend", "append_hour", "apply_structure",
           "check_target", "effect_record", "hour_plan", "load_offers",
           "local_time_zone", "month_end_window", "months_to_days", "offers_from_db",
           "offers_from_snapshots", "run_models", "scale_offers", "simulate"]
