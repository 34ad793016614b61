"""The replay server: live URL in, recorded bytes out; unknown requests are refused clearly."""

import json
import urllib.error
import urllib.request

import pytest

from spiders.replay_server import CAPTURED_AT_HEADER, ReplayServer, replay_url, request_key


def _get(url: str, data: bytes | None = None):
    return urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5)


def test_serves_a_recorded_page_with_its_capture_time(replay_server):
    with _get(replay_url(replay_server.url, "https://www.sinnet.com.cn/gpu/price.html")) as resp:
        assert resp.status == 200
        assert "text/html" in resp.headers["Content-Type"]
        assert resp.headers[CAPTURED_AT_HEADER] == "2026-11-30T09:00:00Z"
        assert "按小时".encode() in resp.read()


def test_unknown_url_is_a_404_naming_the_request(replay_server):
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(replay_url(replay_server.url, "https://example.invalid/nothing"))
    assert err.value.code == 404
    assert b"no recorded snapshot for GET https://example.invalid/nothing" in err.value.read()


def test_query_order_does_not_matter():
    assert request_key("GET", "https://a.test/p?b=2&a=1") == request_key("get", "https://a.test/p?a=1&b=2")


def test_post_bodies_are_matched_as_json(tmp_path):
    source = tmp_path / "vendor"
    source.mkdir()
    (source / "offers.json").write_text('{"offers": []}')
    (source / "manifest.json").write_text(json.dumps({
        "source": "vendor", "captured_at": "2026-01-01T00:00:00Z", "provenance": "captured",
        "entries": [{"method": "POST", "url": "https://api.test/bundles",
                     "body": {"limit": 10, "q": "a100"},
                     "file": "offers.json", "content_type": "application/json"}]}))
    with ReplayServer(tmp_path) as server:
        url = replay_url(server.url, "https://api.test/bundles")
        with _get(url, data=b'{"q": "a100", "limit": 10}') as resp:  # same JSON, other key order
            assert json.load(resp) == {"offers": []}
        with pytest.raises(urllib.error.HTTPError):
            _get(url, data=b'{"q": "h100", "limit": 10}')


def test_duplicate_manifest_entries_are_refused(tmp_path):
    source = tmp_path / "vendor"
    source.mkdir()
    entry = {"url": "https://a.test/", "file": "x.html", "content_type": "text/html"}
    (source / "manifest.json").write_text(json.dumps({
        "source": "vendor", "captured_at": "2026-01-01T00:00:00Z", "entries": [entry, entry]}))
    with pytest.raises(ValueError, match=r"two snapshots for GET https://a\.test/"):
        ReplayServer(tmp_path)


# --- the replay middleware: a live request redirected to loopback keeps its vendor's slot --------

def test_a_replayed_request_keeps_its_vendor_hosts_download_slot():
    from scrapy import Request

    from spiders.middlewares.replay import LIVE_URL_META, ReplayMiddleware

    middleware = ReplayMiddleware("http://127.0.0.1:9")
    replayed = [middleware.process_request(Request(url))
                for url in ("https://www.sinnet.com.cn/gpu/price.html",
                            "https://prices.azure.com/api/retail/prices?page=2")]
    assert [r.url.startswith("http://127.0.0.1:9/replay?url=") for r in replayed] == [True, True]
    # two vendors, two slots (as live), not one loopback slot both sources would queue in
    assert [r.meta["download_slot"] for r in replayed] == ["www.sinnet.com.cn", "prices.azure.com"]
    assert replayed[1].meta[LIVE_URL_META] == "https://prices.azure.com/api/retail/prices?page=2"
    # a spider's own slot is kept
    own = middleware.process_request(Request("https://a.test/x", meta={"download_slot": "mine"}))
    assert own.meta["download_slot"] == "mine"


@pytest.mark.parametrize("replay, delay", [("http://127.0.0.1:9", 0.0), (None, 0.5)])
def test_autothrottle_starts_without_a_delay_only_when_replaying(replay, delay, monkeypatch):
    import importlib

    import spiders.settings

    if replay:
        monkeypatch.setenv("GPUPRICES_REPLAY_URL", replay)
    else:
        monkeypatch.delenv("GPUPRICES_REPLAY_URL", raising=False)
    try:
        settings = importlib.reload(spiders.settings)
        assert settings.AUTOTHROTTLE_ENABLED
        assert delay == settings.AUTOTHROTTLE_START_DELAY
        assert settings.LIVE_AUTOTHROTTLE_START_DELAY > 0
    finally:
        monkeypatch.undo()
        importlib.reload(spiders.settings)
