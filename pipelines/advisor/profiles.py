"""Saved workload profiles: the `workloads:` list of a workloads.yaml text, each profile checked
on its own so one bad profile never hides the others."""

from __future__ import annotations

from pipelines.advisor.memory import estimate_memory
from pipelines.advisor.workload import AdvisorError, Workload


def parse_profiles(text: str, origin: str = "workloads.yaml") -> tuple[list[Workload], list[str]]:
    """The saved profiles of a workloads.yaml text: (valid workloads, one error per bad profile).

    The file is `workloads:` followed by a list of mappings with the fields of `Workload`
    (`name`, `params`, `task`, `hours_per_day`, `days` required by sense; `name` unique). A file
    that is not YAML, or has no such list, raises AdvisorError naming the file."""
    import yaml

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AdvisorError(f"{origin}: not valid YAML: {exc}") from None
    entries = document.get("workloads") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise AdvisorError(f"{origin}: expected `workloads:` followed by a list of profiles")
    workloads: list[Workload] = []
    errors: list[str] = []
    names: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        label = entry.get("name") if isinstance(entry, dict) and entry.get("name") else f"#{number}"
        try:
            if not isinstance(entry, dict):
                raise AdvisorError("a profile is a mapping of fields")
            if not entry.get("name"):
                raise AdvisorError("a saved profile needs a `name`")
            if str(entry["name"]) in names:
                raise AdvisorError("another profile has the same name")
            workload = Workload.from_mapping(entry)
            estimate_memory(workload)   # a task/precision pair that cannot be sized fails here
        except AdvisorError as exc:
            errors.append(f"{origin}: profile {label}: {exc}")
            continue
        names.add(str(entry["name"]))
        workloads.append(workload)
    return workloads, errors
