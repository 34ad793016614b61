"""The alert-rule registry (pipelines/alerts/registry.py): a rule is one SQL entry in
pipelines/alerts/registry/ and one template; back_in_stock, the first, was added so; a rule's
settings come from its entry and the rules file; its docs line is in docs/alerts.md."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pipelines.alerts as al
from pipelines.alerts import detect, registry, rules, templating
from pipelines.alerts.registry import RegistryError, read_entry, registered_rules
from tests.helpers.alert_histories import load, obs, outbox
from tests.helpers.alert_histories import rules as rules_with

ROOT = Path(__file__).resolve().parents[2]


def test_back_in_stock_alerts_once_when_an_offer_is_in_stock_again(con):
    r = rules_with(drop={"enabled": False})
    load(con, [obs(100, day=0, available=True)])
    al.detect_alerts(con, r)
    load(con, [obs(100, day=1, available=False)])
    assert al.detect_alerts(con, r).detected == 0
    load(con, [obs(100, day=2, available=True)])
    first, second = al.detect_alerts(con, r), al.detect_alerts(con, r)
    assert len(first.new_keys["back_in_stock"]) == 1 and second.detected == 0
    [alert] = outbox(con, "back_in_stock")
    assert alert["alert_key"].startswith("back_in_stock:")
    assert alert["alert_key"].endswith(":2026-11-22T09:00:00+00:00")
    assert alert["title"].startswith("Back in stock: A100-80GB at Test IDC, 北京")
    assert "Price: 100.00 CNY per GPU-hour" in alert["body"]
    assert "https://idc_test.example.test/prices" in alert["body"]


def test_a_registry_rule_can_be_switched_off_in_the_rules_file(con):
    r = rules_with(drop={"enabled": False}, back_in_stock={"enabled": False})
    load(con, [obs(100, day=0, available=False)])
    al.detect_alerts(con, r)
    load(con, [obs(100, day=1, available=True)])
    assert al.detect_alerts(con, r).detected == 0


def test_back_in_stock_took_one_registry_entry_and_one_template():
    """The rule's name appears in the product code only as its entry and its template."""
    files = [p for p in (ROOT / "pipelines").rglob("*") if p.is_file()
             and p.suffix in (".py", ".sql", ".j2", ".toml", ".yaml")]
    naming = sorted(p.relative_to(ROOT).as_posix() for p in files
                    if "back_in_stock" in p.name + p.read_text(encoding="utf-8"))
    assert naming == ["pipelines/alerts/registry/back_in_stock.sql",
                      "pipelines/alerts/templates/back_in_stock.j2"]


def test_every_registry_rule_has_its_docs_line_in_docs_alerts_md():
    doc = " ".join((ROOT / "docs" / "alerts.md").read_text(encoding="utf-8").split())
    for rule in registered_rules():
        assert f"| `{rule.name}` | {rule.doc} |" in doc


def _entry(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.sql"
    path.write_text(text, encoding="utf-8")
    return path


CHEAP = ("/* a current offer costs at most $ceiling CNY per GPU-hour */\n"
         "-- key: offer_id\n-- setting: ceiling = 50\n"
         "select offer_id, vendor, price_per_gpu_hour_cny from marts.latest_prices\n"
         "where price_per_gpu_hour_cny <= $ceiling\n")


def test_an_entry_reads_as_its_docs_line_key_and_settings(tmp_path):
    rule = read_entry(_entry(tmp_path, "cheap_offer", CHEAP))
    assert (rule.name, rule.key, rule.settings) == ("cheap_offer", ("offer_id",),
                                                     (("ceiling", 50.0),))
    assert rule.doc == "a current offer costs at most $ceiling CNY per GPU-hour"


@pytest.mark.parametrize("name, text, problem", [
    ("no_doc", "-- key: offer_id\nselect 1", "docs line"),
    ("no_key", "/* doc */\nselect 1", "-- key"),
    ("bad_key", "/* doc */\n-- key: offer id\nselect 1", "expected '-- key"),
    ("Bad-Name", "/* doc */\n-- key: x\nselect 1", "lowercase"),
])
def test_an_entry_that_does_not_read_is_refused_naming_its_file(tmp_path, name, text, problem):
    with pytest.raises(RegistryError, match=problem):
        read_entry(_entry(tmp_path, name, text))


def test_a_new_rule_is_one_entry_and_one_template(con, tmp_path, monkeypatch):
    """A rule added as an entry (with a setting the rules file overrides) and one template
    detects, keys and renders its alerts with nothing else changed."""
    rule = read_entry(_entry(tmp_path, "cheap_offer", CHEAP))
    templates = tmp_path / "templates"
    shutil.copytree(templating.TEMPLATES_DIR, templates)
    (templates / "cheap_offer.j2").write_text(
        "Cheap: {{ row.vendor }}\nat {{ row.price_per_gpu_hour_cny }} CNY per GPU-hour\n",
        encoding="utf-8")
    every = (*registered_rules(), rule)
    for module in (detect, rules):
        monkeypatch.setattr(module, "registered_rules", lambda: (rule,))
    monkeypatch.setattr(templating, "registered_rules", lambda: every)
    monkeypatch.setattr(templating, "TEMPLATES_DIR", templates)
    load(con, [obs(40, day=0), obs(60, day=0, sku="dearer")])
    r = rules_with(drop={"enabled": False}, cheap_offer={"ceiling": 45})
    [alert] = detect.registered_alerts(con, r, templating.alert_texts())
    assert alert.rule == "cheap_offer" and alert.alert_key.startswith("cheap_offer:")
    assert (alert.title, alert.body) == ("Cheap: Test IDC", "at 40.000000 CNY per GPU-hour")
    with pytest.raises(al.AlertConfigError, match=r"cheap_offer\.ceilling: unknown key"):
        rules_with(cheap_offer={"ceilling": 45})


def test_the_registry_reads_every_file_of_its_folder():
    assert [r.name for r in registered_rules()] == sorted(
        p.stem for p in registry.REGISTRY_DIR.glob("*.sql"))


# Tables of alerts.toml that are not rules: settings of detection, delivery and templates, and
# the run-failure notices' channels (notices.py).
NOT_RULES = {"detection", "delivery", "templates", "run_failure"}


def test_every_rule_has_its_entry_template_and_docs_line():
    """Each rule of the rules file and of the registry: its SQL entry, its one template, its
    docs line in docs/alerts.md; the five older rules among them."""
    import tomllib

    configured = set(tomllib.loads(rules.DEFAULT_CONFIG.read_text(encoding="utf-8"))) - NOT_RULES
    registered = {r.name for r in registered_rules()}
    assert configured <= registered
    assert {"drop", "new_low", "month_end_dip", "watch", "workload_cheaper",
            "back_in_stock"} <= registered
    doc = " ".join((ROOT / "docs" / "alerts.md").read_text(encoding="utf-8").split())
    for rule in registered_rules():
        assert rule.path == registry.REGISTRY_DIR / f"{rule.name}.sql"
        assert (templating.TEMPLATES_DIR / f"{rule.name}.j2").is_file(), rule.name
        assert f"| `{rule.name}` | {rule.doc} |" in doc, rule.name


def test_a_planted_rule_without_its_template_fails_loading_the_rules(tmp_path, monkeypatch):
    planted = read_entry(_entry(tmp_path, "cheap_offer", CHEAP))
    every = (*registered_rules(), planted)
    for module in (rules, templating):
        monkeypatch.setattr(module, "registered_rules", lambda: every)
    with pytest.raises(al.AlertConfigError, match=r"no template for the registry rule\(s\) "
                                                  r"cheap_offer"):
        rules_with()
    (tmp_path / "t").mkdir()
    shutil.copytree(templating.TEMPLATES_DIR, tmp_path / "t", dirs_exist_ok=True)
    (tmp_path / "t" / "cheap_offer.j2").write_text("Cheap\n{{ row.vendor }}\n", encoding="utf-8")
    monkeypatch.setattr(templating, "TEMPLATES_DIR", tmp_path / "t")
    assert rules_with().registered[-1][0] == "cheap_offer"   # with it, the rules load


def test_an_older_rule_title_or_body_alone_can_still_be_overridden(tmp_path):
    """`<rule>.title.j2` / `<rule>.body.j2` in the override folder, the names the five older
    rules' templates had, replace that part of `<rule>.j2` alone."""
    (tmp_path / "watch.body.j2").write_text("only {{ ceiling }}\n", encoding="utf-8")
    texts = templating.alert_texts(tmp_path)
    title, body = texts.render("watch", {"row": {"gpu_model": "A100-80GB", "vendor": "V",
                                                 "sku": "s", "offer_kind": "spot",
                                                 "billing_period": "hour"},
                                         "price_cny": "1.00", "ceiling": "2", "region": "R",
                                         "watch": "w"})
    assert title.startswith("Watch: A100-80GB at 1.00 CNY/GPU-h (ceiling 2)")
    assert body == "only 2"
