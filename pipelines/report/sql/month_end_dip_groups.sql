-- The month-end dip groups with at least one month, each on its latest month's row (it carries
-- the group's test), strongest first. Parameter: how many rows to show.
select *
from marts.month_end_dip
where months_observed >= 1
qualify row_number() over (
        partition by source, vendor, gpu_model, gpu_variant, region_code, offer_kind
        order by month desc
    ) = 1
order by
    case dip_verdict when 'holds' then 0 when 'not enough evidence' then 1 else 2 end,
    p_value asc nulls last, strength_pct desc nulls last, gpu_model asc, vendor asc
limit ?
