-- Each saved workload's best option, then the best of each other kind (the advisor's table),
-- with each option's interconnect and the workload's verdicts of the guides' rules.
select *
from advisor.workload_advice
where rank = 1 or best_of_kind
order by workload, rank
