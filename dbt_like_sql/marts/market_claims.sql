/* Market claims: one row per rule of thumb the published Chinese GPU-rental guides (2024-2026)
   state, as listed in docs/market-claims.md, scored on the current market (each offer's latest day
   within the price horizon of the table's newest day: marts.market_claim_evidence), over the days
   `measured_from`-`measured_on`. Evidence = its DISTINCT offers (region copies once). The median of
   their values gets an order-statistic interval (ranks from intermediate.int_sign_test: the widest
   interval with >= 90 % coverage; above n = 400 the normal approximation of those ranks, coverage
   about 90 %), and the verdict is one of the three of pipelines/verdicts.py, read from the
   interval: 'holds' inside the expected range, 'does not hold' entirely outside it, else 'not
   enough evidence', never 'does not hold' for "not yet". What is lacking (`evidence_lacking`): 'no
   offer in scope'; 'illustrative prices only' when no distinct offer has a real price
   (is_real_price of the offer's own price_basis, marts.latest_prices, else its source's,
   intermediate.int_source_price_basis: modeled and undated prices are not real): no verdict is read
   from invented or undated numbers; 'too few offers' below 5 (no interval of a median reaches 90 %
   below 5: 1 - 2/2^4 = 0.875); 'interval overlaps the range' when it straddles an edge. Beside it
   `distinct_offers_needed`: how many distinct offers a verdict would need. The minimum and the
   interval's constants: the `params` CTE; each claim's expected range: the `claims` CTE. */
-- grain: claim_id
-- audit: has_verdict: verdict is null
-- alias: market_claims
with params as (
    select
        -- No verdict below 5 distinct offers: no interval of a median reaches 90 % coverage with
        -- fewer (1 - 2/2^4 = 0.875).
        5 as min_distinct_offers,
        -- intermediate.int_sign_test gives exact ranks up to n = 400; above, the normal
        -- approximation of the same 90 % rule: z = 1.6449 (one-sided 5 % tail), coverage about
        -- 90 %.
        400 as exact_max_n,
        1.6449 as ci_z,
        0.90 as normal_ci_coverage
),

claims as (
    select c.*
    from (
        values
        (
            1, 'a100_80gb_beijing_hourly', 'A100 80 GB whole card costs 50-80 CNY/h in Beijing',
            'price per GPU-hour, CNY', 'whole single A100-80GB cards, hourly on-demand, Beijing',
            50.0, 80.0, 'a100-80-gb-in-beijing', null
        ),
        (
            2, 'slice_20gb_hourly', 'A 20 GB slice costs 20-30 CNY/h',
            'the slice instance''s hourly price, CNY/h',
            'A100 slices with 20 GB of VRAM, hourly on-demand, China', 20.0, 30.0,
            'slice-prices', null
        ),
        (
            3, 'slice_40gb_hourly', 'A 40 GB slice costs 30-50 CNY/h',
            'the slice instance''s hourly price, CNY/h',
            'A100 slices with 40 GB of VRAM, hourly on-demand, China', 30.0, 50.0,
            'slice-prices', null
        ),
        (
            4, 'slice_share_of_whole',
            'A slice costs 30-50 % of the whole card of the same model (not a pro-rata fraction)',
            'slice price / whole-card price, %',
            'quarter slices (gpu_fraction 0.25) of A100/H100/H800/RTX 4090 against the whole card '
            || 'of the same vendor, region, model, variant, kind and term', 30.0, 50.0,
            'slice-share-of-the-whole-card', null
        ),
        (
            5, 'quarter_a100_share_of_whole', 'A 1/4 A100 instance costs 1/3-1/2 of the whole card',
            'slice price / whole-card price, %',
            'A100 slices with gpu_fraction 0.25 against the whole A100 card of the same vendor, '
            || 'region, model, variant, kind and term', 100.0 / 3, 50.0,
            'slice-share-of-the-whole-card', null
        ),
        (
            6, 'half_a100_hourly', 'A 1/2 A100 instance costs about 15 CNY/h',
            'the slice instance''s hourly price, CNY/h (about = +-20 %)',
            'A100 slices with gpu_fraction 0.5, hourly on-demand, China', 12.0, 18.0,
            'slice-prices', null
        ),
        (
            7, 'a100_80gb_monthly', 'A100 80 GB costs 8,000-14,000 CNY/month',
            'listed monthly price, CNY/month',
            'whole single A100-80GB cards billed monthly, not spot, China', 8000.0, 14000.0,
            'monthly-prices', null
        ),
        (
            8, 'server_8gpu_monthly', 'An 8-GPU A100 80 GB server costs 60,000-80,000 CNY/month',
            'listed monthly price, CNY/month',
            '8 x A100-80GB servers billed monthly, not spot, China', 60000.0, 80000.0,
            'monthly-prices', null
        ),
        (
            9, 'server_8gpu_share_of_single',
            'Renting a whole 8-GPU server is discounted to 70-85 % of 8 x the single-card price',
            'server price per GPU / single-card price, %',
            '8-GPU servers of A100/H100/H800/RTX 4090 against a single card of the same vendor, '
            || 'region, model, variant, kind and term', 70.0, 85.0, 'eight-gpu-server-share', null
        ),
        (
            10, 'jiangsu_a100_80gb_hourly', 'Jiangsu hourly: A100 80 GB costs 20-35 CNY/h',
            'price per GPU-hour, CNY', 'whole single A100-80GB cards, hourly on-demand, Jiangsu',
            20.0, 35.0, 'jiangsu-hourly', null
        ),
        (
            11, 'jiangsu_h800_hourly', 'Jiangsu hourly: H800 costs 40-60 CNY/h',
            'price per GPU-hour, CNY', 'whole single H800 cards, hourly on-demand, Jiangsu',
            40.0, 60.0, 'jiangsu-hourly', null
        ),
        (
            12, 'monthly_package_saving',
            'Monthly packages save 20-40 %+ versus paying hourly for a full month',
            'saving of the monthly price against 730 h of the paired hourly price, %',
            'monthly offers of A100/H100/H800/RTX 4090 paired with an hourly offer of the same '
            || 'vendor, region, line and kind (not spot)', 20.0, null, 'monthly-package-saving',
            null
        ),
        (
            13, 'inner_mongolia_guizhou_discount',
            'Inner Mongolia / Guizhou data centres are 20-30 % cheaper than '
            || 'Beijing/Shanghai/Shenzhen',
            '100 x (1 - region price / the same vendor''s tier-1 price of the line), %',
            'offer lines of A100/H100/H800/RTX 4090 (not spot) a vendor lists in Inner Mongolia '
            || 'or Guizhou AND in a CN tier-1 city', 20.0, 30.0, 'inner-mongolia-and-guizhou',
            'no vendor lists the same line in Inner Mongolia or Guizhou and in a tier-1 city'
        ),
        (
            14, 'spot_share_of_regular',
            'Spot/preemptible instances cost about 20 % of the regular exclusive price',
            'spot price / paired on-demand price, % (about = +-20 %)',
            'spot offers of A100/H100/H800/RTX 4090 paired with the on-demand offer of the same '
            || 'instance type (SKU) or line at the same vendor, region and term', 16.0, 24.0,
            'spot-share', null
        ),
        (
            15, 'month_end_dips',
            'Around month end, users'' budgets run out and low-price capacity is released: '
            || 'prices dip', 'a group''s median month-end depth below its mid-month-to-next-start '
            || 'line, % (marts.month_end_dip)',
            'hourly offers of A100/H100/H800/RTX 4090 (not spot) followed through the latest '
            || 'complete local month, per vendor, card, variant, region and kind', 1.0, null,
            'month-end-dip', 'no offer was seen in days 8-22, the last 5 days and the next 1-7'
        ),
        (
            16, 'month_end_capacity_release',
            'Around month end, users'' budgets run out and some capacity is released',
            'a group''s available offers at month end against the mean of mid-month and the next '
            || 'start, % (marts.month_end_capacity)',
            'hourly offers of A100/H100/H800/RTX 4090 (not spot) in the latest complete local '
            || 'month, per vendor, card, variant, region and kind', 10.0, null,
            'month-end-capacity', 'no group was seen in days 8-22, the last 5 days and the next 1-7'
        ),
        (
            17, 'month_start_mid_month_stable', 'Month start and mid-month are stable',
            'an offer''s mean absolute day-to-day change over local days 2-22, % per day '
            || '(marts.month_phase_stability)',
            'offers of A100/H100/H800/RTX 4090 (not spot) with 10+ day-to-day changes in days 2-22 '
            || 'of the latest such local month', 0.0, 0.25, 'month-start-and-mid-month',
            'no offer was followed on 10+ consecutive-day pairs within local days 2-22 of a month'
        ),
        (
            18, 'holiday_promotions', 'Holidays bring promotions',
            'an offer''s holiday price below its own price 21-8 days before, % '
            || '(marts.holiday_discount)',
            'offers of Chinese vendors, A100/H100/H800/RTX 4090 (not spot), latest Chinese public '
            || 'holiday the history covers', 1.0, null, 'holidays',
            'the history covers no Chinese public holiday with 3+ baseline days 21-8 days before it'
        ),
        (
            19, 'off_peak_discounts', 'Off-peak (night) discounts exist',
            'an offer''s local-night (00:00-06:59) price below its own daytime price the same '
            || 'local day, % (marts.off_peak_discount)',
            'hourly on-demand offers of A100/H100/H800/RTX 4090 seen at night and by day, latest '
            || 'local day', 1.0, null, 'off-peak-night-discounts',
            'no hourly offer was seen both at local night and by day on one day: needs night crawls'
        )
    ) as c (
        claim_no, claim_id, claim, measure, scope, expected_low, expected_high, anchor,
        empty_reason
    )
),

-- A distinct value is not real when no offer behind it has a real price: the offer's basis, else
-- its source's (month-end ids: "source|region"); one that states no basis is not held back.
unit_basis as (
    select
        e.claim_id,
        e.value_rank,
        bool_and(
            coalesce(not is_real_price(coalesce(l.price_basis, b.price_basis)), false)
            and coalesce(l.price_basis, b.price_basis) is not null
        ) as illustrative
    from marts.market_claim_evidence as e
    cross join unnest(e.offer_ids) as u (offer_id)
    left join marts.latest_prices as l on u.offer_id = l.offer_id
    left join intermediate.int_source_price_basis as b
        on coalesce(l.source, split_part(u.offer_id, '|', 1)) = b.source
    group by e.claim_id, e.value_rank
),

stats as (
    select
        e.claim_id,
        min(e.measured_on) as measured_from,
        max(e.measured_on) as measured_on,
        any_value(e.distinct_offers) as n,
        sum(e.offers)::bigint as offers,
        count(distinct e.vendor) as vendors,
        count(*) filter (where u.illustrative) as illustrative_offers,
        median(e.value) as median_value,
        list(e.value order by e.value_rank) as sorted_values
    from marts.market_claim_evidence as e
    left join unit_basis as u on e.claim_id = u.claim_id and e.value_rank = u.value_rank
    group by e.claim_id
),

ranked as (
    select
        s.*,
        -- exact ranks up to exact_max_n; above, n/2 + 1/2 -+ z sqrt(n)/2 (normal approximation
        -- with continuity correction of the same binomial rule: gives 184 at n = 400, as the
        -- table)
        coalesce(
            t.median_ci_lower_rank,
            greatest(1, floor(s.n / 2 + 0.5 - p.ci_z * sqrt(s.n) / 2))::bigint
        ) as lower_rank,
        coalesce(
            t.median_ci_upper_rank,
            s.n + 1 - greatest(1, floor(s.n / 2 + 0.5 - p.ci_z * sqrt(s.n) / 2))::bigint
        ) as upper_rank,
        coalesce(t.median_ci_coverage, p.normal_ci_coverage) as ci_coverage,
        case
            when s.n <= p.exact_max_n then 'order statistics, exact binomial'
            else 'order statistics, normal approximation (n > ' || p.exact_max_n || ')'
        end as ci_method
    from stats as s
    cross join params as p
    left join intermediate.int_sign_test as t
        on s.n = t.n and t.k = 0
),

scored as (
    select
        c.*,
        p.min_distinct_offers,
        r.measured_from,
        r.measured_on,
        coalesce(r.offers, 0) as offers,
        coalesce(r.n, 0) as distinct_offers,
        coalesce(r.vendors, 0) as vendors,
        coalesce(r.illustrative_offers, 0) as illustrative_offers,
        r.median_value,
        r.sorted_values[r.lower_rank] as ci_low,
        r.sorted_values[r.upper_rank] as ci_high,
        r.ci_method,
        r.ci_coverage
    from claims as c
    cross join params as p
    left join ranked as r on c.claim_id = r.claim_id
),

judged as (
    select
        s.*,
        -- Which side of the range the interval of the median lies on, if it lies on one.
        case
            when
                s.ci_low >= s.expected_low
                and (s.expected_high is null or s.ci_high <= s.expected_high)
                then 'inside'
            when s.ci_high < s.expected_low or s.ci_low > s.expected_high then 'outside'
            else 'overlaps'
        end as interval_position,
        case
            when s.distinct_offers = 0 then 'no offer in scope'
            when s.illustrative_offers = s.distinct_offers then 'illustrative prices only'
            when s.distinct_offers < s.min_distinct_offers then 'too few offers'
        end as withheld_for
    from scored as s
),

lacking as (
    select
        j.*,
        coalesce(
            j.withheld_for,
            case when j.interval_position = 'overlaps' then 'interval overlaps the range' end
        ) as evidence_lacking,
        -- An overlapping interval: the half-widths of an order-statistic interval of a median
        -- shrink like 1/sqrt(n), so at the present median the interval clears the edge once
        -- n' / n >= (half-width / distance of the median to the edge)^2; inside the range both
        -- edges must be cleared (the larger ratio). Null when the median sits on an edge.
        case
            when
                j.median_value > j.expected_low
                and (j.expected_high is null or j.median_value < j.expected_high)
                then greatest(j.distinct_offers + 1, ceil(round(j.distinct_offers * greatest(
                    ((j.median_value - j.ci_low) / (j.median_value - j.expected_low)) ^ 2,
                    coalesce(
                        ((j.ci_high - j.median_value) / (j.expected_high - j.median_value)) ^ 2,
                        0
                    )
                ), 9)))
            -- outside: "entirely outside" is strict, so one past the boundary
            when j.median_value < j.expected_low
                then floor(round(j.distinct_offers * (
                    (j.ci_high - j.median_value) / (j.expected_low - j.median_value)
                ) ^ 2, 9)) + 1
            when j.median_value > j.expected_high
                then floor(round(j.distinct_offers * (
                    (j.median_value - j.ci_low) / (j.median_value - j.expected_high)
                ) ^ 2, 9)) + 1
        end::bigint as offers_to_clear_edge
    from judged as j
)

select
    claim_id,                                           -- short slug
    claim,                                              -- the rule of thumb, in the guides' words
    measure,                                            -- what one evidence value is, its unit
    scope,                                              -- which offers the claim looks at
    measured_from,                                      -- first day (month, holiday) measured
    measured_on,                                        -- latest day, month or holiday measured
    offers,                                             -- offers in scope (region copies too)
    -- n: distinct evidence values (copies of one offer in many regions: once)
    distinct_offers,
    vendors,                                            -- distinct vendors behind them
    illustrative_offers,                                -- of them, with no real price
    round(median_value, 4)::double as median_value,     -- median of the distinct values
    round(ci_low, 4)::double as ci_low,                 -- interval of the median (order stats)
    round(ci_high, 4)::double as ci_high,
    ci_method,                                          -- exact binomial ranks or normal approx.
    round(ci_coverage, 6)::double as ci_coverage,       -- P(interval holds the true median)
    expected_low::double as expected_low,               -- the claim's range
    expected_high::double as expected_high,             -- null: open-ended ("20-40 %+")
    min_distinct_offers,                                -- no verdict on fewer distinct offers
    -- read from the interval: holds | does not hold | not enough evidence (pipelines/verdicts.py)
    case
        when evidence_lacking is not null then 'not enough evidence'
        when interval_position = 'inside' then 'holds'
        else 'does not hold'
    end as verdict,
    -- what a verdict lacks: too few offers | interval overlaps the range | illustrative prices
    -- only | no offer in scope; null when there is a verdict
    evidence_lacking,
    -- distinct offers a verdict would need: the minimum when too few (or none); one real-priced
    -- offer more (and the minimum) when all are illustrative; for an overlapping interval the n
    -- at which, narrowing like 1/sqrt(n), it would clear the edge at the present median (null:
    -- the median sits on the edge); null when there is a verdict
    case evidence_lacking
        when 'no offer in scope' then min_distinct_offers
        when 'too few offers' then min_distinct_offers
        when 'illustrative prices only'
            then greatest(min_distinct_offers, distinct_offers + 1)
        when 'interval overlaps the range' then offers_to_clear_edge
    end as distinct_offers_needed,
    case
        when distinct_offers = 0
            then coalesce(empty_reason, 'no offer in scope within the price horizon')
            || '; a verdict needs ' || min_distinct_offers || ' distinct offers'
        when evidence_lacking = 'illustrative prices only'
            then 'all ' || distinct_offers || ' distinct offer'
            || case when distinct_offers = 1 then '' else 's' end
            || ' have no real price (modeled or undated): no verdict until real '
            || 'prices land (a verdict needs '
            || greatest(min_distinct_offers, distinct_offers + 1)
            || ' distinct offers, at least one of them real-priced)'
        when evidence_lacking = 'too few offers'
            then 'only ' || distinct_offers || ' distinct offer'
            || case when distinct_offers = 1 then '' else 's' end || ' (minimum '
            || min_distinct_offers || '): below 5 no interval of a median reaches 90 %'
        when interval_position = 'inside'
            then 'the interval of the median lies inside the expected range'
        when interval_position = 'outside'
            then 'the interval of the median lies entirely outside the expected range'
        when offers_to_clear_edge is null
            then 'the interval of the median overlaps the edge of the expected range, and the '
            || 'median sits on that edge: more offers at these prices would not clear it'
        else 'the interval of the median overlaps the edge of the expected range: at the '
            || 'present median about ' || offers_to_clear_edge || ' distinct offers (now '
            || distinct_offers || ') would narrow it clear of the edge'
    end as reason,                                      -- why this verdict, what is lacking
    'docs/market-claims.md#' || anchor as source_doc    -- the claim, its source and measure
from lacking
order by claim_no
