"""Alert titles and bodies from Jinja2 templates: every rule of the registry
(pipelines/alerts/registry.py) has one, `templates/<rule>.j2` beside this module, whose first line
is the title and the rest the body (the test notification has `test.title.j2` and
`test.body.j2`). Each is replaceable by a file of the same name in the folder named by
`[templates] dir` in the rules file, or its title or body alone by `<rule>.title.j2` /
`<rule>.body.j2` there (the names the five older rules' templates had).

Sandboxed (a template is configuration, not code), autoescape off (the text is plain, not HTML).
Every template is compiled, and the names it uses checked, when the rules are loaded: a bad
template fails the rules file with its file and line, never a delivery. A template that still
fails while rendering (a filter on a missing value) falls back to the default one, and the body
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from pipelines.alerts.registry import registered_rules
from pipelines.display import amount_text, card_share_text, price_text

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
OFFER_NAMES = {"row", "card", "region", "offer", "price", "price_cny", "seen", "link"}
# The names a template may use: `row` holds every column of the rule's query
# (pipelines/alerts/registry/<rule>.sql); the five older rules' templates get prepared text
# besides (messages.py; docs/alerts.md lists it), and so does the test notification.
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
TWO_FILE_TEMPLATES = ("test",)   # not a rule: its title and body are files of their own


def registered_names() -> dict[str, set[str]]:
    """The names each registry rule's template may use, by rule."""
    return {rule.name: TEMPLATE_NAMES.get(rule.name, {"row"}) for rule in registered_rules()}


class TemplateProblem(ValueError):
    """A template that does not compile or uses an unknown name; the message names the file."""


def _environment(folder: Path | None) -> SandboxedEnvironment:
    folders = [str(folder)] if folder is not None else []
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([*folders, str(TEMPLATES_DIR)]),
        autoescape=False, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=False)
    # numbers as the CLI and the report write them (pipelines/display.py): {{ x | amount }}
    env.filters.update(amount=amount_text, price=price_text, card_share=card_share_text)
    return env


def _check(env: SandboxedEnvironment, path: Path) -> None:
    name = path.name
    stem = name.removesuffix(".j2")
    rule, _, part = stem.rpartition(".")
    rules = registered_names()
    two_file = {r: TEMPLATE_NAMES[r] for r in TWO_FILE_TEMPLATES} | rules
    allowed = two_file.get(rule) if part in ("title", "body") else rules.get(stem)
    rule = rule if part in ("title", "body") else stem
    if allowed is None or not name.endswith(".j2"):
        known = ", ".join([*(f"{r}.j2" for r in rules),
                           *(f"{r}.title.j2, {r}.body.j2" for r in two_file)])
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


@cache
def _part(env: SandboxedEnvironment, rule: str, part: str) -> jinja2.Template:
    """A rule's title or body: `<rule>.<part>.j2` when there is one (an override, or the test
    notification's), else the first line (title) or the rest (body) of `<rule>.j2`. The title
    is cut from the source, not from the rendered text, so a line break in a value stays in it."""
    try:
        return env.get_template(f"{rule}.{part}.j2")
    except jinja2.TemplateNotFound:
        source, _, _ = env.loader.get_source(env, f"{rule}.j2")
        title, _, body = source.partition("\n")
        return env.from_string(title if part == "title" else body)


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
        title = _part(env, rule, "title").render(context)
        body = _part(env, rule, "body").render(context)
        # A title is one line; a body keeps its lines, without the blank ones at either end.
        return " ".join(title.split()), body.strip("\n")


def alert_texts(folder: Path | None = None) -> AlertTexts:
    """The templates, the overrides in `folder` first; every one checked (TemplateProblem)."""
    env = _environment(folder)
    missing = [r for r in registered_names() if not (TEMPLATES_DIR / f"{r}.j2").is_file()]
    if missing:
        raise TemplateProblem(f"{TEMPLATES_DIR}: no template for the registry rule(s) "
                              f"{', '.join(missing)} (one <rule>.j2 each, docs/alerts.md)")
    for path in sorted(TEMPLATES_DIR.glob("*.j2")):
        _check(env, path)
    if folder is not None:
        for path in sorted(folder.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                _check(env, path)
    return AlertTexts(env, _environment(None), folder)
