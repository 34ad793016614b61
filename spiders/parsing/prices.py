"""Parse listed GPU rental prices ("¥1.98/时", "3.5万元/年", "$2.49/hr"): Decimal, ISO, period.

The grammar, class by class: amounts with 万/千/k and units inside them (角/分/厘, cents, pence:
currencies.SUB_UNITS), which name their currency and win over a source's default; periods from the
hour to the year (a quarter is 2190 h); ranges ("20-30元/时") keep both ends and name a price only
when the source declares which end it lists; per-card markers in any position (元/卡/月, 每卡,
单卡, 卡·时, per GPU, /GPU/hr), a unit naming the card ("RMB/V100·HOUR": a V100 card-hour, kept as
unit_card) and per-machine units ("CNY/Machine/Day", "/台/月": price_units.py); original/current
price pairs (原价/现价, 折后); tax markers (含税/不含税,
"excl. VAT") and minimum terms ("3个月起", "min. 1 month") are kept as fields, never read as prices.
Markup around a price (`<b>$2.99</b>/hr`, `&yen;12.5`) is read as the text a browser shows.

Own grammar, because price-parser alone gets the Chinese market wrong: it drops 万 (3.5万 -> 3.5,
a 10,000x error), does not know 元, and reads "0.125" as 125 (dot taken as a thousands separator).
price-parser only names an exotic currency symbol (currencies.price_currency), to reject it with a
clear reason. Anything ambiguous raises PriceParseError instead of guessing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, localcontext

from .currencies import KNOWN_CURRENCIES, SUB_UNITS, CurrencyError, currency_tokens, price_currency
from .markup import displayed_text
from .price_units import (
    CARD_IN_UNIT,
    CARD_PERIOD_SEP,
    MACHINE_UNIT,
    PER_CARD_RE,
    PER_MACHINE_RE,
)
from .price_units import is_per_card as _is_per_card


class PriceParseError(ValueError):
    """The text is not one unambiguous price; the message says why."""


# A month is 730 h (8760 / 12), the convention cloud vendors use for monthly estimates; a quarter
# is three such months.
HOURS_PER_PERIOD = {"hour": 1, "day": 24, "week": 168, "month": 730, "quarter": 2190, "year": 8760}
# Which end of a range a source lists as its price (declared per source, never guessed).
RANGE_ENDS = ("low", "high")


@dataclass(frozen=True)
class ParsedPrice:
    # The price charged now, in `currency`, per `period`; None only for a range whose listed end
    # the caller did not declare (range_end): then price_low and price_high say what was written.
    amount: Decimal | None
    currency: str                       # ISO 4217
    period: str | None                  # key of HOURS_PER_PERIOD, or None if unknown
    list_amount: Decimal | None = None  # struck-through/original price (原价), if shown
    price_low: Decimal | None = None    # both ends of a range ("20-30元/小时"), else None
    price_high: Decimal | None = None
    is_starting_price: bool = False     # "起" / "from $2"
    per_card: bool = False              # "￥8000/卡/月", "元/月/卡", "单卡", "$2.79 / GPU / hr"
    tax_included: bool | None = None    # 含税 -> True, 不含税 / "excl. VAT" -> False, else None
    min_term_hours: int | None = None   # minimum rental term ("3个月起" -> 2190), if stated
    per_machine: bool = False           # "CNY/Machine/Day", "/台/月", "整机": the whole machine's
    unit_card: str | None = None        # the card the unit names ("RMB/V100·HOUR" -> "v100")

    @property
    def is_range(self) -> bool:
        return self.price_low is not None


def _alt(words) -> str:
    """Regex alternation, longest first; Latin words get letter boundaries."""
    parts = []
    for w in sorted(words, key=len, reverse=True):
        pat = re.escape(w)
        if w[0].isascii() and w[0].isalpha():
            pat = r"(?<![a-z])" + pat
        if w[-1].isascii() and w[-1].isalpha():
            pat += r"(?![a-z])"
        parts.append(pat)
    return "(?:" + "|".join(parts) + ")"


_PERIOD_WORDS = {
    "hour": "小时 个小时 钟头 卡时 时 h hr hrs hour hours hourly",
    "day": "天 日 卡天 day days daily",
    "week": "周 星期 week weeks wk wks weekly",
    "month": "月 个月 卡月 month months mo mos mth mths monthly",
    "quarter": "季 季度 3个月 三个月 quarter quarters qtr quarterly",
    "year": "年 年度 year years yr yrs yearly annually annum",
    "minute": "分钟 min mins minute minutes",   # billed by the minute/second: unsupported,
    "second": "秒 sec secs second seconds",     # raise rather than silently rescale
}
_PERIOD_OF = {w: p for p, ws in _PERIOD_WORDS.items() for w in ws.split()}
# Words that name a period without a "/" or "每" in front ("8000元包月", "$2 hourly").
_SELF_MARKED = {"包月": "month", "包年": "year", "包周": "week", "包天": "day", "包日": "day",
                "包季": "quarter", "hourly": "hour", "daily": "day", "weekly": "week",
                "monthly": "month", "quarterly": "quarter", "yearly": "year", "annually": "year"}
_PERIOD_OF.update(_SELF_MARKED)

_SEP = r"(?:/|每|一|按|per(?![a-z])|an?(?![a-z]))"
_UNIT = (r"(?:卡|张|台|个|实例|gpus?(?![a-z])|cards?(?![a-z])|instances?(?![a-z])|"
         rf"{MACHINE_UNIT})")
# "gpu-hr", "卡·时": a unit joined to the period by a hyphen or a dot.
_UNIT_SEP = rf"(?:{_SEP}|-|·)"
_PERIOD = _alt(set(_PERIOD_OF) - set(_SELF_MARKED))
_SELF = _alt(_SELF_MARKED)
_CUR = _alt(currency_tokens())
_NUM = r"(?:[0-9]+(?:[.,][0-9]+)*|\.[0-9]+)"
# A sub-unit after the amount ("2720厘/时", "429 cents usd/hr"), or a symbol one before it
# ("¢99/hr"); not 分钟 (minutes), "c$" (CAD) or "4c8g".
_SUB = _alt(SUB_UNITS) + r"(?![0-9$钟])"
_SUB_BEFORE = _alt(t for t in SUB_UNITS if not t.isalnum())
_ATOM_RE = re.compile(rf"(?:(?P<pre>{_SUB_BEFORE})\s*)?(?P<num>{_NUM})"
                      rf"\s*(?P<mult>万|千|k(?![a-z]))?\s*(?:(?P<sub>{_SUB})\s*)?(?P<cur>{_CUR})?")
# A sub-unit word no amount carries would leave the amount read in major units.
_STRAY_SUB_RE = re.compile(_alt(t for t in SUB_UNITS if (len(t) > 1 and t.isascii()) or t == "¢"))
# "/ 1 hour" (Google's pricing pages) reads as "/hour": a count of one before the unit.
_TAIL_RE = re.compile(
    rf"\s*起?\s*(?:{_SEP}\s*(?:{_UNIT}\s*{_UNIT_SEP}?\s*)?(?:1\s*)?(?P<p>{_PERIOD})"
    rf"(?:\s*{_SEP}\s*{_UNIT})?|(?:{_SEP}\s*{_UNIT}\s*)?(?P<s>{_SELF}))")
# A unit naming the card ("RMB/V100·HOUR"): one card-hour of that card, which must be the row's.
_CARD_TAIL_RE = re.compile(rf"\s*起?\s*(?:/|每|per(?![a-z]))\s*(?P<card>{CARD_IN_UNIT})\s*"
                           rf"{CARD_PERIOD_SEP}\s*(?P<p>{_PERIOD})")
_UNKNOWN_PER_RE = re.compile(rf"\s*起?\s*(?:/|每|per(?![a-z]))\s*(?!{_UNIT}\s*(?:$|[\s,;)]))(\S+)")
_PERIOD_ONLY_RE = re.compile(
    rf"\s*(?:{_SEP}\s*)?(?:{_UNIT}\s*{_UNIT_SEP}?\s*)?(?:(?P<p>{_PERIOD})|(?P<s>{_SELF}))"
    rf"(?:\s*{_SEP}\s*{_UNIT})?\s*(?:付|租|价|计费|起)?\s*")
# A period written before the amount: "每小时 ¥2", "按月计费：1299元", "月付 ¥99", "hourly: $2".
_PREFIX_PERIOD_RE = re.compile(
    rf"(?:(?:每|按|包|per\s)\s*(?P<a>{_PERIOD})\s*(?:付|租|价|计费|价格|费用|rate|price)?"
    rf"|(?P<b>{_PERIOD})\s*(?:付|租|价|计费|价格|费用|rate|price)|(?P<s>{_SELF}))[\s:]*$")
_CUR_RE = re.compile(_CUR)
_MULT = {"万": Decimal(10000), "千": Decimal(1000), "k": Decimal(1000)}
_RANGE_SEP_RE = re.compile(r"\s*(?:-|~|〜|–|—|至|到|to)\s*")
_LIST_RE = re.compile(r"原价|划线价|市场价|官方价|官网价|刊例价|标准价|目录价|"
                      r"(?<![a-z])(?:was|list|regular|original|msrp)(?![a-z])")
_NOW_RE = re.compile(r"现价|折后|折扣价|优惠价|活动价|促销价|特价|秒杀价|到手价|实付|"
                     r"(?<![a-z])(?:now|sale|promo|discounted)(?![a-z])")
_STARTING_RE = re.compile(r"起|低至|最低|as low as|(?<![a-z])(?:from|starting|starts)(?![a-z])")
# Markers that make any digits in the text something other than a price (phone numbers...).
_NEVER_A_PRICE = [(r"面议|议价", "negotiable"),
                  (r"联系|咨询|询价|(?<![a-z])(?:contact|enquire|inquire)(?![a-z])",
                   "contact sales / price on request")]
# Markers that explain why a text without any digits is not a price.
_NO_NUMBER_REASONS = [
    (r"售罄|售完|已售|缺货|无货|sold\s*out|out of stock|unavailable", "sold out"),
    (r"免费|(?<![a-z])free(?![a-z])", "free, not a rental price"),
    (r"[零一二三四五六七八九十百千万两]", "Chinese numerals are not supported"),
    (r"暂无|暂未|待定|(?<![a-z])(?:n/?a|none|null|tbd)(?![a-z])|^[-—–\s/]*$", "no price given"),
]
# Tax markers are a flag, and their numbers ("含6%增值税") are no price. "Not included" first.
_PCT = r"(?:(?<![0-9.])[0-9.]+\s*%\s*)?"
_TAX_WORD = r"(?:vat|tax(?:es)?|gst)(?![a-z])"
_TAX_EXCLUDED_RE = re.compile(
    rf"(?:不|未)含{_PCT}(?:增值)?税|税前|税费另计|"
    rf"(?<![a-z])(?:ex(?:cl(?:uding|usive)?)?\.?|plus|before|pre-?|without|\+)\s*{_PCT}{_TAX_WORD}"
    rf"|(?<![a-z]){_TAX_WORD}\s*(?:not included|excluded|extra)")
_TAX_INCLUDED_RE = re.compile(
    rf"含{_PCT}(?:增值)?税|价税合计|"
    rf"(?<![a-z])(?:incl?(?:uding|usive)?\.?|with|after)\s*{_PCT}{_TAX_WORD}"
    rf"|(?<![a-z]){_TAX_WORD}\s*(?:included|incl\.?)(?![a-z])")
# Discount rates ("8折", "-20%", "20% off") qualify a price pair; they are never a price.
# The look-behind keeps a match from starting inside a run of digits: without it a long number
# (a hostile 1 MB "price") costs quadratic time, one failed attempt per digit.
_DISCOUNT_RATE_RE = re.compile(
    r"[-−]?\s*(?<![0-9.])[0-9]+(?:\.[0-9]+)?\s*(?:%(?:\s*off(?![a-z]))?|折(?!后))")
# Minimum terms: "3个月起", "1月起租", "起租期：7天", "最短租期 1 个月", "min. 1 month".
_TERM = _alt(w for w, p in _PERIOD_OF.items() if p in HOURS_PER_PERIOD and not re.search(
    r"[0-9三卡包]|ly$", w))
_TERM_N = r"(?P<n>[0-9]+(?:\.[0-9]+)?)"
_MIN_TERM_RES = [re.compile(p) for p in (
    rf"(?<![/0-9.]){_TERM_N}\s*(?P<u>{_TERM})\s*起租?",
    rf"(?:起租(?:期|时长)?|最短(?:租期|租用时长|租用|时长)?|至少|最少)\s*[:：]?\s*{_TERM_N}\s*(?P<u>{_TERM})",
    rf"(?<![a-z])min(?:imum|\.)?\s*(?:term|rental|commitment|period)?\s*(?:of\s*)?[:：]?\s*"
    rf"{_TERM_N}\s*-?\s*(?P<u>{_TERM})",
    rf"(?<![/0-9.]){_TERM_N}\s*-?\s*(?P<u>{_TERM})\s*(?:minimum|min(?![a-z]))")]


def _norm(text: str) -> str:
    # NFKC folds full-width forms (￥, ：, ～, digits) into their ASCII twins.
    return unicodedata.normalize("NFKC", text).lower()


def _number(raw: str) -> Decimal:
    """Digits with ',' / '.' separators -> Decimal. One '.' is always decimal (0.125 stays 0.125);
    one ',' is a thousands separator only before exactly 3 digits (1,299) else decimal (0,35)."""
    dots, commas, frac = raw.count("."), raw.count(","), ""
    if dots and commas:                          # "1,234.5" / "1.234,50": the last one is decimal
        dec = "." if raw.rfind(".") > raw.rfind(",") else ","
        whole, frac = raw.rsplit(dec, 1)
        groups = whole.split("," if dec == "." else ".")
    elif dots == 1 or (commas == 1 and len(raw) - raw.index(",") != 4):
        whole, frac = re.split("[.,]", raw)
        groups = [whole or "0"]
    else:                                        # "1,299" / "1,234,567" / "1.234.567"
        groups = re.split("[.,]", raw)
    if not all(g.isdigit() for g in groups) or (len(groups) > 1 and (
            len(groups[0]) > 3 or any(len(g) != 3 for g in groups[1:]))):
        raise PriceParseError(f"malformed number: {raw!r}")
    return Decimal("".join(groups) + ("." + frac if frac else ""))


def _period_from(m: re.Match | None) -> str | None:
    if m is None:
        return None
    word = next(w for w in (m.group(g) for g in m.re.groupindex if g != "card") if w)
    period = _PERIOD_OF[word.strip()]
    if period not in HOURS_PER_PERIOD:
        raise PriceParseError(f"unsupported billing period: per {period} ({word!r})")
    return period


def parse_period(text: str) -> str:
    """Billing-period text ("/小时", "per hour", "包月", "/卡/月") -> a HOURS_PER_PERIOD key."""
    m = _PERIOD_ONLY_RE.fullmatch(_norm(displayed_text(text)))
    if m is None:
        raise PriceParseError(f"not a billing period: {text!r}")
    return _period_from(m)  # type: ignore[return-value]  # a full match always names a period


def per_hour(amount: Decimal, period: str) -> Decimal:
    """Hourly equivalent of `amount` per `period` (month = 730 h). Computed with 40 significant
    digits so that multiplying back by the period's hours gives `amount`; round when storing."""
    if period not in HOURS_PER_PERIOD:
        raise PriceParseError(f"unknown billing period: {period!r}")
    with localcontext() as ctx:
        ctx.prec = 40
        return Decimal(amount) / HOURS_PER_PERIOD[period]


def is_per_card(text: str | None) -> bool:
    """Whether a price, its column header or a unit cell says the price is one card's
    ("单卡价格", "元/卡/时", "per GPU"); a text that names both a card and a machine is not."""
    return _is_per_card(_norm(displayed_text(text or "")))


def _cut(pattern: re.Pattern, s: str) -> tuple[str, list[re.Match]]:
    """`s` with every match of `pattern` blanked out (its digits are no price), and the matches."""
    found = list(pattern.finditer(s))
    return pattern.sub(" ", s), found


def _tax_flag(s: str, text: str) -> tuple[str, bool | None]:
    s, excluded = _cut(_TAX_EXCLUDED_RE, s)
    s, included = _cut(_TAX_INCLUDED_RE, s)
    if excluded and included:
        raise PriceParseError(f"both tax-included and tax-excluded markers in {text!r}")
    return s, (False if excluded else True if included else None)


def _min_term_hours(s: str, text: str) -> tuple[str, int | None]:
    terms = set()
    for pattern in _MIN_TERM_RES:
        s, found = _cut(pattern, s)
        terms |= {int(Decimal(m["n"]) * HOURS_PER_PERIOD[_PERIOD_OF[m["u"]]]) for m in found}
    if len(terms) > 1:
        raise PriceParseError(f"several minimum terms in {text!r}")
    if terms == {0}:
        raise PriceParseError(f"zero minimum term in {text!r}")
    return s, (terms.pop() if terms else None)


def parse_price(text: str, default_currency: str | None = None,
                default_period: str | None = None, range_end: str | None = None) -> ParsedPrice:
    """Parse one listed price; raise PriceParseError with a reason unless it is exactly one.

    A range ("20-30元/时") keeps both ends; its `amount` is the end named by `range_end` ("low" or
    "high", the source's declaration), else None: the caller must not pick one silently."""
    try:
        return _parse_price(text, default_currency, default_period, range_end)
    except ArithmeticError as exc:   # decimal Overflow/InvalidOperation: a hostile 1 MB number
        raise PriceParseError(f"amount out of range in {_shown(text)}: "
                              f"{type(exc).__name__}") from exc
    except CurrencyError as exc:     # currency tokens or sub-units that contradict each other
        raise PriceParseError(str(exc)) from None


def _shown(text: str | None, limit: int = 80) -> str:
    shown = (text or "").strip() or "<empty>"
    return repr(shown if len(shown) <= limit else shown[:limit] + "...")


def _parse_price(text: str, default_currency: str | None, default_period: str | None,
                 range_end: str | None) -> ParsedPrice:
    if default_currency is not None and default_currency not in KNOWN_CURRENCIES:
        raise PriceParseError(f"unknown default currency: {default_currency!r}")
    if default_period is not None and default_period not in HOURS_PER_PERIOD:
        raise PriceParseError(f"unknown default period: {default_period!r}")
    if range_end not in (None, *RANGE_ENDS):
        raise PriceParseError(f"unknown range end: {range_end!r} (expected low or high)")
    s = _norm(displayed_text(text or "")).strip()
    shown = (text or "").strip() or "<empty>"
    for pattern, reason in _NEVER_A_PRICE:
        if re.search(pattern, s):
            raise PriceParseError(f"not a price: {shown} ({reason})")
    s, tax_included = _tax_flag(s, text)
    s, min_term_hours = _min_term_hours(s, text)
    s = _DISCOUNT_RATE_RE.sub(" ", s)
    per_card, per_machine = bool(PER_CARD_RE.search(s)), bool(PER_MACHINE_RE.search(s))
    atoms, pos, unit_cards = [], 0, set()
    while m := _ATOM_RE.search(s, pos):
        # a card-named unit first: "per h100 hour" is not "per h" (an hour) and a number 100
        if tail := _CARD_TAIL_RE.match(s, m.end()):
            unit_cards.add(re.sub(r"\s", "", tail["card"]))
        else:
            tail = _TAIL_RE.match(s, m.end())
        if tail is None and (odd := _UNKNOWN_PER_RE.match(s, m.end())):
            # "/fortnight", "/時間": a period we cannot read must not fall back to the default
            raise PriceParseError(f"unrecognized billing period {odd.group(1)!r} in {text!r}")
        atoms.append((s[pos:m.start()], m, tail))   # (label before it, the number, its period)
        pos = tail.end() if tail else m.end()
    if (per_card or unit_cards) and per_machine:
        raise PriceParseError(f"both a per-card and a per-machine price in {text!r}")
    if len(unit_cards) > 1:
        raise PriceParseError(f"units naming several cards {sorted(unit_cards)} in {text!r}")
    if not atoms:
        reason = next((r for p, r in _NO_NUMBER_REASONS if re.search(p, s)), "no amount in text")
        raise PriceParseError(f"not a price: {shown} ({reason})")
    if len(atoms) > 2:
        raise PriceParseError(f"{len(atoms)} numbers in {text!r}; refusing to guess the price")
    values = [_number(m["num"]) for _, m, _ in atoms]
    subs = [m["pre"] or m["sub"] for _, m, _ in atoms]
    if len(atoms) == 2 and atoms[0][1]["pre"] and not subs[1]:
        subs[1] = subs[0]                                     # "¢3-5/hr" writes the ¢ once
    mults = [_MULT.get(m["mult"] or "", Decimal(1)) * (SUB_UNITS[sub].factor if sub else 1)
             for (_, m, _), sub in zip(atoms, subs, strict=True)]
    labels = [_CUR_RE.sub(" ", label) for label, _, _ in atoms]
    if stray := _STRAY_SUB_RE.search(" ".join([*labels, s[pos:]])):  # "in cents: 429/hr"
        raise PriceParseError(f"{stray.group()!r} stands apart from the amount in {text!r}")
    said = [t for _, _, t in atoms] + [_PREFIX_PERIOD_RE.search(lb.strip()) for lb in labels]
    periods = {_period_from(m) for m in said} - {None}
    if len(periods) > 1:
        raise PriceParseError(f"conflicting periods {sorted(periods)} in {text!r}")
    first_label = labels[0].rstrip()
    if first_label.endswith(("-", "−")):
        raise PriceParseError(f"negative amount in {text!r}")
    amount, low, high, list_amount = values[0] * mults[0], None, None, None
    if len(atoms) == 2:
        if _RANGE_SEP_RE.fullmatch(labels[1]):
            # "2-3万" writes the multiplier once; "5000-3万" does not share it.
            first = atoms[0][1]
            shared = first["mult"] is None and not subs[0] and values[0] < values[1]
            low, high = values[0] * mults[1 if shared else 0], values[1] * mults[1]
            if high <= low:
                raise PriceParseError(f"range upper end not above lower end in {text!r}")
            amount = {"low": low, "high": high, None: None}[range_end]
        else:
            kinds = ["list" if _LIST_RE.search(lb) else "now" if _NOW_RE.search(lb) else ""
                     for lb in labels]
            if sorted(kinds) not in (["list", "now"], ["", "list"]):
                raise PriceParseError(f"two prices in {text!r}; refusing to guess which applies")
            i, j = kinds.index("list"), 1 - kinds.index("list")
            list_amount, amount = values[i] * mults[i], values[j] * mults[j]
            if list_amount < amount:
                raise PriceParseError(f"original price below current price in {text!r}")
    elif _LIST_RE.search(labels[0]):
        raise PriceParseError(f"only an original (list) price, no current price, in {text!r}")
    if amount == 0 or low == 0:
        raise PriceParseError(f"zero amount in {text!r}: a zero price is not a price")
    # Chinese units (万, 千, 小时, 月...) with no currency at all: the Chinese market prices in CNY.
    chinese = any(m["mult"] in ("万", "千") for _, m, _ in atoms) or any(
        re.search(r"[\u4e00-\u9fff]", m.group()) for m in said if m)
    return ParsedPrice(
        amount=amount,
        currency=price_currency(set(_CUR_RE.findall(s)), {u for u in subs if u}, text,
                                default_currency, "CNY" if chinese else None),
        period=periods.pop() if periods else default_period,
        list_amount=list_amount, price_low=low, price_high=high,
        is_starting_price=bool(_STARTING_RE.search(s)), per_card=per_card or bool(unit_cards),
        tax_included=tax_included, min_term_hours=min_term_hours, per_machine=per_machine,
        unit_card=unit_cards.pop() if unit_cards else None)


def raw_price_fields(text: str | None, default_currency: str | None = None,
                     default_period: str | None = None) -> dict[str, object]:
    """What a price text says besides its price, as RawOffer fields (decimal strings, flags):
    price_low/price_high, list_price_amount, price_per_card, tax_included, min_term_hours.
    Empty when the text is no readable price: normalization quarantines it with the reason."""
    try:
        got = parse_price(text or "", default_currency, default_period)
    except PriceParseError:
        return {}
    fields = {"price_low": got.price_low, "price_high": got.price_high,
              "list_price_amount": got.list_amount, "tax_included": got.tax_included,
              "min_term_hours": got.min_term_hours, "price_per_card": got.per_card or None}
    return {k: str(v) if isinstance(v, Decimal) else v for k, v in fields.items() if v is not None}
