"""Amazon Web Services: A100 (p4d/p4de) and H100 (p5) instances, on-demand and spot.

On-demand comes from the public bulk price list, one CSV per region, with or without keys. The
real files are hundreds of MB (every instance, OS, tenancy and term), hence the long timeout; the
rows are filtered here. The per-region URL is SkyPilot's (sky/catalog/data_fetchers/fetch_aws.py
@ 00526108); the layout (five metadata rows, then the header) is AWS's price-list file docs'; the
columns are read by name as gpuhunt (src/gpuhunt/providers/aws.py @ 023e03dd: the row filter,
Currency, Region Code, PricePerUnit, vCPU, Memory, GPU) and ligoj/plugin-prov-aws (catalog CSV
mappings @ d8430a91: SKU as the header's first cell, Location, Storage) read them; GPU Memory is
a column of ligoj's recorded header (eu-west-1/index-v2.csv @ 2c02801f) and of a real 2025-09-12
header, whose 91 names the snapshots carry.

Spot, without keys (the public path): spot.json, the feed behind https://aws.amazon.com/ec2/spot/pricing/
at website.spot.ec2.aws.a2z.com. It replaced spot-price.s3.amazonaws.com/spot.js (JSONP, frozen
since 2024-05-13) and is plain JSON of the same shape; `spot_feed` also accepts the old
`callback(...)` wrapper. One price per region and type: the cheapest AZ's, without naming it
(pg-spot-ops/pg-spot-operator pg_spot_operator/cloud_impl/aws_cache.py @ 2161a1d5 and aws_spot.py
@ 01c6d142, which also skips a zero price). "N/A*" (ligoj/plugin-prov-aws's spot.js fixture
@ 65cd6deb) and 0 mean no price. Legacy region names ("us-east", "apac-sin") are mapped as
infracost's cloud-pricing-api does (xet7/cloud-pricing-api src/updaters/awsSpot.ts @ 27c9f32a).

Spot, with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN optional; boto3's
variable names): EC2 DescribeSpotPriceHistory per region, Linux/UNIX, for the four types, with
StartTime = EndTime = now: "it also returns the last price change before the start time, which
is the effective price as of the start time" (the EC2 API reference), i.e. one price per AZ.
botocore serializes the request (EC2 query protocol) and signs it (SigV4Auth on an AWSRequest);
Scrapy sends it; botocore's EC2 parser reads the XML against the service model. Each region's
AZ prices become one offer at the cheapest AZ (the AZ and every AZ's price in vendor_data), so
both paths yield the same offer: normalization keys an offer on (source, sku, region, kind, ...),
not on the AZ, and the public feed is regional.

Neither source is a JSON body or an HTML table, so this spider builds on GpuPriceSpider.

Machine specs: vcpus_text, memory_text and disk_text from the CSV's vCPU, Memory and Storage
columns (on-demand offers only; the spot sources list prices, no specs).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from xml.etree import ElementTree

from scrapy.http import Response

from spiders.base import GpuPriceSpider
from spiders.items import RawOffer

ON_DEMAND_URL = ("https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
                 "{}/index.csv")
SPOT_URL = "https://website.spot.ec2.aws.a2z.com/spot.json"
EC2_URL = "https://ec2.{}.amazonaws.com/"
# The reference catalog's regions with these instances; 8 of its 15 have an on-demand file, to
# keep the snapshot small (spot.json covers every region in one file anyway).
REGIONS = ["us-east-1", "us-east-2", "us-west-2", "eu-central-1", "eu-west-2",
           "ap-northeast-1", "ap-northeast-2", "ap-south-1"]
# DescribeSpotPriceHistory is regional: the 15 regions of the reference catalog.
SPOT_REGIONS = ["ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1",
                "ap-southeast-2", "ap-southeast-3", "ca-central-1", "eu-central-1", "eu-north-1",
                "eu-west-1", "eu-west-2", "us-east-1", "us-east-2", "us-west-1", "us-west-2"]
# Names old spot.js files used for some regions, as cloud-pricing-api maps them.
LEGACY_REGIONS = {"us-east": "us-east-1", "us-west": "us-west-1", "eu-ireland": "eu-west-1",
                  "apac-sin": "ap-southeast-1", "apac-syd": "ap-southeast-2",
                  "apac-tokyo": "ap-northeast-1"}
# Instance type -> (card as AWS documents it, cards per instance)
INSTANCES: dict[str, tuple[str, int]] = {
    "p4d.24xlarge": ("A100 40GB SXM4", 8),
    "p4de.24xlarge": ("A100 80GB SXM4", 8),
    "p5.48xlarge": ("H100 80GB SXM5", 8),
    "p5.4xlarge": ("H100 80GB SXM5", 1),
}
# A plain Linux box on shared hardware, billed per hour: no Windows/SQL licence, no Dedicated or
# Host tenancy, no capacity-reservation rows, no Reserved terms or Capacity Blocks.
ON_DEMAND_ROW = {"TermType": "OnDemand", "Operating System": "Linux", "Tenancy": "Shared",
                 "Pre Installed S/W": "NA", "CapacityStatus": "Used", "MarketOption": "OnDemand",
                 "Unit": "Hrs"}
# Storage is "8 x 1000 SSD": drives times a size the price list writes without its unit, GB (the
# instance-store figures AWS's instance type pages give in GB); "EBS only" is no local disk.
# Every column the spider reads (filter, offer, vendor_data, machine): a renamed one fails loudly.
# Read by name as public clients read them: gpuhunt providers/aws.py (the filter columns above,
# Currency, Instance Type, Region Code, PricePerUnit, vCPU, Memory, GPU), ligoj plugin-prov-aws
# catalog CSV mappings (SKU, Location, Storage, ...); GPU Memory is a column of ligoj's recorded
# EC2 price-list header and of a real 2025-09-12 header (the snapshots carry that header).
CSV_COLUMNS = (*ON_DEMAND_ROW, "SKU", "Instance Type", "Region Code", "PricePerUnit", "Currency",
               "Location", "GPU", "GPU Memory", "vCPU", "Memory", "Storage")
STORAGE_RE = re.compile(r"\s*(\d+\s*x\s*\d+(?:\.\d+)?)\s*(.*)")
PRICE_RE = re.compile(r"\d+(?:\.\d+)?")
SPOT_OPERATION = "DescribeSpotPriceHistory"
# What the spider reads of each SpotPrice item; the model marks none required, so a renamed
# element (dropped silently by the parser) must fail here.
SPOT_ITEM_FIELDS = ("AvailabilityZone", "InstanceType", "ProductDescription", "SpotPrice")


def storage_text(storage: str | None) -> str | None:
    """The local disk with its unit: "8 x 1000 SSD" -> "8 x 1000 GB SSD"; "EBS only" -> None."""
    match = STORAGE_RE.fullmatch(storage or "")
    if match is None:
        return None
    if re.match(r"[GT]i?B\b", match[2]):   # a unit already written: keep the text
        return storage.strip()
    return f"{match[1]} GB {match[2]}".strip()


def spot_feed(text: str) -> dict:
    """spot.json's object: plain JSON (spot.json) or inside a callback(...) wrapper (spot.js)."""
    body = text.strip()
    if not body.startswith("{"):
        match = re.fullmatch(r"(?:/\*.*?\*/\s*)?\w+\((.*)\)\s*;?", body, re.S)
        if match is None:
            raise ValueError("aws: the spot feed is neither JSON nor a callback(...) wrapper: "
                             f"{body[:80]!r}")
        body = match[1]
    return json.loads(body)


def spot_price(text: object) -> Decimal | None:
    """A spot price, or None for no price: "N/A*", 0, "0", "" or anything not a number."""
    match = PRICE_RE.fullmatch(str(text).strip()) if text is not None else None
    price = Decimal(match[0]) if match else None
    return price if price else None


def region_code(name: str) -> str:
    return LEGACY_REGIONS.get(name, name)


@cache
def ec2_operation():
    """The DescribeSpotPriceHistory operation of botocore's EC2 service model."""
    # botocore is imported by the keyed spot path's functions only: a run without keys reads the
    # public feeds and never needs it (its import costs the shared crawl process ~0.05 s of CPU).
    import botocore.session

    return botocore.session.get_session().get_service_model("ec2").operation_model(SPOT_OPERATION)


def signed_spot_history_request(region: str, start_time: datetime, credentials: dict[str, str],
                                next_token: str | None = None) -> tuple[str, dict[str, str], str]:
    """URL, headers and form body of one DescribeSpotPriceHistory call, serialized and signed by
    botocore. The body carries no key; the signature is in the Authorization header."""
    from botocore import serialize
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import create_request_object, prepare_request_dict
    from botocore.credentials import Credentials

    params = {"StartTime": start_time, "EndTime": start_time, "InstanceTypes": sorted(INSTANCES),
              "ProductDescriptions": ["Linux/UNIX"]}
    if next_token:
        params["NextToken"] = next_token
    request_dict = serialize.create_serializer("ec2", include_validation=True) \
        .serialize_to_request(params, ec2_operation())
    prepare_request_dict(request_dict, endpoint_url=EC2_URL.format(region))
    aws_request = create_request_object(request_dict)
    signer = Credentials(credentials["AWS_ACCESS_KEY_ID"], credentials["AWS_SECRET_ACCESS_KEY"],
                         credentials.get("AWS_SESSION_TOKEN"))
    SigV4Auth(signer, "ec2", region).add_auth(aws_request)
    prepared = aws_request.prepare()
    # Scrapy sets Content-Length itself (it is not a signed header)
    headers = {k: v for k, v in prepared.headers.items() if k.lower() != "content-length"}
    return prepared.url, headers, prepared.body


def parse_spot_history(status: int, body: bytes) -> dict:
    """The answer as botocore's EC2 parser reads it against the service model; an EC2 error
    (<Response><Errors><Error>...) is raised with its code and message."""
    from botocore import parsers

    parsed = parsers.create_parser("ec2").parse(
        {"status_code": status, "headers": {}, "body": body}, ec2_operation().output_shape)
    error = parsed.get("Error")
    if error or status >= 300:
        raise ValueError(f"aws: EC2 {SPOT_OPERATION} answered HTTP {status} "
                         f"{(error or {}).get('Code', '')}: {(error or {}).get('Message', '')}")
    for item in parsed.get("SpotPriceHistory", []):
        missing = [f for f in SPOT_ITEM_FIELDS if not item.get(f)]
        if missing:
            raise ValueError(f"aws: a {SPOT_OPERATION} item lacks {', '.join(missing)}: {item}")
    return parsed


def elements_unknown_to_model(body: bytes, shape=None, path: str = "") -> list[str]:
    """Paths of the answer's XML elements the EC2 model does not know (botocore skips them
    silently): the SDK shape check of a recorded body."""
    node = ElementTree.fromstring(body) if isinstance(body, bytes | str) else body
    shape = shape or ec2_operation().output_shape
    path = path or node.tag.split("}")[-1]
    unknown: list[str] = []
    for child in node:
        tag = child.tag.split("}")[-1]
        if shape.type_name == "structure":
            names = {m.serialization.get("name", n[:1].lower() + n[1:]): m
                     for n, m in shape.members.items()}
            if not path.count("/"):
                names.setdefault("requestId", None)   # EC2's ResponseMetadata
            if tag not in names:
                unknown.append(f"{path}/{tag}")
            elif names[tag] is not None:
                unknown += elements_unknown_to_model(child, names[tag], f"{path}/{tag}")
        elif shape.type_name == "list" and tag == "item":
            unknown += elements_unknown_to_model(child, shape.member, f"{path}/{tag}")
        else:
            unknown.append(f"{path}/{tag}")
    return unknown


class AwsSpider(GpuPriceSpider):
    name = "aws"
    vendor = "Amazon Web Services"
    vendor_kind = "hyperscaler"
    min_offers = 30
    key_envs = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    public_path = ("the public price-list CSVs (on-demand) and spot.json, the Spot pricing "
                   "page's feed (spot: the cheapest AZ per region)")
    keyed_path = ("the public price-list CSVs (on-demand) and EC2 DescribeSpotPriceHistory per "
                  "region, signed by botocore (spot per AZ, the cheapest AZ per region kept)")
    # DescribeSpotPriceHistory's StartTime/EndTime, ISO 8601 (default: now; also the setting
    # AWS_SPOT_START_TIME). Fixed in tests so the recorded form bodies match: replay keys a form
    # body by its text.
    spot_start_time: str | None = None
    custom_settings = {"DOWNLOAD_TIMEOUT": 300, "DOWNLOAD_WARNSIZE": 0, "DOWNLOAD_MAXSIZE": 2**31}

    async def start(self):
        for region in REGIONS:
            yield self.request(ON_DEMAND_URL.format(region), callback=self.parse_on_demand)
        if credentials := self.credentials():
            if token := os.environ.get("AWS_SESSION_TOKEN"):
                credentials["AWS_SESSION_TOKEN"] = token
            start = self._spot_start()
            self._aws_credentials = credentials   # on the spider: never in a request's meta
            for region in SPOT_REGIONS:
                yield self._spot_history_request(region, start, [], None)
        else:
            yield self.request(SPOT_URL, callback=self.parse_spot)

    def _spot_start(self) -> datetime:
        settings = getattr(self, "settings", None)   # None: a spider made without a crawler
        fixed = self.spot_start_time or (settings.get("AWS_SPOT_START_TIME") if settings else None)
        if fixed:
            return datetime.fromisoformat(fixed.replace("Z", "+00:00"))
        return datetime.now(UTC).replace(microsecond=0)

    def _spot_history_request(self, region, start, items, next_token):
        url, headers, body = signed_spot_history_request(region, start, self._aws_credentials,
                                                         next_token)
        # EC2 answers errors with HTTP 4xx: they reach parse_spot_history, which says why
        return self.request(url, method="POST", headers=headers, body=body,
                            callback=self.parse_spot_history, dont_filter=True,
                            meta={"handle_httpstatus_list": [400, 401, 403]},
                            cb_kwargs={"region": region, "start": start, "items": items})

    def parse_on_demand(self, response: Response) -> Iterable[RawOffer]:
        # Decoded from bytes: the file may come as binary/octet-stream (not a TextResponse).
        lines = response.body.decode("utf-8-sig").splitlines()
        # Five '"FormatVersion","v1.0"'-style metadata lines precede the header, the first row
        # whose first cell is SKU (quoted or not: ligoj's isHeaderRow reads it so).
        start = next((i for i, line in enumerate(lines)
                      if next(csv.reader([line]), [""])[:1] == ["SKU"]), None)
        if start is None:
            raise ValueError(f"aws: no CSV header starting with SKU in {response.url}")
        reader = csv.DictReader(lines[start:])
        if missing := [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]:
            raise ValueError(f"aws: the price list header lacks {', '.join(missing)}: "
                             f"{response.url}")
        for row in reader:
            card = INSTANCES.get(row["Instance Type"])
            if card is None or any(row.get(k) != v for k, v in ON_DEMAND_ROW.items()):
                continue
            yield self._offer(response, row["Instance Type"], row["Region Code"], "on_demand",
                              row["PricePerUnit"], row["Currency"],
                              {k: row[k] for k in ("SKU", "Location", "GPU", "GPU Memory")},
                              # vCPU is a count; Memory carries its unit ("1152 GiB")
                              vcpus_text=row.get("vCPU") or None,
                              memory_text=row.get("Memory") or None,
                              disk_text=storage_text(row.get("Storage")))

    def parse_spot(self, response: Response) -> Iterable[RawOffer]:
        feed = spot_feed(response.body.decode("utf-8-sig"))
        for region in feed["config"]["regions"]:
            for group in region["instanceTypes"]:
                for size in group["sizes"]:
                    if size["size"] not in INSTANCES:
                        continue
                    prices = {c["name"]: c["prices"].get("USD") for c in size["valueColumns"]}
                    # "N/A*" or 0: no spot market for this type here
                    if (price := spot_price(prices.get("linux"))) is not None:
                        yield self._offer(response, size["size"], region_code(region["region"]),
                                          "spot", str(price), "USD",
                                          {"type": group["type"], "feed_region": region["region"]})

    def parse_spot_history(self, response: Response, region: str, start: datetime,
                           items: list) -> Iterable:
        parsed = parse_spot_history(response.status, response.body)
        items = items + parsed.get("SpotPriceHistory", [])
        if next_token := parsed.get("NextToken"):
            yield self._spot_history_request(region, start, items, next_token)
            return
        zones: dict[str, dict[str, dict]] = {}
        for item in items:
            price = spot_price(item["SpotPrice"])
            if (item["ProductDescription"] == "Linux/UNIX" and item["InstanceType"] in INSTANCES
                    and price is not None):
                zone = item.get("AvailabilityZoneId") or item["AvailabilityZone"]
                zones.setdefault(item["InstanceType"], {})[zone] = {**item, "price": price}
        for instance, by_zone in sorted(zones.items()):
            cheapest = min(by_zone.values(), key=lambda i: (i["price"], i["AvailabilityZone"]))
            yield self._offer(response, instance, region, "spot", str(cheapest["price"]), "USD", {
                "availability_zone": cheapest["AvailabilityZone"],
                "availability_zone_id": cheapest.get("AvailabilityZoneId"),
                "timestamp": cheapest["Timestamp"].isoformat() if cheapest.get("Timestamp")
                else None,
                "zone_prices": {z: str(i["price"]) for z, i in sorted(by_zone.items())}})

    def _offer(self, response: Response, instance: str, region: str, kind: str, price: str,
               currency: str, extra: dict, **machine: str | None) -> RawOffer:
        gpu_text, gpu_count = INSTANCES[instance]
        return self.offer(response, sku=instance, gpu_text=gpu_text, gpu_count=gpu_count,
                          region_text=region, offer_kind=kind, price_amount=price,
                          currency=currency, billing_period="hour",
                          available=None,
                          vendor_data=extra, **machine)
