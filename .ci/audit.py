"""`make audit`: check every pinned dependency (requirements.lock) for known vulnerabilities.

pip-audit asks PyPI's vulnerability data per package version. When that data cannot be reached, or
knows nothing of a version, pip-audit skips the package; a run where everything was skipped is
reported as skipped, never as "no known vulnerabilities". Exit codes: 0 clean or skipped (with a
message), 1 vulnerabilities found, 2 pip-audit itself failed.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    pip_audit = Path(sys.executable).parent / "pip-audit"
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = subprocess.run(
            [str(pip_audit), "-r", str(ROOT / "requirements.lock"), "--no-deps", "--disable-pip",
             "--vulnerability-service", "pypi", "--progress-spinner", "off", "-f", "json",
             "-o", report.name],
            capture_output=True, text=True, timeout=600)
        text = Path(report.name).read_text() if Path(report.name).stat().st_size else ""
    if not text:
        print(f"audit failed: pip-audit exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        return 2
    deps = json.loads(text)["dependencies"]
    skipped = [d for d in deps if d.get("skip_reason")]
    audited = [d for d in deps if not d.get("skip_reason")]
    vulnerable = [d for d in audited if d.get("vulns")]
    for dep in vulnerable:
        for vuln in dep["vulns"]:
            fixes = ", ".join(vuln.get("fix_versions") or []) or "no fix yet"
            print(f"VULNERABLE {dep['name']} {dep['version']}: {vuln['id']} (fixed in {fixes})")
    print(f"audited {len(audited)} of {len(deps)} pinned packages; {len(vulnerable)} vulnerable; "
          f"{len(skipped)} skipped")
    if skipped:
        reasons = sorted({d["skip_reason"].split(":")[0] for d in skipped})
        print(f"skipped because: {'; '.join(reasons)} (the vulnerability database was not "
              "reachable or does not know these versions)")
    if not audited:
        print("audit SKIPPED: no package could be checked here; run `make audit` where PyPI's "
              "vulnerability data is reachable")
        return 0
    return 1 if vulnerable else 0


if __name__ == "__main__":
    sys.exit(main())
