-- The index's rules (one row): intermediate.int_index_rules is their one home.
select
    method_version,
    max_relative,
    stale_after_hours,
    min_vendors,
    coverage_days,
    bootstrap_replicates,
    interval_level
from intermediate.int_index_rules
