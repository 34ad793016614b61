/* a saved workload's latest best option (`advisor.workload_advice_history`, appended by the
   advisor asset each run) costs at least `min_drop_pct` % (10) less in total than its previous
   best; nothing before the advisor has run twice (a missing table is skipped) */
-- key: workload, computed_at
-- Rule `workload_cheaper`: each saved workload's latest best option (the advisor appends one row
-- per workload and run to advisor.workload_advice_history) at least $min_drop_pct % cheaper in
-- total than its previous one. Only the latest row can alert, and its key names it, so a re-run
-- of detection, or a cost that stays low, never alerts twice.
with ranked as (
    select *, row_number() over (partition by workload order by computed_at desc) as recency
    from advisor.workload_advice_history
),

compared as (
    select
        latest.*, previous.total_cost_cny as previous_cost_cny,
        previous.computed_at as previous_computed_at,
        previous.configuration as previous_configuration, previous.vendor as previous_vendor,
        100 * (previous.total_cost_cny - latest.total_cost_cny)::double
        / previous.total_cost_cny::double as drop_pct
    from ranked as latest
    inner join ranked as previous on latest.workload = previous.workload and previous.recency = 2
    where latest.recency = 1
        and previous.total_cost_cny > 0
)

select * from compared
where drop_pct >= $min_drop_pct
order by workload
