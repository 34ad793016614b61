"""What a keyless shared crawl process (spiders/crawl_many.py, as `gpuprices run` starts it) leaves
unimported: the vendor SDKs that only the keyed paths need, and the Scrapy extensions we turn off.
Each import is CPU time on the run's busiest seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from spiders.layout import REPO_ROOT
from spiders.registry import spider_class

SOURCES = ["alibaba_cn", "aws"]
# alibaba_cn's signer and models, aws's botocore; Scrapy's remote control (aiohttp) and telnet
NOT_IMPORTED = ["alibabacloud_ecs20140526", "alibabacloud_tea_openapi",
                "spiders.vendors.alibaba_cn_openapi", "botocore",
                "scrapy.extensions.remote_control", "scrapy.extensions.telnet"]
CHILD = """
import json, sys
from spiders.crawl_many import crawl_many
crawl_many(json.loads(sys.argv[1]))
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[2].split(","))))
"""


def test_a_keyless_crawl_imports_no_keyed_sdk_and_no_disabled_extension(replay_server, tmp_path):
    keys = {k for s in SOURCES for k in spider_class(s).key_envs} | {"AWS_SESSION_TOKEN"}
    env = {k: v for k, v in os.environ.items() if k not in keys}
    env.update(GPUPRICES_REPLAY_URL=replay_server.url, GPUPRICES_DATA_DIR=str(tmp_path))
    jobs = [{"source": s, "crawl_id": "test", "items": str(tmp_path / f"{s}.jsonl")}
            for s in SOURCES]
    tops = sorted({m.split(".")[0] for m in NOT_IMPORTED})
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(jobs), ",".join(tops)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    imported = set(json.loads(proc.stdout.splitlines()[-1]))
    assert [m for m in NOT_IMPORTED if m in imported] == []
    assert "scrapy" in imported   # the probe itself works
    for source in SOURCES:   # and both crawled their public paths
        verdict = json.loads((tmp_path / "raw" / "crawls" / source / "test.json").read_text())
        assert verdict["passed"], verdict
