-- Every market claim with its measure, interval, expected range and verdict.
select *
from marts.market_claims
