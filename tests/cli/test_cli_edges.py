"""CLI edges: numbers that are not numbers (`--max-price nan`, `inf`, `1e400`) and an empty
`--data-dir` are refused with a clear message and exit 2, never read as "no limit" or as the
repository root."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from pipelines.cli.group import main
from pipelines.cli.options import FiniteFloatRange
from tests.helpers.published import as_json, gpuprices


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "inf", "Infinity", "1e400", "1e309"])
def test_max_price_that_is_not_a_finite_number_is_refused(data_dir, value):
    result = gpuprices(data_dir, "prices", "--max-price", value)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '--max-price': '{value}' is not a finite number" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("value, words", [("-inf", "'-inf' is not a finite number"),
                                          ("0", "not in the range 0<x<=1000000"),
                                          ("1000001", "not in the range 0<x<=1000000"),
                                          ("cheap", "is not a valid float")])
def test_max_price_out_of_range_is_refused_as_before(data_dir, value, words):
    result = gpuprices(data_dir, "prices", "--max-price", value)
    assert result.exit_code == 2 and words in result.output, result.output


def test_the_largest_max_price_is_no_limit_at_all(data_dir, observations):
    assert as_json(data_dir, "--max-price", "1e6") == as_json(data_dir)
    cheap = as_json(data_dir, "--max-price", "20")
    assert cheap and all(float(r["price_per_gpu_hour_cny"]) <= 20 for r in cheap)


@pytest.mark.parametrize("value", [1.5, 0.001])
def test_finite_float_range_passes_finite_numbers(value):
    assert FiniteFloatRange(min=0, min_open=True).convert(str(value), None, None) == value


def test_finite_float_range_refuses_nan_even_without_bounds():
    with pytest.raises(click.BadParameter, match="'nan' is not a finite number"):
        FiniteFloatRange().convert("nan", None, None)


@pytest.mark.parametrize("value", ["", " ", "\t"])
@pytest.mark.parametrize("command", [["prices"], ["run", "--source", "idc_sinnet_bj"],
                                     ["sources"]])
def test_empty_data_dir_is_refused(value, command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # where an empty path would have pointed
    result = CliRunner(env={"GPUPRICES_DATA_DIR": None}).invoke(
        main, ["--data-dir", value, *command])
    assert result.exit_code == 2, result.output
    assert "--data-dir is empty" in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []   # nothing created or run


def test_a_given_data_dir_is_still_used(data_dir):
    result = CliRunner(env={"GPUPRICES_DATA_DIR": None}).invoke(
        main, ["--data-dir", str(data_dir), "prices", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("[")
