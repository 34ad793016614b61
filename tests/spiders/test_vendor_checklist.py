"""docs/new-vendor.md's checklist is what the spider contract checks: rendered from the contract's
own docstring and the "Rule:" docstrings of its test module (tests/spiders/vendor_checklist.py),
and kept up to date."""

from __future__ import annotations

from tests.helpers import spider_contract
from tests.helpers.spider_contract import OFFER_CHECKS
from tests.spiders import vendor_checklist
from tests.spiders.vendor_checklist import (
    BEGIN,
    DOC,
    END,
    offer_checks,
    render,
    rules,
    source_checks,
    updated,
)


def test_the_doc_holds_the_current_checklist():
    doc = DOC.read_text(encoding="utf-8")
    assert render() in doc, "run `python -m tests.spiders.vendor_checklist` and commit the doc"


def test_the_checklist_names_every_check_the_contract_runs():
    named = [name for name, _ in offer_checks(spider_contract.__doc__)]
    assert set(named) == {*OFFER_CHECKS, "unique", "normalizes", "one_row"}
    assert len(source_checks(spider_contract.__doc__)) >= 1


DOCSTRING = '''The contract.

What each offer meets (the check's name):
  fields        every field is there
  price         a price_amount is positive; else
                a price_text
and what each source meets: it yields offers; no key leaks.
'''
TESTS = '''
def test_one():
    """Rule: no spider converts a unit."""

def test_two():
    """The guard above can fail."""

def helper():
    """Rule: not a test."""
'''


def test_the_rendering_reads_the_table_the_source_part_and_the_rules():
    assert offer_checks(DOCSTRING) == [("fields", "every field is there"),
                                       ("price", "a price_amount is positive; else a price_text")]
    assert source_checks(DOCSTRING) == ["it yields offers", "no key leaks"]
    assert rules(TESTS) == [("test_one", "no spider converts a unit.")]


def test_a_new_rule_in_the_contract_tests_shows_up_and_the_doc_is_then_stale(monkeypatch, tmp_path):
    tests = tmp_path / "test_spider_contract.py"
    tests.write_text(vendor_checklist.CONTRACT_TESTS.read_text(encoding="utf-8") + TESTS,
                     encoding="utf-8")
    monkeypatch.setattr(vendor_checklist, "CONTRACT_TESTS", tests)
    assert "- [ ] no spider converts a unit. (`test_one`)" in render()
    doc = DOC.read_text(encoding="utf-8")
    assert render() not in doc
    assert render() in updated(doc) and updated(doc).count(BEGIN) == updated(doc).count(END) == 1
