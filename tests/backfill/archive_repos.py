"""Small git repositories in the shape of the public price archives, built with
`git fast-import` (hundreds of commits in well under a second) at fixed commit times: the
SkyPilot catalog (catalogs/v<N>/<cloud>/vms.csv), cloud-gpus (cloud_gpu.json) and full-stack
(docs/cloud-gpus/cloud-gpus.csv). Their rows are made up; their columns are the archives'."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

AWS_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
              "SpotPrice,Region,AvailabilityZone")
GCP_HEADER = AWS_HEADER
LAMBDA_HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,"
                 "GpuInfo,SpotPrice")
FULL_STACK_HEADER = "Cloud,GPU Type,GPU Arch,GPUs,GPU RAM,vCPUs,RAM,On-demand,Per-GPU,Spot,Name"
FIXED_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
             "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
             "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}

Commit = tuple[datetime, dict[str, str | None]]   # (time, {path: text, or None to delete})


def build_repo(path: Path, commits: Iterable[Commit]) -> Path:
    """A repository at `path` whose main branch has `commits`, oldest first."""
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **FIXED_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    stream = []
    for n, (when, files) in enumerate(commits, 1):
        stamp = int(when.timestamp())
        message = f"update {n}".encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer t <t@example.org> {stamp} +0000\n".encode())
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
        for file, text in files.items():
            if text is None:
                stream.append(f"D {file}\n".encode())
                continue
            body = text.encode()
            stream.append(f"M 100644 inline {file}\ndata {len(body)}\n".encode() + body + b"\n")
        stream.append(b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(stream),
                   check=True, env=env)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True, env=env)
    return path


def aws_csv(price: float, spot: float | None = None) -> str:
    """Two p4d zones of us-east-1 (one on-demand price, a spot price per zone), a CPU type."""
    spot_a = "" if spot is None else f"{spot:.4f}"
    spot_b = "" if spot is None else f"{spot * 1.1:.4f}"
    return "\n".join([
        AWS_HEADER,
        f"p4d.24xlarge,A100,8.0,96.0,1152.0,\"{{'Gpus': []}}\",{price:.4f},{spot_a},us-east-1,"
        "use1-az1",
        f"p4d.24xlarge,A100,8.0,96.0,1152.0,\"{{'Gpus': []}}\",{price:.4f},{spot_b},us-east-1,"
        "use1-az2",
        "m5.large,,,2.0,8.0,,0.0960,0.0400,us-east-1,use1-az1",
    ]) + "\n"


def gcp_csv(host: float, gpu: float) -> str:
    """An a2-highgpu-1g host row and its A100 row in one zone, a T4 with no host of its own."""
    return "\n".join([
        GCP_HEADER,
        f"a2-highgpu-1g,,,12.0,85.0,,{host:.5f},{host / 3:.5f},us-central1,us-central1-a",
        "n1-standard-8,,,8.0,30.0,,0.38,0.08,us-central1,us-central1-a",
        f",A100,1.0,,,A100,{gpu:.5f},{gpu / 3:.5f},us-central1,us-central1-a",
        ",T4,1.0,,,T4,0.35,0.11,us-central1,us-central1-a",
    ]) + "\n"


def lambda_csv(price: float) -> str:
    return LAMBDA_HEADER + "\n" + f"gpu_1x_h100_pcie,H100,1.0,26.0,200.0,{price:.2f},us-east-1,,\n"


def cloud_gpus_json(prices: dict[str, float]) -> str:
    """One provider per name, its A100 80GB price ('-' for its H100)."""
    return json.dumps({"data": [
        {"name": name, "url": "https://example.org", "costa100_80": f"${price:.2f}",
         "costh100": "-", "region": "Worldwide"} for name, price in prices.items()]}, indent=4)


def full_stack_csv(rows: Sequence[tuple[str, str, int, float, float | None, str]]) -> str:
    """rows: (cloud, GPU type, GPUs, on-demand, spot, instance name)."""
    lines = [FULL_STACK_HEADER]
    for cloud, card, gpus, price, spot, name in rows:
        spot_text = "" if spot is None else f"{spot:.2f}"
        lines.append(f"{cloud},{card},Ampere,{gpus},80,12,85,{price:.2f},"
                     f"{price / gpus:.2f},{spot_text},{name}")
    return "\n".join(lines) + "\n"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)
