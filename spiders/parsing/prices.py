"""Parse listed GPU rental prices ("¥1.98/时", "3.5万元/年", "$2.49/hr") into Decimal + ISO + period.

Own grammar, because price-parser alone gets the Chinese market wrong: it drops 万 (3.5万 -> 3.5,
a 10,000x error), does not know 元, and reads "0.125" as 125 (dot taken as a thousands separator).
price-parser is used only as a last resort to *name* an exotic currency symbol, so that it can be
rejected with a clear reason. Anything ambiguous raises PriceParseError instead of guessing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, localcontext

from price_parser import Price

from .currencies import KNOWN_CURRENCIES, CurrencyError, currency_tokens, iso_currency


class PriceParseError(ValueError):
    """The text is not one unambiguous price; the message says why."""


# A month is 730 h (8760 / 12), the convention cloud vendors use for monthly estimates.
HOURS_PER_PERIOD = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}


@dataclass(frozen=True)
class ParsedPrice:
    amount: Decimal                     # the price charged now, in `currency`, per `period`
    currency: str                       # ISO 4217
    period: str | None                  # key of HOURS_PER_PERIOD, or None if unknown
    list_amount: Decimal | None = None  # struck-through/original price (原价), if shown
    amount_max: Decimal | None = None   # upper end of a range ("20-30元/小时")
    is_starting_price: bool = False     # "起" / "from $2"
    per_card: bool = False              # "￥8000/卡/月", "$2.79 / GPU / hr", "¥8/卡时": one card's price


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
    "year": "年 年度 year years yr yrs yearly annually annum",
    "minute": "分钟 min mins minute minutes",   # billed by the minute/second: unsupported,
    "second": "秒 sec secs second seconds",     # raise rather than silently rescale
}
_PERIOD_OF = {w: p for p, ws in _PERIOD_WORDS.items() for w in ws.split()}
# Words that name a period without a "/" or "每" in front ("8000元包月", "$2 hourly").
_SELF_MARKED = {"包月": "month", "包年": "year", "包周": "week", "包天": "day", "包日": "day",
                "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month",
                "yearly": "year", "annually": "year"}
_PERIOD_OF.update(_SELF_MARKED)

_SEP = r"(?:/|每|一|按|per(?![a-z])|an?(?![a-z]))"
_UNIT = r"(?:卡|张|台|个|实例|gpus?(?![a-z])|cards?(?![a-z])|instances?(?![a-z]))"
_CARD_UNIT_RE = re.compile(r"卡|张|(?<![a-z])(?:gpus?|cards?)(?![a-z])")  # per card, not per machine
_PERIOD = _alt(set(_PERIOD_OF) - set(_SELF_MARKED))
_SELF = _alt(_SELF_MARKED)
_CUR = _alt(currency_tokens())
_NUM = r"(?:[0-9]+(?:[.,][0-9]+)*|\.[0-9]+)"
_ATOM_RE = re.compile(rf"(?P<num>{_NUM})\s*(?P<mult>万|千|k(?![a-z]))?\s*(?P<cur>{_CUR})?")
# "/ 1 hour" (Google's pricing pages) reads as "/hour": a count of one before the unit.
_TAIL_RE = re.compile(
    rf"\s*起?\s*(?:{_SEP}\s*(?:{_UNIT}\s*{_SEP}?\s*)?(?:1\s*)?(?P<p>{_PERIOD})"
    rf"|(?:{_SEP}\s*{_UNIT}\s*)?(?P<s>{_SELF}))")
_UNKNOWN_PER_RE = re.compile(rf"\s*起?\s*(?:/|每|per(?![a-z]))\s*(?!{_UNIT}\s*(?:$|[\s,;)]))(\S+)")
_PERIOD_ONLY_RE = re.compile(
    rf"\s*(?:{_SEP}\s*)?(?:{_UNIT}\s*{_SEP}?\s*)?(?:(?P<p>{_PERIOD})|(?P<s>{_SELF}))"
    r"\s*(?:付|租|价|计费|起)?\s*")
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
_DOLLARS = {"USD", "HKD", "SGD", "AUD", "CAD", "NZD"}


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
    word = next(w for w in (m.group(g) for g in m.re.groupindex) if w)
    period = _PERIOD_OF[word.strip()]
    if period not in HOURS_PER_PERIOD:
        raise PriceParseError(f"unsupported billing period: per {period} ({word!r})")
    return period


def parse_period(text: str) -> str:
    """Billing-period text ("/小时", "per hour", "包月", "/卡/月", "yr") -> a HOURS_PER_PERIOD key."""
    m = _PERIOD_ONLY_RE.fullmatch(_norm(text))
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


def _currency(text: str, original: str, default: str | None, implied: str | None) -> str:
    """One ISO currency for the whole text; '¥' and '$' alone defer to a compatible default;
    `implied` is used last (Chinese units such as 万 or /小时 with no currency at all -> CNY)."""
    tokens = {t for t in _CUR_RE.findall(text)}
    explicit = {iso_currency(t) for t in tokens - {"¥", "$"}}
    if len(explicit) > 1:
        raise PriceParseError(f"mixed currencies {sorted(explicit)} in {original!r}")
    if explicit:
        code = explicit.pop()
        if "¥" in tokens and code not in ("CNY", "JPY") or "$" in tokens and code not in _DOLLARS:
            raise PriceParseError(f"currency symbol conflicts with {code} in {original!r}")
        return code
    if tokens == {"¥", "$"}:
        raise PriceParseError(f"both ¥ and $ in {original!r}")
    if "¥" in tokens:   # the project's market reads a bare ¥ as CNY; JPY sources pass a default
        return default if default in ("CNY", "JPY") else "CNY"
    if "$" in tokens:   # a bare $ is USD unless the source says it prices in another dollar
        return default if default in _DOLLARS else "USD"
    symbol = Price.fromstring(original).currency   # exotic symbols: name them, accept or reject
    if symbol:
        try:
            return iso_currency(symbol)
        except CurrencyError:
            raise PriceParseError(f"unsupported currency {symbol!r} in {original!r}") from None
    if default is None and implied is None:
        raise PriceParseError(f"no currency in {original!r} and no default currency")
    return default or implied  # type: ignore[return-value]


def parse_price(text: str, default_currency: str | None = None,
                default_period: str | None = None) -> ParsedPrice:
    """Parse one listed price; raise PriceParseError with a reason unless it is exactly one."""
    if default_currency is not None and default_currency not in KNOWN_CURRENCIES:
        raise PriceParseError(f"unknown default currency: {default_currency!r}")
    if default_period is not None and default_period not in HOURS_PER_PERIOD:
        raise PriceParseError(f"unknown default period: {default_period!r}")
    s = _norm(text or "").strip()
    shown = (text or "").strip() or "<empty>"
    for pattern, reason in _NEVER_A_PRICE:
        if re.search(pattern, s):
            raise PriceParseError(f"not a price: {shown} ({reason})")
    atoms, pos = [], 0
    while m := _ATOM_RE.search(s, pos):
        tail = _TAIL_RE.match(s, m.end())
        if tail is None and (odd := _UNKNOWN_PER_RE.match(s, m.end())):
            # "/fortnight", "/時間": a period we cannot read must not fall back to the default
            raise PriceParseError(f"unrecognized billing period {odd.group(1)!r} in {text!r}")
        atoms.append((s[pos:m.start()], m, tail))   # (label before it, the number, its period)
        pos = tail.end() if tail else m.end()
    if not atoms:
        reason = next((r for p, r in _NO_NUMBER_REASONS if re.search(p, s)), "no amount in text")
        raise PriceParseError(f"not a price: {shown} ({reason})")
    if len(atoms) > 2:
        raise PriceParseError(f"{len(atoms)} numbers in {text!r}; refusing to guess the price")
    values = [_number(m["num"]) for _, m, _ in atoms]
    mults = [_MULT.get(m["mult"] or "", Decimal(1)) for _, m, _ in atoms]
    labels = [_CUR_RE.sub(" ", label) for label, _, _ in atoms]
    said = [t for _, _, t in atoms] + [_PREFIX_PERIOD_RE.search(lb.strip()) for lb in labels]
    periods = {_period_from(m) for m in said} - {None}
    if len(periods) > 1:
        raise PriceParseError(f"conflicting periods {sorted(periods)} in {text!r}")
    first_label = labels[0].rstrip()
    if first_label.endswith(("-", "−")):
        raise PriceParseError(f"negative amount in {text!r}")
    amount, amount_max, list_amount = values[0] * mults[0], None, None
    if len(atoms) == 2:
        if _RANGE_SEP_RE.fullmatch(labels[1]):
            # "2-3万" writes the multiplier once; "5000-3万" does not share it.
            shared = atoms[0][1]["mult"] is None and values[0] < values[1]
            amount, amount_max = values[0] * mults[1 if shared else 0], values[1] * mults[1]
            if amount_max <= amount:
                raise PriceParseError(f"range upper end not above lower end in {text!r}")
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
    if amount == 0:
        raise PriceParseError(f"zero amount in {text!r}: a zero price is not a price")
    # Chinese units (万, 千, 小时, 月...) with no currency at all: the Chinese market prices in CNY.
    chinese = any(m["mult"] in ("万", "千") for _, m, _ in atoms) or any(
        re.search(r"[\u4e00-\u9fff]", m.group()) for m in said if m)
    return ParsedPrice(
        amount=amount, currency=_currency(s, text, default_currency, "CNY" if chinese else None),
        period=periods.pop() if periods else default_period,
        list_amount=list_amount, amount_max=amount_max,
        is_starting_price=bool(_STARTING_RE.search(s)),
        per_card=any(_CARD_UNIT_RE.search(t.group()) for _, _, t in atoms if t))
