"""The alert-rule registry: a rule is one SQL file in `registry/` beside this module and one
template, `templates/<rule>.j2` (its first line the title, the rest the body); nothing else
changes to add one (docs/alerts.md, "Adding a rule").

The file is the rule's entry: its first comment is the rule's docs line (docs/alerts.md lists it,
tests/alerts/test_registry.py checks), then its header:

* `-- key: <column>, <column>`: the columns that make an alert unique (its key is
  `<rule>:<value>:<value>`, timestamps in UTC ISO 8601), so a finding alerts once;
* `-- setting: <name> = <number>`: a threshold the query binds as `$<name>`, with its default;
  the rules file may set it (`[<rule>] <name> = ...`), with `enabled` and `channels`.

Each row the query returns is one alert; its template gets the row as `row` (scraped text made
inert, pipelines/alerts/escaping.py). The query runs after the new observations and the held
ones are staged (alert_new_observations, alert_held_observations; see detect.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REGISTRY_DIR = Path(__file__).resolve().parent / "registry"
KEY = re.compile(r"^--\s*key:(.*)$", re.M)
SETTING = re.compile(r"^--\s*setting:\s*(\w+)\s*=\s*(-?[\d.]+)\s*$", re.M)
DOC = re.compile(r"\s*/\*(.*?)\*/", re.S)


class RegistryError(ValueError):
    """A registry entry that does not read; the message names its file."""


@dataclass(frozen=True)
class RegisteredRule:
    name: str
    doc: str                            # the docs line
    key: tuple[str, ...]                # the columns of the alert's key
    settings: tuple[tuple[str, float], ...]   # (name, default) the query binds as $name
    sql: str
    path: Path


def read_entry(path: Path) -> RegisteredRule:
    sql = path.read_text(encoding="utf-8")
    doc = DOC.match(sql)
    key = KEY.search(sql)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", path.stem):
        raise RegistryError(f"{path}: a rule's name is lowercase letters, digits and _")
    if not doc or not key:
        raise RegistryError(f"{path}: a rule starts with /* its docs line */ and a "
                            "`-- key: <columns>` line")
    columns = tuple(c.strip() for c in key.group(1).split(","))
    if not all(re.fullmatch(r"\w+", c) for c in columns):
        raise RegistryError(f"{path}: expected '-- key: <column>, <column>', got "
                            f"{key.group(0)!r}")
    settings = tuple((name, float(value)) for name, value in SETTING.findall(sql))
    return RegisteredRule(path.stem, " ".join(doc.group(1).split()), columns, settings, sql,
                          path)


@cache
def registered_rules(folder: Path = REGISTRY_DIR) -> tuple[RegisteredRule, ...]:
    """Every rule of the registry, by name."""
    return tuple(read_entry(p) for p in sorted(folder.glob("*.sql")))
