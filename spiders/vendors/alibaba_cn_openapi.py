"""阿里云 ECS OpenAPI requests signed by Alibaba's own SDK, for Scrapy to send (alibaba_cn's keyed
path).

The request is built from `alibabacloud_ecs20140526.models` (DescribeInstanceTypesRequest,
DescribePriceRequest), its query flattened by the SDK (`Utils.query`), the endpoint taken from the
SDK client's own endpoint rules (`ecs.cn-beijing.aliyuncs.com`, `ecs-cn-hangzhou.aliyuncs.com`),
and the request signed with the SDK's ACS3-HMAC-SHA256 signer (`Utils.get_authorization`), the
headers built as `alibabacloud_tea_openapi.client.Client.do_request` builds them (the path every
ECS call takes unless `signature_algorithm='v2'`): version, action, date, nonce and payload hash
in `x-acs-*` headers, the signature in `Authorization`. So the URL (method POST, the API's
parameters in the query, an empty body) holds neither the secret nor the varying nonce/date, and
replay matches it as is. The nonce and date are injectable (`signed_request(..., nonce=, date=)`)
so a test can pin the signature (tests/spiders/test_alibaba_cn_keyed.py checks that every header,
the signature included, equals what the SDK's own `describe_price_with_options` builds).
Responses are read through the SDK's response models (`DescribePriceResponseBody().from_map(...)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from alibabacloud_ecs20140526.client import Client
from alibabacloud_tea_openapi import utils_models
from alibabacloud_tea_openapi.utils import Utils
from darabonba.request import DaraRequest
from Tea.model import TeaModel

API_VERSION = "2014-05-26"
SIGN_TYPE = "ACS3-HMAC-SHA256"
# The ECS client's params for both actions (client.py, describe_*_with_options): RPC style,
# POST, pathname "/", parameters in the query.
METHOD = "POST"
PATHNAME = "/"


@dataclass(frozen=True)
class SignedRequest:
    url: str                 # https://<endpoint>/?<the API's parameters>: no secret, no nonce
    headers: dict[str, str]  # x-acs-* and Authorization: never archived, never logged


def endpoint(region_id: str) -> str:
    """The host the SDK's own endpoint rules give for `region_id` (no network: rules only)."""
    client = Client(utils_models.Config(access_key_id="-", access_key_secret="-",
                                        region_id=region_id))
    return client._endpoint


def signed_request(action: str, request: TeaModel, region_id: str, access_key_id: str,
                   access_key_secret: str, *, nonce: str | None = None,
                   date: str | None = None) -> SignedRequest:
    """`request` (an SDK request model) as the SDK would send it for `action`, signed."""
    request.validate()
    query = {k: str(v) for k, v in Utils.query(request.to_map()).items() if v is not None}
    host = endpoint(region_id)
    dara = DaraRequest()
    dara.protocol, dara.method, dara.pathname, dara.query = "HTTPS", METHOD, PATHNAME, query
    payload = Utils.hash(b"", SIGN_TYPE).hex()   # no body: every parameter is in the query
    dara.headers = {
        "host": host,
        "x-acs-version": API_VERSION,
        "x-acs-action": action,
        "user-agent": Utils.get_user_agent(None),
        "x-acs-date": date or Utils.get_timestamp(),
        "x-acs-signature-nonce": nonce or Utils.get_nonce(),
        "accept": "application/json",
        "x-acs-content-sha256": payload,
        # what the SDK's credential client names a plain AccessKey pair (also signed)
        "x-acs-credentials-provider": "static_ak",
    }
    headers = dict(dara.headers)
    headers["Authorization"] = Utils.get_authorization(dara, SIGN_TYPE, payload, access_key_id,
                                                       access_key_secret)
    encoded = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}"
                       for k, v in sorted(query.items()))
    return SignedRequest(url=f"https://{host}{PATHNAME}?{encoded}", headers=headers)


class OpenApiError(ValueError):
    """An error envelope ({"Code", "Message", "RequestId"}), sent with HTTP 4xx/5xx or 200."""

    def __init__(self, action: str, code: str, message: str, url: str) -> None:
        super().__init__(f"alibaba_cn: {action} answered {code!r} ({message}) on {url}")
        self.code = code


def error_of(action: str, body: object, url: str) -> OpenApiError | None:
    """The API's error envelope in `body`, or None when it carries no `Code`. Code, Message and
    RequestId are what the SDK's RPC client (alibabacloud-tea-openapi Client.do_rpcrequest) reads
    from an error answer."""
    if isinstance(body, dict) and body.get("Code"):
        return OpenApiError(action, str(body["Code"]), str(body.get("Message", "")), url)
    if not isinstance(body, dict):
        return OpenApiError(action, "NotAnObject", type(body).__name__, url)
    return None


def model_from(model: TeaModel, body: dict) -> TeaModel:
    """`body` read through the SDK's response model (`model().from_map(body)`)."""
    return model.from_map(body)
