/* Exact binomial tables for distribution-free statistics, one row per sample size n (1-400) and
   count k (0-n), under p = 1/2: the one-sided sign-test p-value P(X >= k), and for each n the
   ranks of the order-statistic confidence interval of a median (the widest interval whose
   coverage is at least 90 %; for n < 5 no interval reaches 90 %, so it is the whole sample and
   `median_ci_coverage` says how much it covers). Signals and claims join on n. */
with ks as (
    select n, unnest(range(0, n + 1)) as k
    from (select unnest(range(1, 401)) as n)
), pmf as (
    select
        n,
        k,
        exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) - n * ln(2)) as p_exactly_k
    from ks
), cdf as (
    select
        n,
        k,
        p_exactly_k,
        sum(p_exactly_k) over (partition by n order by k desc) as p_at_least_k,   -- P(X >= k)
        sum(p_exactly_k) over (partition by n order by k) as p_at_most_k         -- P(X <= k)
    from pmf
), ranks as (
    -- lower rank j (1-based): the largest j with P(X <= j - 1) <= 0.05; upper rank n + 1 - j.
    select
        n,
        coalesce(max(k + 1) filter (where p_at_most_k <= 0.05), 1) as median_ci_lower_rank
    from cdf
    group by n
)
select
    c.n,                                                -- sample size
    c.k,                                                -- count of successes (e.g. positives)
    least(c.p_at_least_k, 1.0) as p_at_least_k,         -- one-sided sign-test p-value
    r.median_ci_lower_rank,                             -- 1-based rank of the lower bound
    c.n + 1 - r.median_ci_lower_rank as median_ci_upper_rank,
    least(1.0, 1 - 2 * coalesce(
        (select p_at_most_k from cdf as x
         where x.n = c.n and x.k = r.median_ci_lower_rank - 1), 0.0))
        as median_ci_coverage                           -- P(lower <= true median <= upper)
from cdf as c
join ranks as r using (n)
order by c.n, c.k
