/* Card history: the price history per card, the daily close per GPU-hour (CNY) of each
   vendor's cheapest whole card (any GPU count), hourly on-demand, for every card and vendor:
   card_rank ranks the cards by how many vendors list them, line_rank a card's vendors, those
   still listing it on the card's latest day first, by their latest price (the report draws the
   first few of each). */
-- grain: gpu_model, vendor, day
-- audit: price_positive: price is null or price <= 0
-- audit: ranks_from_one: card_rank < 1 or line_rank < 1
with daily as (
    select
        observed_date as day,
        gpu_model,
        vendor,
        min(close_price_cny_per_gpu_hour)::double as price,
        count(distinct offer_id)::integer as offers
    from intermediate.int_offer_daily
    where billing_period = 'hour' and offer_kind = 'on_demand' and gpu_fraction = 1
    group by observed_date, gpu_model, vendor
),

cards as (
    select
        gpu_model,
        max(day) as latest_day,
        row_number() over (order by count(distinct vendor) desc, gpu_model) as card_rank
    from daily
    group by gpu_model
),

vendors as (
    select
        d.gpu_model,
        d.vendor,
        max(d.day) = any_value(c.latest_day) as listed_now,
        arg_max(d.price, d.day) as latest_price
    from daily as d
    inner join cards as c on d.gpu_model = c.gpu_model
    group by d.gpu_model, d.vendor
),

lines as (
    select
        gpu_model,
        vendor,
        row_number() over (
            partition by gpu_model order by listed_now desc, latest_price asc, vendor asc
        ) as line_rank
    from vendors
)

select
    c.card_rank,            -- 1 = the card the most vendors list (ties by gpu_model)
    d.gpu_model,
    l.line_rank,            -- 1 = the card's first vendor: listing it on its latest day, cheapest
    d.vendor,
    d.day,
    d.price,                -- CNY per GPU-hour: the vendor's cheapest daily close
    d.offers
from daily as d
inner join cards as c on d.gpu_model = c.gpu_model
inner join lines as l on d.gpu_model = l.gpu_model and d.vendor = l.vendor
order by c.card_rank, l.line_rank, d.day
