"""The contract every spider's offers meet, whatever the vendor, in the manner of gpuhunt's
catalog integrity tests: written once here, checked over every source's bundled snapshot on
each of its paths (tests/spiders/test_spider_contract.py) and over the offers a vendor test
holds (`check_contract`); a vendor test keeps only what is its vendor's own.

What each offer meets (the check's name, used by KNOWN_EXCEPTIONS):
  fields        every RawOffer field normalization needs is there (spiders.items.missing_fields)
  identity      source is the spider's name; vendor and vendor_kind the spider's (an aggregator
                names each offer's vendor, of a kind some source declares); reaches_via the
                spider's
  recorded      url is the live URL of a recorded entry, raw_ref the sha256 of that entry's
                bytes, observed_at its capture time (never the clock: a replay is reproducible)
  terms         offer_kind and billing_period are normalization's words
  price         a price_amount is a positive decimal with its currency, with no price_text when
                read from data (no text written from a number); else a page's price_text
  count         a gpu_count, when stated, is a whole number of at least 1
  units         a typed field (price_amount with price_unit, vcpus, memory, disk, vram) holds a
                number as served, and each size its unit from the tables normalization converts
                with (spiders/items.py): the spider converted nothing
  unique        no two offers share the source's offer key (OFFER_KEYS)
  normalizes    every offer lands (its card known, its region placed, its price per GPU-hour
                within the card's plausible bounds), or is quarantined for a reason the source
                declares in EXPECTED_QUARANTINES; each declared reason still happens
  one_row       no two landed rows are one offer in one hour (normalization's dedupe drops none)
and what each source meets: its snapshot yields at least the spider's min_offers on each path;
every manifest entry is read by some path, and no path asks for an unrecorded request; a
template's manifest says its prices are illustrative; a keyed path's offers never carry a key.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from functools import cache
from hashlib import sha256

from pipelines.normalize import OFFER_KINDS, Quarantined
from spiders.items import missing_fields
from spiders.layout import SNAPSHOT_DIR
from spiders.parsing.currencies import iso_currency
from spiders.parsing.gpu_models import VRAM_UNITS
from spiders.parsing.prices import HOURS_PER_PERIOD
from spiders.parsing.units import PRICE_UNITS
from spiders.price_basis import manifest_price_basis
from spiders.registry import source_names, spider_class
from tests.helpers.normalized import normalized
from tests.helpers.responses import Replay, replay_spider, snapshot_entries
from tests.helpers.rsa_keys import throwaway_rsa_pem

PUBLIC, KEYED = "public", "keyed"
# memory_unit and disk_unit: what spiders/parsing/machine.py reads (memory_gib_of, disk_gb_of)
MEMORY_UNITS = ("B", "MB", "MiB", "GB", "GiB", "TB", "TiB")
# What a keyed path is given: a fake value per key, except where the recorded request body holds
# the value (Huawei's project id is part of the rated body the snapshot answers).
FAKE_KEYS = {"HUAWEICLOUD_SDK_PROJECT_ID": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
             # 共绩算力 signs with an RSA key: a throwaway one, made per test run, never stored
             "GONGJI_PRIVATE_KEY": throwaway_rsa_pem()}
# Settings a path needs to ask the recorded requests: AWS's spot history asks from a start time,
# the recorded bodies' one.
REPLAY_SETTINGS = {"aws": {"AWS_SPOT_START_TIME": "2026-11-30T09:00:00Z"}}

# The fields that tell one offer of a source from another: the default is every field a price
# can differ by; a source whose ids say more (a machine id names its region) keeps a narrower key,
# the one its vendor test has always held it to.
DEFAULT_OFFER_KEY = ("sku", "region_text", "offer_kind", "billing_period", "effective_at")
OFFER_KEYS: dict[str, tuple[str, ...]] = {
    "alibaba_cn": ("sku", "region_text", "billing_period"),
    "aws": ("sku", "region_text", "offer_kind"),
    "azure": ("sku", "region_text", "offer_kind"),
    "compshare_cn": ("sku", "billing_period", "effective_at"),
    "gcp": ("sku", "region_text", "offer_kind"),
    "gpugeek_cn": ("sku", "billing_period"),
    "huaweicloud_cn": ("sku", "region_text", "billing_period"),
    "idc_guian": ("sku", "region_text", "billing_period"),
    "idc_nanjing": ("sku", "region_text", "billing_period"),
    "idc_northwest": ("sku", "region_text", "billing_period"),
    "idc_ulanqab": ("sku", "region_text", "billing_period"),
    "lambda_cloud": ("sku", "region_text"),
    "runpod": ("sku", "region_text"),
    "tencent_cn": ("sku", "region_text", "offer_kind", "billing_period"),
    "vastai": ("sku", "offer_kind"),
    "volcengine_cn": ("sku", "region_text", "billing_period"),
    "vultr": ("sku", "region_text", "offer_kind", "billing_period"),
}

_UNKNOWN_CARD = r"unknown GPU model \(not in card_catalog\.csv\) in "
# a partition, queue or class of cards that idc_tables.toml lists with no card (no public evidence)
_NO_EVIDENCE = (r" \(a partition, queue or class of cards\) names no card; no public evidence "
                r"maps it to one$")
_NEGOTIABLE = {("price", r"^not a price: 面议 \(negotiable\)$"): "a 面议 (negotiable) cell"}
# {(stage, reason pattern): why} of each quarantine a source's snapshot holds on purpose; any
# other quarantine breaks the contract (each is asserted in detail by its vendor test).
EXPECTED_QUARANTINES: dict[str, dict[tuple[str, str], str]] = {
    "alibaba_cn": {("card", r"unsupported slice fraction 1/(3|6|12) in 'NVIDIA A10 24GB 1/"):
                   "a third, sixth or twelfth of an A10 (the record's vgn7i/sgn7i types) is no "
                   "slice the catalog knows",
                   ("bounds", r"^21\.089000 CNY per T4-16GB GPU-hour is outside"):
                   "the record's Hong Kong gn6i-c40g1.10xlarge: one T4 on a 40-vCPU host, a real "
                   "price above the per-GPU bound",
                   ("card", _UNKNOWN_CARD + r"'ecs\.gn5-c4g1\.xlarge'$"):
                   "gn5 is missing from the family table: the type is passed on as the card"},
    "autodl_cn": {("card", _UNKNOWN_CARD + "'vGPU-32GB'$"): "a vGPU names no card"},
    "gpushare_cn": {("card", _UNKNOWN_CARD + "'NVIDIA A16'$"): "A16 is not a catalogued card"},
    "huaweicloud_cn": {("card", _UNKNOWN_CARD + "'Ascend 310 8G'$"): "an Ascend NPU, no GPU"},
    "idc_cuhksz_sz": {("card", r"^'GPUs other than 2080Ti, V100, A100 and A800'" + _NO_EVIDENCE):
                      "a rate for the cards it does not name"},
    "idc_guian": _NEGOTIABLE, "idc_nanjing": _NEGOTIABLE, "idc_northwest": _NEGOTIABLE,
    "idc_sinnet_bj": _NEGOTIABLE, "idc_ulanqab": _NEGOTIABLE,
    "idc_hkustgz_gz": {("card", r"^'GPU( Server)? ?\(ACD\)'" + _NO_EVIDENCE):
                       "the rows name a platform no public text names the card of"},
    "idc_pku_bj": {("card", r"^'(GPU(40G|80G)?|LIFE)'" + _NO_EVIDENCE):
                   "the partitions name a queue or its memory, not a card"},
    "idc_srils_sz": {("card", r"^'GPU \(高性能\)'" + _NO_EVIDENCE): "a tier, not a card"},
    "matpool_cn": {("card", _UNKNOWN_CARD + "'NVIDIA RTX A2000'$"): "A2000 is not catalogued",
                   ("region", r"^unknown region 'domain 1' "): "a pool no evidence places"},
    "tencent_cn": {("card", _UNKNOWN_CARD + "'HCCPNV5v'$"): "a family the card table lacks"},
    "hyperstack": {("region", r"^no location given by the vendor \(vendor 'hyperstack'\)"):
                   "the page names no region and no public client places A100 SXM, H200, B200"},
    "jarvislabs": {("card", _UNKNOWN_CARD + "'RTX-PRO6000'$"):
                   "the RTX PRO 6000 (Blackwell) is not catalogued yet",
                   ("region", r"^unknown region 'europe-01' "): "no public text places europe-01"},
    "tensordock": {("card", _UNKNOWN_CARD + "'(rtx5000ada-pcie-32gb|geforce rtx4080-pcie-16gb)'$"):
                   "RTX 5000 Ada and RTX 4080 are not catalogued (no cited specs yet)"},
    "tencent_cn_list": {("range", r"^price range '.*': the source does not declare which end"):
                        "the list page writes ranges and declares no end"},
    "vastai": {("region", r"^no location given by the vendor"): "a host that states no place"},
    "ctyun_cn": {("card", _UNKNOWN_CARD + "'Ascend 910B'$"): "an Ascend NPU the catalog lacks"},
    "ctyun_js": {("card", _UNKNOWN_CARD + r"'Atlas 800T A2@3(76|13)TF[lL]OPS'$"):
                 "an Ascend 910B server the catalog lacks"},
    "nebius": {("card", _UNKNOWN_CARD + "'NVIDIA RTX PRO 6000'$"):
               "RTX PRO 6000 is not catalogued yet (no cited specification read here)"},
    "coreweave": {("region", r"^unknown region 'REGION: EUROPE' for vendor 'coreweave'$"):
                  "the page prices Europe as one section and names no country"},
}

# {(source, check): (problem pattern, why)}: a check that does not hold for some of a source's
# offers, for a reason; the problems the pattern matches are excused, and each entry must still
# excuse one (a stale exception fails).
KNOWN_EXCEPTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("alibaba_cn", "count"): (
        r"gpu_count 'unknown: Alibaba instance type not in alibaba_cn_gpus\.csv",
        "an instance type missing from the family table writes why in gpu_count, so that its "
        "quarantine names it (stage card)"),
}


def paths(source: str) -> tuple[str, ...]:
    """The paths a crawl of `source` can take: public without keys, keyed with them (a source
    whose only path is keyed has no public one)."""
    cls = spider_class(source)
    if not cls.key_names():
        return (PUBLIC,)
    return (KEYED,) if cls.api_key_required else (PUBLIC, KEYED)


def fake_keys(source: str) -> dict[str, str]:
    return {name: FAKE_KEYS.get(name, f"contract-fake-{name.lower()}")
            for name in spider_class(source).key_names()}


@contextlib.contextmanager
def keys_for(source: str, path: str) -> Iterator[None]:
    """The environment of one path: the source's keys set (keyed) or unset (public)."""
    names = spider_class(source).key_names()
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in names:
            os.environ.pop(name, None)
        if path == KEYED:
            os.environ.update(fake_keys(source))
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@cache
def replayed(source: str, path: str) -> Replay:
    """`source`'s spider over its snapshot on one path, once per session."""
    with keys_for(source, path):
        return replay_spider(source, REPLAY_SETTINGS.get(source))


# ---- the checks ---------------------------------------------------------------------------

@cache
def _recorded(source: str) -> dict[tuple[str, str], dict]:
    """(live URL, sha256 of the bytes) -> the entry, of every entry of the snapshot."""
    return {(e["url"], sha256((SNAPSHOT_DIR / source / e["file"]).read_bytes()).hexdigest()): e
            for e in snapshot_entries(source)}


def _entry(source: str, offer: dict) -> dict | None:
    return _recorded(source).get((offer.get("url"), offer.get("raw_ref")))


@cache
def _declared_kinds() -> frozenset[str]:
    return frozenset(spider_class(s).vendor_kind for s in source_names())


def _identity(source: str, offer: dict) -> list[str]:
    cls, problems = spider_class(source), []
    if offer.get("source") != source:
        problems.append(f"source {offer.get('source')!r}, not {source!r}")
    if cls.reaches_via == "direct":
        if (offer.get("vendor"), offer.get("vendor_kind")) != (cls.vendor, cls.vendor_kind):
            problems.append(f"vendor {offer.get('vendor')!r} / {offer.get('vendor_kind')!r}, "
                            f"not the spider's {cls.vendor!r} / {cls.vendor_kind!r}")
    elif not offer.get("vendor") or offer.get("vendor_kind") not in _declared_kinds():
        problems.append(f"vendor {offer.get('vendor')!r} of kind {offer.get('vendor_kind')!r}")
    if (offer.get("reaches_via") or "direct") != cls.reaches_via:
        problems.append(f"reaches_via {offer.get('reaches_via')!r}, not {cls.reaches_via!r}")
    return problems


def _recorded_entry(source: str, offer: dict) -> list[str]:
    if (entry := _entry(source, offer)) is None:
        return [f"url {offer.get('url')!r} with raw_ref {offer.get('raw_ref')!r} is no "
                "recorded entry's"]
    if offer.get("observed_at") != entry["captured_at"]:
        return [f"observed_at {offer.get('observed_at')!r}, not the capture time "
                f"{entry['captured_at']!r}"]
    # each offer says what its own entry's prices are, not its source's summary
    said, recorded = ((o.get("price_basis"), o.get("prices_as_of")) for o in (offer, entry))
    if said != recorded:
        return [f"price basis {said}, not its entry's {recorded}"]
    return []


def _terms(source: str, offer: dict) -> list[str]:
    problems = []
    if offer.get("offer_kind") not in OFFER_KINDS:
        problems.append(f"offer_kind {offer.get('offer_kind')!r}")
    if offer.get("billing_period") not in (None, *HOURS_PER_PERIOD):
        problems.append(f"billing_period {offer.get('billing_period')!r}")
    return problems


# A page a person reads (HTML, plain text) writes its prices as text; any other body (JSON, XML,
# CSV, a script) is data, whose numbers a spider keeps as numbers.
PAGE_TYPES = ("text/html", "text/plain")


def _price(source: str, offer: dict) -> list[str]:
    """A page's price is kept as written (price_text); data's price is its amount as served,
    with no price_text a spider would write from the number."""
    amount, entry = offer.get("price_amount"), _entry(source, offer)
    data = entry is not None and not entry["content_type"].startswith(PAGE_TYPES)
    if amount in (None, ""):
        if data:
            return [f"no price_amount, though read from {entry['content_type']} data"]
        return [] if offer.get("price_text") else ["no price_text (the price as written)"]
    if data and offer.get("price_text"):
        return [f"price_text {offer['price_text']!r} beside an amount served as data: a spider "
                "writes no text from a number"]
    try:
        positive = Decimal(str(amount)) > 0
    except InvalidOperation:
        positive = False
    if not positive:
        return [f"price_amount {amount!r} is no positive decimal"]
    try:
        iso_currency(offer.get("currency") or "")
    except ValueError:
        return [f"price_amount {amount!r} in currency {offer.get('currency')!r}"]
    return []


def _count(source: str, offer: dict) -> list[str]:
    count = offer.get("gpu_count")
    if count in (None, ""):
        return []
    if isinstance(count, bool) or not re.fullmatch(r"[1-9][0-9]*", str(count).strip()):
        return [f"gpu_count {count!r} is no whole number of at least 1"]
    return []


# typed field -> its unit field and the units it may name (the tables normalization reads)
SIZE_FIELDS = {"memory": ("memory_unit", MEMORY_UNITS), "disk": ("disk_unit", MEMORY_UNITS),
               "vram": ("vram_unit", tuple(VRAM_UNITS)),
               "plan_vram": ("plan_vram_unit", tuple(VRAM_UNITS))}


def _units(source: str, offer: dict) -> list[str]:
    problems = []
    if offer.get("price_unit") not in (None, *PRICE_UNITS):
        problems.append(f"price_unit {offer.get('price_unit')!r} is no unit of units.py")
    for field in ("vcpus", *SIZE_FIELDS):
        value = offer.get(field)
        if value is not None and (isinstance(value, bool) or not re.fullmatch(
                r"[0-9]+(\.[0-9]+)?", str(value).strip())):
            problems.append(f"{field} {value!r} is no number as served")
    for field, (unit_field, units) in SIZE_FIELDS.items():
        if offer.get(field) is not None and offer.get(unit_field) not in units:
            problems.append(f"{field} in {unit_field} {offer.get(unit_field)!r}, not one of "
                            f"{', '.join(units)}")
    return problems


OFFER_CHECKS = {"fields": lambda source, offer: [f"missing {f}" for f in missing_fields(offer)],
                "identity": _identity, "recorded": _recorded_entry, "terms": _terms,
                "price": _price, "count": _count, "units": _units}


def offer_key(source: str, offer: dict) -> tuple:
    return tuple(offer.get(f) for f in OFFER_KEYS.get(source, DEFAULT_OFFER_KEY))


def _unique(source: str, offers: list[dict]) -> list[str]:
    twice = [k for k, n in Counter(offer_key(source, o) for o in offers).items() if n > 1]
    return [f"offer key {k} twice" for k in twice]


def normalized_offers(offers: Iterable[dict]) -> tuple[list[dict], list[tuple[dict, Quarantined]]]:
    """Through the normalizer, the offers that have its fields (the others break `fields`)."""
    return normalized(o for o in offers if not missing_fields(o))


def _expected_quarantine(source: str, why: Quarantined) -> tuple[str, str] | None:
    return next((k for k in EXPECTED_QUARANTINES.get(source, {})
                 if k[0] == why.stage and re.search(k[1], why.reason)), None)


def _normalizes(source: str, offers: list[dict]) -> list[str]:
    _, quarantined = normalized_offers(offers)
    return [f"{o.get('sku')!r} / {o.get('region_text')!r} quarantined: {why}"
            for o, why in quarantined if _expected_quarantine(source, why) is None]


def _one_row(source: str, offers: list[dict]) -> list[str]:
    rows, _ = normalized_offers(offers)
    hours = Counter((r["offer_id"], r["observed_hour"]) for r in rows)
    return [f"offer {oid} twice in the hour {hour}" for (oid, hour), n in hours.items() if n > 1]


def contract_problems(source: str, offers: list[dict]) -> dict[str, list]:
    """{check: its problems} of the offers `source`'s spider yielded from recorded responses;
    a problem KNOWN_EXCEPTIONS excuses is left out."""
    offers = [dict(o) for o in offers]
    found: dict[str, list] = {name: [] for name in (*OFFER_CHECKS, "unique", "normalizes",
                                                    "one_row")}
    for offer in offers:
        label = f"{offer.get('sku')!r} / {offer.get('region_text')!r}"
        for name, check in OFFER_CHECKS.items():
            found[name] += [f"{label}: {p}" for p in check(source, offer)]
    found["unique"] = _unique(source, offers)
    found["normalizes"] = _normalizes(source, offers)
    found["one_row"] = _one_row(source, offers)
    return {name: kept for name, problems in found.items()
            if (kept := [p for p in problems if not _excused(source, name, p)])}


def _excused(source: str, check: str, problem: str) -> bool:
    pattern = KNOWN_EXCEPTIONS.get((source, check), (None,))[0]
    return pattern is not None and re.search(pattern, problem) is not None


def path_problems(source: str, path: str) -> dict[str, list]:
    """The contract over what `source`'s spider yields from its snapshot on `path`, with what a
    replayed crawl must also meet: the spider's own min_offers, no unrecorded request, and (keyed)
    no key in any offer."""
    replay = replayed(source, path)
    found = contract_problems(source, replay.offers)
    if len(replay.offers) < spider_class(source).min_offers:
        found["min_offers"] = [f"{len(replay.offers)} offers, below the spider's min_offers "
                               f"{spider_class(source).min_offers}"]
    if replay.unrecorded:
        found["requests"] = [f"no recorded entry answers {key}" for key in replay.unrecorded]
    if path == KEYED and (leaked := leaked_keys(source, replay.offers)):
        found["keys"] = leaked
    return found


def leaked_keys(source: str, offers: list[dict]) -> list[str]:
    """The keys of `source` whose fake value shows in an offer (a key is never passed on)."""
    text = json.dumps(offers, default=str, ensure_ascii=False)
    return [f"{name}'s value is in an offer" for name, value in fake_keys(source).items()
            if value in text]


def source_problems(source: str) -> dict[str, list]:
    """What holds over all the paths of `source`: every manifest entry is read by one of them,
    every declared quarantine and known exception still happens on one, and a template's
    manifest says its prices are illustrative."""
    replays = [replayed(source, path) for path in paths(source)]
    offers = [o for replay in replays for o in replay.offers]
    read = set().union(*(replay.files_read for replay in replays))
    found = {"unread": [f"{e['file']} is read by no path" for e in snapshot_entries(source)
                        if e["file"] not in read]}
    seen = {_expected_quarantine(source, why) for _, why in normalized_offers(offers)[1]}
    found["stale"] = [f"declared quarantine {k} never happens"
                      for k in EXPECTED_QUARANTINES.get(source, {}) if k not in seen]
    raw = {name: [p for o in offers for p in check(source, o)]
           for name, check in OFFER_CHECKS.items()}
    found["stale"] += [f"known exception of {check} excuses nothing: {why}"
                       for (src, check), (pattern, why) in KNOWN_EXCEPTIONS.items()
                       if src == source and not any(re.search(pattern, p) for p in raw[check])]
    basis = manifest_price_basis(json.loads(
        (SNAPSHOT_DIR / source / "manifest.json").read_text(encoding="utf-8")))[0]
    if spider_class(source).is_template and basis != "illustrative":
        found["basis"] = [f"a template's prices are illustrative, not {basis}"]
    return {name: problems for name, problems in found.items() if problems}


def check_contract(source: str, offers: list[dict]) -> None:
    """Fail naming every broken check of the contract (vendor tests call this on their offers)."""
    assert offers, f"{source}: no offers to check"
    problems = contract_problems(source, offers)
    assert not problems, json.dumps({source: problems}, indent=1, ensure_ascii=False)[:4000]
