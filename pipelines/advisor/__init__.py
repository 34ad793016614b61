"""The advisor: from a workload (model size, task, precision, usage pattern) to the cheapest
configuration of today's offers that fits it, as vendors sell it, with the guides' decision rules
applied.

Pure logic, one job per module, in the order the advice is built:

* `workload`        what the user asked for, read from the spellings people type
* `memory`          the GPU memory it needs
* `offers`          today's offers and the scorecard's measured claims (the I/O:
                    `sql/latest_offers.sql`, marts.market_claims)
* `region_filter`   `--region` text as a test on an offer
* `efficiency`      the efficiency figures and rule thresholds (efficiency.toml, cited) and the
                    price claims they cite (market_claims.sql)
* `throughput`      every card's throughput from its specifications (one model), the link
                    between its cards, slicing and parallel scaling
* `clusters`        the server sizes vendors list and the cluster interconnects they state
                    (clusters.toml)
* `billing`         what a rental costs under its billing period
* `configurations`  every way an offer can run the workload, costed
* `decision_rules`  the guides' rules as verdicts (whole vs slice, exclusive vs shared, single vs
                    multi-GPU, spot, monthly vs hourly)
* `recommend`       the ranking, cheapest first, the best of each kind, and the verdicts
* `records`         the rows of advisor.workload_advice
* `profiles`        saved workload profiles (workloads.yaml)

Every number is a documented rule of thumb (docs/advisor.md), shown to the user next to the
answer it produced (`gpuprices advise --explain` lists them with their sources).
"""

from pipelines.advisor.billing import TERM_DAYS, Bill, bill
from pipelines.advisor.clusters import ClusterStatement, server_sizes, stated_cluster
from pipelines.advisor.configurations import KINDS, Option, configurations
from pipelines.advisor.decision_rules import RULES, Verdict, verdicts
from pipelines.advisor.efficiency import explain_lines
from pipelines.advisor.memory import Estimate, estimate_memory
from pipelines.advisor.offers import Offer, measured_claims_from_db, offers_from_db
from pipelines.advisor.profiles import parse_profiles
from pipelines.advisor.recommend import Advice, advise
from pipelines.advisor.records import ADVICE_COLUMNS, advice_records, option_record
from pipelines.advisor.region_filter import region_predicate
from pipelines.advisor.throughput import (
    Link,
    card_throughput,
    data_parallel_cards,
    interconnect,
    model_parallel_efficiency,
    modeled_throughput,
    throughput_table,
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
    "RULES",
    "TASKS",
    "TERM_DAYS",
    "Advice",
    "AdvisorError",
    "Bill",
    "ClusterStatement",
    "Estimate",
    "Link",
    "Offer",
    "Option",
    "Verdict",
    "Workload",
    "advice_records",
    "advise",
    "bill",
    "card_throughput",
    "configurations",
    "data_parallel_cards",
    "estimate_memory",
    "explain_lines",
    "interconnect",
    "measured_claims_from_db",
    "model_parallel_efficiency",
    "modeled_throughput",
    "offers_from_db",
    "option_record",
    "parse_params",
    "parse_precision",
    "parse_profiles",
    "parse_task",
    "region_predicate",
    "server_sizes",
    "stated_cluster",
    "throughput_table",
    "verdicts",
]
