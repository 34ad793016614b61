"""Alert titles and bodies from Jinja2 templates: `templates/<rule>.title.j2` and
`<rule>.body.j2` beside this module (a registry rule's one `<rule>.j2`: its first line the title,
the rest the body; pipelines/alerts/registry.py), each replaceable by a file of the same name in
the folder named by `[templates] dir` in the rules file.

Sandboxed (a template is configuration, not code), autoescape off (the text is plain, not HTML).
Every template is compiled, and the names it uses checked, when the rules are loaded: a bad
template fails the rules file with its file and line, never a delivery. A template that still
fails while rendering (a filter on a missing value) falls back to the default one, and the body
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from pipelines.alerts.registry import registered_rules

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
OFFER_NAMES = {"row", "card", "region", "offer", "price", "price_cny", "seen", "link"}
# The names each rule's templates may use. `row` holds every column of the rule's query
# (pipelines/alerts/sql/<rule>.sql), the others are prepared text (docs/alerts.md lists them).
TEMPLATE_NAMES: dict[str, set[str]] = {
    "drop": OFFER_NAMES | {"change_pct", "was", "median"},
    "new_low": OFFER_NAMES | {"group", "periods", "earlier"},
    "month_end_dip": {"row", "card", "region", "month", "offer", "compared", "dip", "signal",
                      "link"},
    "watch": OFFER_NAMES | {"watch", "watch_line", "ceiling", "since"},
    "workload_cheaper": {"row", "cost", "previous", "best", "region", "total", "previous_best",
                         "advised", "link"},
    "test": {"channel", "sent_at", "tags"},
}
# A registry rule's one template gets the row of its query.
REGISTERED_NAMES = {rule.name: {"row"} for rule in registered_rules()}


class TemplateProblem(ValueError):
    """A template that does not compile or uses an unknown name; the message names the file."""


def _environment(folder: Path | None) -> SandboxedEnvironment:
    folders = [str(folder)] if folder is not None else []
    return SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([*folders, str(TEMPLATES_DIR)]),
        autoescape=False, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=False)


def _check(env: SandboxedEnvironment, path: Path) -> None:
    name = path.name
    stem = name.removesuffix(".j2")
    rule, _, part = stem.rpartition(".")
    allowed = TEMPLATE_NAMES.get(rule) if part in ("title", "body") else None
    if stem in REGISTERED_NAMES:
        rule, allowed = stem, REGISTERED_NAMES[stem]
    if allowed is None or not name.endswith(".j2"):
        known = ", ".join([*(f"{r}.title.j2, {r}.body.j2" for r in TEMPLATE_NAMES),
                           *(f"{r}.j2" for r in REGISTERED_NAMES)])
        raise TemplateProblem(f"{path}: not a template name this version knows ({known})")
    source = path.read_text(encoding="utf-8")
    try:
        unknown = sorted(meta.find_undeclared_variables(env.parse(source, name, str(path)))
                         - allowed - set(env.globals))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateProblem(f"{path}:{exc.lineno}: {exc.message}") from exc
    if unknown:
        raise TemplateProblem(f"{path}: unknown name(s) {', '.join(unknown)} (known for {rule}: "
                              f"{', '.join(sorted(allowed))})")


@dataclass(frozen=True)
class AlertTexts:
    """Renders the (title, body) of an alert from its rule's templates."""
    env: SandboxedEnvironment
    default_env: SandboxedEnvironment
    folder: Path | None

    def render(self, rule: str, context: Mapping[str, Any]) -> tuple[str, str]:
        try:
            return self._render(self.env, rule, context)
        except jinja2.TemplateError as exc:
            if self.folder is None:
                raise
            title, body = self._render(self.default_env, rule, context)
            return title, f"{body}\n(template in {self.folder} failed: {exc}; default used)"

    @staticmethod
    def _render(env: SandboxedEnvironment, rule: str,
                context: Mapping[str, Any]) -> tuple[str, str]:
        if rule in REGISTERED_NAMES:
            title, _, body = env.get_template(f"{rule}.j2").render(context).partition("\n")
        else:
            title = env.get_template(f"{rule}.title.j2").render(context)
            body = env.get_template(f"{rule}.body.j2").render(context)
        # A title is one line; a body keeps its lines, without the blank ones at either end.
        return " ".join(title.split()), body.strip("\n")


def alert_texts(folder: Path | None = None) -> AlertTexts:
    """The templates, the overrides in `folder` first; every one checked (TemplateProblem)."""
    env = _environment(folder)
    for path in sorted(TEMPLATES_DIR.glob("*.j2")):
        _check(env, path)
    if folder is not None:
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                _check(env, path)
    return AlertTexts(env, _environment(None), folder)
