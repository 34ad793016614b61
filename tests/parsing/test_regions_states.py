"""'<state>, US' and '<postal code>, US' (and Canadian provinces) place an offer in its state for
every vendor, not only for the vendors regions.csv lists them for: `--region Texas` finds a
host that says "texas, us" or "TX, US"."""

from __future__ import annotations

import pytest

from spiders.parsing.regions import Region, RegionParseError, resolve_region

R = Region

CASES = [
    # text, vendor -> region
    ("texas, us", "vastai", R("texas, us", "US", "Texas", None, False)),
    ("Texas, US", "vast.ai", R("texas, us", "US", "Texas", None, False)),
    ("California, US", "vastai", R("california, us", "US", "California", None, False)),
    ("texas, us", "runpod", R("texas, us", "US", "Texas", None, False)),     # any vendor
    ("New  York, US", None, R("new york, us", "US", "New York", None, False)),
    ("TX, US", "vastai", R("tx, us", "US", "Texas", None, False)),           # postal code
    ("ca, us", "runpod", R("ca, us", "US", "California", None, False)),      # CA with US: a state
    ("DC, US", None, R("dc, us", "US", "District of Columbia", None, False)),
    ("ON, CA", "vastai", R("on, ca", "CA", "Ontario", None, False)),
    ("quebec, ca", "runpod", R("quebec, ca", "CA", "Quebec", None, False)),
    # no state invented
    ("georgia, ge", "vastai", R("georgia, ge", "GE", None, None, False)),    # the country
    ("XX, US", "vastai", R("xx, us", "US", None, None, False)),
    (", US", "vastai", R("us", "US", None, None, False)),
    ("TX, CA", "vastai", R("tx, ca", "CA", None, None, False)),              # not a province
]


@pytest.mark.parametrize(("text", "vendor", "expected"), CASES)
def test_state_from_name_or_postal_code(text, vendor, expected):
    assert resolve_region(text, vendor) == expected


@pytest.mark.parametrize("text", ["us-east", "east, us-ish"])
def test_no_state_from_a_direction(text):
    with pytest.raises(RegionParseError):
        resolve_region(text, "vastai")
