"""Sources with a plain HTML price table (regional computing centres, GPU clouds whose price
table is a documentation page): one spider class per entry of spiders/vendors/idc_tables.toml.

Adding such a source needs a configuration entry and a recorded snapshot, no code. Two keys are
read here besides the spider attributes: `template = true` marks a placeholder with no real
operator behind it (class attribute `is_template = True`: excluded from signals, claims and the
index), and `url_verified` / `note` are documentation. Each entry of `cards` (a partition, queue
or unit mapped to its card) must cite its evidence: a mapping without it is refused at load.
"""

import tomllib
from pathlib import Path

from spiders.base import HtmlTableSpider

SOURCES_FILE = Path(__file__).resolve().parent / "idc_tables.toml"
_SPIDER_ATTRS = {"vendor", "vendor_kind", "start_urls", "rows", "header", "tables", "card_fields",
                 "extra_cells", "columns", "prices", "spot_prices", "not_offered", "region",
                 "offer_kind", "min_offers", "range_end", "price_per_card", "effective_at",
                 "page_unit", "keep_rows", "partition", "cards"}
_CARD_KEYS = {"card", "evidence", "gpu_count"}


def _class_name(slug: str) -> str:
    parts = (part.upper() if len(part) == 2 else part.title() for part in slug.split("_"))
    return "".join(parts) + "Spider"


def load_table_spiders(path: Path = SOURCES_FILE) -> dict[str, type[HtmlTableSpider]]:
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    spiders = {}
    for slug, entry in config.get("html_table", {}).items():
        unknown = set(entry) - _SPIDER_ATTRS - {"url_verified", "note", "template"}
        if unknown:
            raise ValueError(f"{path}: [html_table.{slug}] has unknown keys {sorted(unknown)}")
        _check_cards(path, slug, entry.get("cards", {}))
        attrs = {k: v for k, v in entry.items() if k in _SPIDER_ATTRS}
        if not isinstance(entry.get("template", False), bool):
            raise ValueError(f"{path}: [html_table.{slug}] template must be true or false")
        attrs["is_template"] = entry.get("template", False)
        attrs.update(name=slug, __module__=__name__, __doc__=entry.get("note", slug))
        spiders[slug] = type(_class_name(slug), (HtmlTableSpider,), attrs)
    return spiders


def _check_cards(path: Path, slug: str, cards: dict) -> None:
    """Every mapping names its evidence, and only the keys HtmlTableSpider reads."""
    for text, mapping in cards.items():
        where = f"{path}: [html_table.{slug}.cards] {text!r}"
        if not isinstance(mapping, dict) or set(mapping) - _CARD_KEYS:
            raise ValueError(f"{where} must be a table of {sorted(_CARD_KEYS)}")
        if not str(mapping.get("evidence", "")).strip():
            raise ValueError(f"{where} cites no evidence (URL or repository/file/commit, what "
                             "it shows)")
        count = mapping.get("gpu_count")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)
                                  or count < 1):
            raise ValueError(f"{where}: gpu_count must be a whole number of at least 1")


def template_sources(path: Path = SOURCES_FILE) -> list[str]:
    """The configured sources marked `template = true` (no real operator, illustrative prices)."""
    return sorted(slug for slug, cls in load_table_spiders(path).items() if cls.is_template)


globals().update({cls.__name__: cls for cls in load_table_spiders().values()})
