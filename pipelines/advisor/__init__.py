"""The advisor: from a workload (model size, task, precision, usage pattern) to the cheapest
configuration of today's offers that fits it.

Pure logic, one job per module, in the order the advice is built:

* `workload`        what the user asked for, read from the spellings people type
* `memory`          the GPU memory it needs
* `offers`          today's offers (`offers_from_db`, the one piece of I/O: `sql/latest_offers.sql`)
* `region_filter`   `--region` text as a test on an offer
* `throughput`      relative throughput of each card, slicing and parallel scaling
* `billing`         what a rental costs under its billing period
* `configurations`  every way an offer can run the workload, costed
* `recommend`       the ranking, cheapest first, and the best of each kind
* `records`         the rows of advisor.workload_advice
* `profiles`        saved workload profiles (workloads.yaml)

Every number is a documented rule of thumb (docs/advisor.md), shown to the user next to the
answer it produced.
"""

from pipelines.advisor.billing import TERM_DAYS, Bill, bill
from pipelines.advisor.configurations import KINDS, Option, configurations
from pipelines.advisor.memory import Estimate, estimate_memory
from pipelines.advisor.offers import Offer, offers_from_db
from pipelines.advisor.profiles import parse_profiles
from pipelines.advisor.recommend import Advice, advise
from pipelines.advisor.records import ADVICE_COLUMNS, advice_records, option_record
from pipelines.advisor.region_filter import region_predicate
from pipelines.advisor.throughput import (
    THROUGHPUT,
    card_throughput,
    data_parallel_cards,
    interconnect,
    model_parallel_efficiency,
)
from pipelines.advisor.workload import (
    PRECISIONS,
    TASKS,
    AdvisorError,
    Workload,
    parse_params,
    parse_precision,
    parse_task,
)

__all__ = [
    "ADVICE_COLUMNS",
    "KINDS",
    "PRECISIONS",
    "TASKS",
    "TERM_DAYS",
    "THROUGHPUT",
    "Advice",
    "AdvisorError",
    "Bill",
    "Estimate",
    "Offer",
    "Option",
    "Workload",
    "advice_records",
    "advise",
    "bill",
    "card_throughput",
    "configurations",
    "data_parallel_cards",
    "estimate_memory",
    "interconnect",
    "model_parallel_efficiency",
    "offers_from_db",
    "option_record",
    "parse_params",
    "parse_precision",
    "parse_profiles",
    "parse_task",
    "region_predicate",
]
