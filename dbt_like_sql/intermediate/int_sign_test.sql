/* Exact binomial tables for distribution-free statistics, one row per sample size n (1-400) and
   count k (0-n), under p = 1/2: the one-sided sign-test p-value P(X >= k), and for each n the
   ranks of the order-statistic confidence interval of a median (the widest interval whose
   coverage is at least 90 %; for n < 5 no interval reaches 90 %, so it is the whole sample and
   `median_ci_coverage` says how much it covers). Signals and claims join on n. The table's size
   and the interval's tail: the `params` CTE. */
with params as (
    select
        -- Sample sizes tabulated: n = 1-400 (80,600 rows); above, where the normal
        -- approximation is close, the readers use it instead.
        400 as max_n,
        -- Each tail of the median's interval holds at most 5 %: an interval of at least 90 %
        -- coverage, the level the claims and the month-end dip report.
        0.05 as ci_tail
),

sizes as (
    select unnest(range(1, p.max_n + 1)) as n
    from params as p
),

ks as (
    select n, unnest(range(0, n + 1)) as k
    from sizes
),

pmf as (
    select
        n,
        k,
        exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) - n * ln(2)) as p_exactly_k
    from ks
),

cdf as (
    select
        n,
        k,
        p_exactly_k,
        sum(p_exactly_k) over (partition by n order by k desc) as p_at_least_k,   -- P(X >= k)
        sum(p_exactly_k) over (partition by n order by k) as p_at_most_k         -- P(X <= k)
    from pmf
),

ranks as (
    -- lower rank j (1-based): the largest j with P(X <= j - 1) <= ci_tail; upper rank n + 1 - j.
    select
        c.n,
        coalesce(
            max(c.k + 1) filter (where c.p_at_most_k <= p.ci_tail), 1
        ) as median_ci_lower_rank
    from cdf as c
    cross join params as p
    group by c.n
)

select
    c.n,                                                -- sample size
    c.k,                                                -- count of successes (e.g. positives)
    least(c.p_at_least_k, 1.0) as p_at_least_k,         -- one-sided sign-test p-value
    r.median_ci_lower_rank,                             -- 1-based rank of the lower bound
    c.n + 1 - r.median_ci_lower_rank as median_ci_upper_rank,
    least(1.0, 1 - 2 * coalesce(x.p_at_most_k, 0.0))
        as median_ci_coverage                           -- P(lower <= true median <= upper)
from cdf as c
inner join ranks as r on c.n = r.n
left join cdf as x on c.n = x.n and r.median_ci_lower_rank - 1 = x.k
order by c.n, c.k
