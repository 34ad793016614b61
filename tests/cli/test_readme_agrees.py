"""The READMEs (English and Chinese) agree with the code: each "fetched as" cell of the Sources
table starts with what `gpuprices sources` prints, and every Dagster schedule is named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.cli.output import console
from pipelines.cli.sources import fetch_text
from spiders.registry import source_names, spider_class

ROOT = Path(__file__).resolve().parents[2]


def fetch_cells(readme: str) -> dict[str, str]:
    """Source -> its "fetched as" cell (the fourth column), backticks removed."""
    cells, in_table = {}, False
    for line in (ROOT / readme).read_text(encoding="utf-8").splitlines():
        in_table = (in_table and line.startswith("|")) or \
            ("| fetched as |" in line or "| 抓取方式 |" in line)
        if not (in_table and re.match(r"\| `[a-z_]+`", line)):
            continue
        columns = [c.strip() for c in line.strip("|").split("|")]
        for source in re.findall(r"`([a-z_]+)`", columns[0]):
            cells[source] = columns[3].replace("`", "")
    return cells


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_readme_fetch_column_starts_with_what_sources_prints(readme):
    cells = fetch_cells(readme)
    assert set(cells) == set(source_names())
    for name in source_names():
        assert cells[name].startswith(fetch_text(spider_class(name))), (readme, name)


def test_sources_command_prints_the_fetch_text(tmp_path, monkeypatch):
    monkeypatch.setattr(console, "width", 400)     # each cell on one line
    result = CliRunner(env={"GPUPRICES_DATA_DIR": str(tmp_path)}).invoke(main, ["sources"])
    assert result.exit_code == 0, result.output
    assert "HTML table; API with GCP_API_KEY" in result.output
    assert "JSON API; API with AUTODL_TOKEN" in result.output


@pytest.mark.parametrize("readme", ["README.md", "README.zh-CN.md"])
def test_readme_names_every_schedule(readme):
    from pipelines.definitions import defs

    text = (ROOT / readme).read_text(encoding="utf-8")
    schedules = [s.name for s in defs.schedules]
    assert "report_daily_schedule" in schedules
    for name in schedules:
        assert f"`{name}`" in text, (readme, name)
