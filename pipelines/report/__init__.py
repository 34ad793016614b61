"""The price-history report: one self-contained HTML page built from the DuckDB database.

The page shows what the marts say; it computes nothing of its own except the daily medians the
charts plot. The package reads top to bottom as the page is made:

* queries.py + sql/   what the page reads (every table it needs, each query in a .sql file)
* charts.py           the family charts as plotly figures; the font stack
* card_history.py     the price history per card (a line per vendor)
* formatting.py       how a value is written (prices, percentages, counts, times)
* tables.py           tables as data: columns turning rows into cells; safe links
* sections.py         each section's content (banner, header, history, cheapest, workloads,
                      claims)
* signals.py          the signals section's content
* page.py             the templates (templates/*.html.j2) rendered and published by rename

Vendor names, skus, region codes and URLs come from scraped web pages, so every value shown goes
through `clean_text` (control characters made visible, long values cut) and the templates escape
everything they print (Jinja2 autoescape); links are kept only for http(s) URLs, and chart data
reaches plotly.js as JSON, never as markup. plotly.js is inlined once, with the first chart, so
the page works offline from a file:// URL (it is most of the page's ~4.9 MB).
"""

from pipelines.report.charts import CHARTS, FAMILIES, figure
from pipelines.report.page import ReportResult, build_report, claims_section, link, render_page
from pipelines.report.queries import ADVICE_TABLE, REPORT_TABLES, ReportError

__all__ = [
    "ADVICE_TABLE",
    "CHARTS",
    "FAMILIES",
    "REPORT_TABLES",
    "ReportError",
    "ReportResult",
    "build_report",
    "claims_section",
    "figure",
    "link",
    "render_page",
]
