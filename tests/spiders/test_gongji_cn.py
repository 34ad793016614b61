"""共绩算力: the Open API device list (signed in RSA mode), parsed from the docs' example answer
through normalization: one offer per device and region, priced in 微元 per second for the whole
device; the signature verifies with the key's public half; error envelopes and renamed fields
fail loudly; without the keys the source is skipped."""

import base64
import copy
import json
from decimal import Decimal

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from scrapy.http import Request, TextResponse

from pipelines.normalize import normalize_offer
from pipelines.resources import CrawlerResource
from spiders.layout import SNAPSHOT_DIR
from spiders.vendors.gongji_cn import SIGNED_PATH, GongjiCNSpider, signed_headers, signing_string
from tests.helpers.responses import file_response
from tests.helpers.rsa_keys import throwaway_rsa_pem
from tests.helpers.spider_contract import check_contract

SOURCE = "gongji_cn"
URL = GongjiCNSpider.start_urls[0]
FAKE_TOKEN = "fake-gongji-token-for-tests"  # not a secret: a test's fake token


def answer() -> dict:
    return json.loads((SNAPSHOT_DIR / SOURCE / "resources.json").read_text(encoding="utf-8"))


def parsed(body: dict | None = None) -> list[dict]:
    response = file_response(SOURCE, "resources.json") if body is None else TextResponse(
        url=URL, body=json.dumps(body).encode(), encoding="utf-8", request=Request(URL))
    return [dict(o) for o in GongjiCNSpider(crawl_id="t").parse(response)]


def test_the_signature_is_the_documented_string_under_the_users_key():
    pem = throwaway_rsa_pem()
    headers = signed_headers(FAKE_TOKEN, pem, 1770194570564)
    assert {k: headers[k] for k in ("token", "timestamp", "version")} == {
        "token": FAKE_TOKEN, "timestamp": "1770194570564", "version": "1.0.0"}
    signed = signing_string(SIGNED_PATH, 1770194570564, FAKE_TOKEN)
    assert signed == ("/api/deployment/resource/search?task_type=Deployment&device_type=GpuDevice"
                      f"\n1.0.0\n1770194570564\n{FAKE_TOKEN}\n{{}}")
    public = serialization.load_pem_private_key(pem.encode(), password=None).public_key()
    public.verify(base64.b64decode(headers["sign_str"]), signed.encode(), padding.PKCS1v15(),
                  hashes.SHA256())   # raises if the signature is not over that string


def test_one_offer_per_device_and_region():
    offers = parsed()
    assert [(o["sku"], o["region_text"]) for o in offers] == [
        ("H20 x 8", "河北一区"), ("H20 x 8", "新疆一区")]
    assert all(o["gpu_count"] == 8 and o["available"] is False for o in offers)  # inventory 0
    assert offers[0]["vendor_data"]["discount_price"] == 16416
    check_contract(SOURCE, parsed())


def test_the_device_price_lands_per_gpu_hour_in_its_province():
    rows = [normalize_offer(o) for o in parsed()]
    # 16416 微元/秒 for 8 cards: 59.0976 元 per hour, 7.3872 per card-hour
    assert {r["price_per_gpu_hour_cny"] for r in rows} == {Decimal("7.387200")}
    assert {r["gpu_model"] for r in rows} == {"H20-96GB"}
    assert [(r["country"], r["province_or_state"]) for r in rows] == [
        ("CN", "Hebei"), ("CN", "Xinjiang")]


@pytest.mark.parametrize("code", ["1001", None])
def test_an_error_envelope_fails_loudly(code):
    with pytest.raises(ValueError, match="gongji_cn: API error"):
        parsed({"code": code, "message": "token invalid", "data": None})


@pytest.mark.parametrize("field", ["device_name", "gpu_name", "gpu_count", "regions"])
def test_a_renamed_field_fails_loudly(field):
    body = copy.deepcopy(answer())
    del body["data"]["results"][0][field]
    with pytest.raises(ValueError, match=f"gongji_cn: device without {field}"):
        parsed(body)


def test_without_the_keys_the_source_is_skipped_with_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.delenv("GONGJI_TOKEN", raising=False)
    monkeypatch.delenv("GONGJI_PRIVATE_KEY", raising=False)
    # illustrative prices make it opt-in: the run names it
    result = CrawlerResource(data_dir=str(tmp_path), opt_in=[SOURCE]).crawl(SOURCE, "c1")
    assert result.skipped and not result.passed
    assert result.failures == ["skipped: gongji_cn needs API keys in the environment variables "
                               "GONGJI_TOKEN, GONGJI_PRIVATE_KEY"]
