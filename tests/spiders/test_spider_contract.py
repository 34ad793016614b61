"""The spider contract (tests/helpers/spider_contract.py) over every source of the registry, on
each path its snapshot records; and the contract itself, shown to fail on each kind of broken
offer (a check that cannot fail checks nothing)."""

import pytest

from spiders.layout import REPO_ROOT
from spiders.registry import source_names, spider_class
from tests.helpers import responses, spider_contract
from tests.helpers.converter_guard import (
    KNOWN_COMPUTATIONS,
    computed_numbers,
    converter_imports,
    unknown_computations,
)
from tests.helpers.spider_contract import (
    EXPECTED_QUARANTINES,
    KEYED,
    KNOWN_EXCEPTIONS,
    OFFER_CHECKS,
    OFFER_KEYS,
    PUBLIC,
    contract_problems,
    leaked_keys,
    path_problems,
    paths,
    replayed,
    source_problems,
)

PATHS = [(source, path) for source in source_names() for path in paths(source)]


@pytest.mark.parametrize("source, path", PATHS, ids=[f"{s}-{p}" for s, p in PATHS])
def test_every_path_of_every_source_meets_the_contract(source, path):
    assert path_problems(source, path) == {}


@pytest.mark.parametrize("source", source_names())
def test_every_source_reads_its_whole_snapshot_and_needs_each_exception(source):
    assert source_problems(source) == {}


SPIDER_MODULES = sorted([*(REPO_ROOT / "spiders" / "vendors").glob("*.py"),
                         *(REPO_ROOT / "spiders" / "base").glob("*.py")])


@pytest.mark.parametrize("module", SPIDER_MODULES, ids=[m.name for m in SPIDER_MODULES])
def test_no_spider_converts_a_unit_or_parses_a_price(module):
    """Rule: no spider module imports a unit converter, a price parser or the count reader
    (spiders/parsing/units.py, machine.py, counts.py, parse_price, per_hour, fx_rate ...): a
    spider hands numbers as served with their unit, and normalization alone reads prices and
    counts and converts units."""
    assert converter_imports(module) == []


@pytest.mark.parametrize("module", SPIDER_MODULES, ids=[m.name for m in SPIDER_MODULES])
def test_no_spider_computes_a_price_or_reads_a_number_out_of_a_text(module):
    """Rule: no spider module multiplies, divides or adds a money amount (a Decimal) or casts
    a number a regular expression read out of a text ("8x" -> 8, "8颗" -> 8, "$3.99" -> 3.99):
    the text goes to normalization as written (KNOWN_COMPUTATIONS: the few that stay, why)."""
    assert unknown_computations(module) == []


def test_every_known_computation_is_still_there():
    modules = {m.name: m for m in SPIDER_MODULES}
    for name, known in KNOWN_COMPUTATIONS.items():
        found = {f.split(": ", 1)[1] for f in computed_numbers(modules[name])}
        assert set(known) <= found, name


@pytest.mark.parametrize("code, finding", [
    # lambda_cloud before issue 40: the page's per-GPU "$3.99" times the "8x" of the name
    ("m, price = INSTANCE_RE.match(instance), PRICE_RE.search(text)\n"
     "count, listed = int(m[1]), Decimal(price[1])\nx = str(listed * count)\n",
     ["int(m[1])", "Decimal(price[1])", "listed * count"]),
    # tencent_cn_list before: "8颗" read in the spider
    ("match = _COUNT.fullmatch(cell)\ncount = int(match.group(1))\n", ["int(match.group(1))"]),
    # huaweicloud_cn before: "2 * NVIDIA T4" read in the spider
    ("m = _RE.match(text)\ncards, card = m.groups()\ncount = int(cards)\n", ["int(cards)"]),
    ("amount = Decimal(units) + Decimal(nanos) / 10**9\n", ["Decimal(units) + "]),
    ("count = int(row['gpus'])\ntotal = count * 2\n", []),   # a served number: not found
])
def test_the_computation_guard_finds_arithmetic_and_text_reads(tmp_path, code, finding):
    module = tmp_path / "bad_spider.py"
    module.write_text(code, encoding="utf-8")
    found = " | ".join(computed_numbers(module))
    assert all(f in found for f in finding) and bool(found) == bool(finding), found


def test_the_converter_guard_finds_an_import(tmp_path):
    """The guard above can fail: an import of a converter or a price parser is named."""
    module = tmp_path / "bad_spider.py"
    module.write_text("from spiders.parsing.units import major_units\n"
                      "from spiders.parsing.prices import displayed_text, parse_price\n"
                      "import spiders.parsing.machine\n"
                      "from spiders.parsing.counts import gpu_count_in_text\n"
                      "from spiders.parsing import fx_rate, gpu_family, counts\n",
                      encoding="utf-8")
    assert converter_imports(module) == [
        "bad_spider.py: from spiders.parsing.units import major_units",
        "bad_spider.py: from spiders.parsing.prices import parse_price",
        "bad_spider.py: import spiders.parsing.machine",
        "bad_spider.py: from spiders.parsing.counts import gpu_count_in_text",
        "bad_spider.py: from spiders.parsing import fx_rate",     # re-exported by the package
        "bad_spider.py: from spiders.parsing import counts"]


@pytest.mark.parametrize("source, path", PATHS, ids=[f"{s}-{p}" for s, p in PATHS])
def test_typed_fields_carry_the_vendors_unit_as_served(source, path):
    """Rule: an offer's typed fields (price_amount with price_unit, vcpus, memory, disk, vram)
    hold numbers as the vendor serves them, each size with its unit from the tables normalization
    converts with (check "units"; part of the whole contract above, named here on its own)."""
    offers = replayed(source, path).offers
    assert contract_problems(source, offers).get("units", []) == []


def test_the_contract_names_only_registered_sources_and_checks():
    sources = set(source_names())
    assert set(OFFER_KEYS) | set(EXPECTED_QUARANTINES) <= sources
    assert {source for source, _ in KNOWN_EXCEPTIONS} <= sources
    assert {check for _, check in KNOWN_EXCEPTIONS} <= set(OFFER_CHECKS)
    assert all(why for quarantines in EXPECTED_QUARANTINES.values()
               for why in quarantines.values())


def test_paths_follow_the_keys_a_source_needs():
    assert paths("azure") == (PUBLIC,)                       # no keyed path
    assert paths("aws") == (PUBLIC, KEYED)                   # keys optional
    assert paths("autodl_cn") == (KEYED,)                    # its only path is keyed
    assert {p for s, p in PATHS if spider_class(s).api_key_required} == {KEYED}


# ---- the contract fails on each kind of broken offer ---------------------------------------

def _broken(offer: dict, edit: dict) -> dict:
    return {k: v for k, v in {**offer, **edit}.items() if v is not DROP}


DROP = object()


@pytest.mark.parametrize("source, edit, check, says", [
    ("azure", {"sku": DROP}, "fields", "missing sku"),
    ("azure", {"region_text": ""}, "fields", "missing region_text"),
    ("azure", {"source": "aws"}, "identity", "source 'aws'"),
    ("azure", {"vendor": "Someone Else"}, "identity", "not the spider's"),
    ("azure", {"vendor_kind": "idc"}, "identity", "not the spider's"),
    ("azure", {"reaches_via": "aggregator"}, "identity", "reaches_via 'aggregator'"),
    ("primeintellect", {"vendor_kind": "reseller"}, "identity", "of kind 'reseller'"),
    ("primeintellect", {"vendor": ""}, "identity", "vendor ''"),
    ("azure", {"url": "https://prices.azure.com/api/retail/prices?page=9"}, "recorded",
     "is no recorded entry's"),
    ("azure", {"raw_ref": "0" * 64}, "recorded", "is no recorded entry's"),
    ("azure", {"observed_at": "2030-01-01T00:00:00Z"}, "recorded", "not the capture time"),
    ("azure", {"offer_kind": "weekly"}, "terms", "offer_kind 'weekly'"),
    ("azure", {"billing_period": "fortnight"}, "terms", "billing_period 'fortnight'"),
    ("azure", {"price_amount": "0"}, "price", "no positive decimal"),
    ("azure", {"price_amount": "-3.5"}, "price", "no positive decimal"),
    ("azure", {"price_amount": "3,67"}, "price", "no positive decimal"),
    ("azure", {"currency": None}, "price", "in currency None"),
    ("azure", {"currency": "dollars-ish"}, "price", "in currency 'dollars-ish'"),
    ("azure", {"price_amount": DROP}, "price", "though read from application/json"),
    # data's amount with a text written from it; a page's price without its text
    ("azure", {"price_text": "3.67 USD/hour"}, "price", "beside an amount served as data"),
    ("idc_guian", {"price_text": DROP}, "price", "no price_text"),
    ("azure", {"gpu_count": 0}, "count", "no whole number"),
    ("azure", {"gpu_count": "two"}, "count", "no whole number"),
    ("azure", {"gpu_count": True}, "count", "no whole number"),
    ("azure", {"price_unit": "分钱"}, "units", "price_unit '分钱'"),
    ("vastai", {"memory": "64 GB"}, "units", "memory '64 GB' is no number as served"),
    ("vastai", {"vram_unit": "GB?"}, "units", "vram in vram_unit 'GB?'"),
    ("vastai", {"memory": 65536, "memory_unit": None}, "units", "memory in memory_unit None"),
    ("azure", {"gpu_text": "Voodoo2 12MB"}, "normalizes", "card: unknown GPU model"),
    ("azure", {"region_text": "atlantis"}, "normalizes", "region"),
    ("azure", {"price_amount": "36730"}, "normalizes", "bounds"),
    ("lambda_cloud", {"gpu_text": "NVIDIA RTX 4000"}, "normalizes", "card"),   # Quadro or Ada
])
def test_a_broken_offer_breaks_its_check(source, edit, check, says):
    offer = replayed(source, paths(source)[0]).offers[0]
    assert contract_problems(source, [offer]) == {}
    problems = contract_problems(source, [_broken(offer, edit)])
    assert check in problems and says in " ".join(problems[check]), problems


def test_an_offer_twice_breaks_uniqueness_and_lands_twice_in_one_hour():
    offer = replayed("azure", PUBLIC).offers[0]
    problems = contract_problems("azure", [offer, dict(offer)])
    assert set(problems) == {"unique", "one_row"}
    # the key is the source's: vastai's machine id and term tell its offers apart
    other_region = {**replayed("vastai", PUBLIC).offers[0], "region_text": "elsewhere"}
    assert "unique" in contract_problems("vastai", [replayed("vastai", PUBLIC).offers[0],
                                                    other_region])


def test_a_declared_quarantine_excuses_only_its_reason():
    quarantined = next(o for o in replayed("tencent_cn", PUBLIC).offers
                       if o["sku"].startswith("HCCPNV5v"))
    assert contract_problems("tencent_cn", [quarantined]) == {}
    assert "normalizes" in contract_problems("azure", [{**quarantined, "source": "azure"}])


def test_a_known_exception_excuses_only_what_it_names():
    gn5 = next(o for o in replayed("alibaba_cn", PUBLIC).offers
               if o["sku"] == "ecs.gn5-c4g1.xlarge")
    assert contract_problems("alibaba_cn", [gn5]) == {}
    assert "count" in contract_problems("alibaba_cn", [{**gn5, "gpu_count": "0"}])


def test_a_key_in_an_offer_is_found():
    offer = replayed("lambda_cloud", KEYED).offers[0]
    assert leaked_keys("lambda_cloud", [offer]) == []
    value = spider_contract.fake_keys("lambda_cloud")["LAMBDA_API_KEY"]
    assert leaked_keys("lambda_cloud", [{**offer, "vendor_data": {"auth": value}}]) == [
        "LAMBDA_API_KEY's value is in an offer"]


def test_a_stale_declaration_or_an_unread_file_breaks_the_source(monkeypatch):
    monkeypatch.setitem(EXPECTED_QUARANTINES, "azure", {("card", "Voodoo"): "no longer sold"})
    monkeypatch.setitem(KNOWN_EXCEPTIONS, ("azure", "count"), ("never", "a fixed slip"))
    entries = responses.snapshot_entries("azure")
    monkeypatch.setattr(spider_contract, "snapshot_entries",
                        lambda source: [*entries, {**entries[0], "file": "page9.json"}])
    problems = source_problems("azure")
    assert problems["unread"] == ["page9.json is read by no path"]
    assert problems["stale"] == ["declared quarantine ('card', 'Voodoo') never happens",
                                 "known exception of count excuses nothing: a fixed slip"]


def test_a_request_no_entry_answers_is_named(monkeypatch):
    entries = responses.snapshot_entries("azure")
    monkeypatch.setattr(responses, "snapshot_entries", lambda source: entries[:1])
    replay = responses.replay_spider("azure")
    assert len(replay.unrecorded) == 1 and "skip=100" in replay.unrecorded[0]
    assert replay.files_read == {entries[0]["file"]}
