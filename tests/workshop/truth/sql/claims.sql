/* The market_claims scorecard of a database, as make truth counts it. */
select claim_id, verdict, distinct_offers, vendors, ci_low, ci_high
from marts.market_claims
