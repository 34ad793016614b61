"""No secret lives in the repository: keys and notification URLs come from the environment only."""

import re
import subprocess

import pytest

from spiders.layout import REPO_ROOT

SECRET_PATTERNS = {
    "AWS access key": r"AKIA[0-9A-Z]{16}",
    "private key": r"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----",
    "Slack token": r"xox[abposr]-[0-9A-Za-z-]{10,}",
    "Google API key": r"AIza[0-9A-Za-z_-]{35}",
    "GitHub token": r"gh[pousr]_[0-9A-Za-z]{36}",
    "credentials in a URL": (r"[a-z][a-z0-9+.-]*://[^/\s:@'\"]+:(?P<password>[^/\s@'\"]{6,})"
                             r"@(?P<host>[a-z0-9.-]+)"),
    "assigned secret": (r"(?i)(?:api[_-]?key|secret|token|password)\s*[=:]\s*"
                        r"['\"][0-9A-Za-z/+_-]{16,}['\"]"),
}


# Documentation and test hosts (RFC 2606 names, loopback) cannot receive real credentials.
PLACEHOLDER_HOST = re.compile(
    r"(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$|^127\.")


PLACEHOLDER_PASSWORDS = {"password", "app-password", "secret", "changeme", "yourpassword"}


def tracked_files():
    out = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [REPO_ROOT / p for p in out.stdout.splitlines() if (REPO_ROOT / p).is_file()]


def test_no_secret_in_tracked_files():
    found = []
    for path in tracked_files():
        if path.name == "test_no_secrets.py":   # its own samples
            continue
        text = path.read_bytes()[:2_000_000].decode("utf-8", "replace")
        for name, pattern in SECRET_PATTERNS.items():
            for match in re.finditer(pattern, text):
                line = text[text.rfind("\n", 0, match.start()) + 1:text.find("\n", match.end())]
                host = match.groupdict().get("host") or ""
                password = (match.groupdict().get("password") or "").lower()
                if PLACEHOLDER_HOST.search(host) or password in PLACEHOLDER_PASSWORDS:
                    continue
                if "not a secret" not in line:   # a reviewed look-alike says so on its line
                    found.append(f"{path.relative_to(REPO_ROOT)}: {name}: {match.group()[:40]}")
    assert found == []


@pytest.mark.parametrize("sample, name", [
    ("AKIAIOSFODNN7EXAMPLE", "AWS access key"),
    ("json://user:supersecret@hooks.slack.com/x", "credentials in a URL"),
    ("api_key = 'abcd1234abcd1234abcd'", "assigned secret"),
])
def test_patterns_catch_what_they_claim(sample, name):
    assert re.search(SECRET_PATTERNS[name], sample)


def test_placeholder_hosts_are_not_secrets():
    assert PLACEHOLDER_HOST.search("smtp.example.com") and PLACEHOLDER_HOST.search("127.0.0.1")
    assert not PLACEHOLDER_HOST.search("hooks.slack.com")
