-- Every place the latest offers are in: what --region text is matched against.
select distinct region_code, country, province_or_state, city
from marts.latest_prices
