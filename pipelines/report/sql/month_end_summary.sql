-- The month-end section's counts (marts.month_end_counts, one row).
select
    dip_groups,
    dips_holding,
    dips_not_holding,
    dips_undecided,
    dip_months_needed,
    capacity_groups,
    capacity_released,
    capacity_not_released,
    capacity_undecided,
    latest_month
from marts.month_end_counts
