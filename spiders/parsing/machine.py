"""What else an offer's machine comes with, as vendors write it: vCPUs ("30", "16 vCPU", "16核",
"2×Xeon 8358 (64 cores)"), memory ("200 GiB", "64GB", "1TB内存", "65536 MB") and local disk
("512 GiB SSD", "2 x 3.84 TB NVMe", "系统盘50G + 数据盘100G").

Spiders keep the vendor's words (`vcpus_text`, `memory_text`, `disk_text`, or a `config_text`
that lists them), or an API's numbers as served with their unit (`vcpus`; `memory` and
`memory_unit`; `disk` and `disk_unit`); normalization reads them here into `vcpus`, `memory_gib`
and `disk_gb`, the one place their units are converted. What
cannot be read is None: a machine spec never costs an offer its price.

Units. Memory is in GiB: vendors' "GB" of RAM is binary (a "64GB" instance has 64 GiB), so GB and
GiB both read as GiB, MB/MiB as 1/1024 and TB/TiB as 1024. Disk is in decimal GB, as drives are
sold: TB is 1000 GB, GiB 1.073741824 GB, TiB 1099.511627776 GB. A bare number is read in the unit
the caller names (a vendor's API field documents it), never guessed.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
# "2 x 3.84 TB", "2×1.92T", "4*960G": a count of drives times a size
_TIMES_SIZE_RE = re.compile(_NUMBER + r"\s*[x×*]\s*" + _NUMBER + r"\s*([kmgt]i?b?|[kmgt])(?![a-z])")
_SIZE_RE = re.compile(_NUMBER + r"\s*([kmgt]i?b?|[kmgt])(?![a-z])")
# a size written as a factor of one module: "64G×16" is 16 modules of 64 GB
_SIZE_TIMES_RE = re.compile(_NUMBER + r"\s*([kmgt]i?b?|[kmgt])\s*[x×*]\s*([0-9]{1,3})(?![0-9.])")
_BARE_RE = re.compile(r"^\s*" + _NUMBER + r"\s*$")
_CPU_RES = (
    re.compile(_NUMBER
               + r"\s*(?:v\s*-?\s*cpus?|vcores?|cores?|cpus?|threads?|核心?|线程|c)(?![a-z])"),
    re.compile(r"(?:v\s*-?\s*cpus?|vcores?|cpu\s*cores?|cpu|核心数|核数)\s*[:：]?\s*" + _NUMBER
               + r"(?![0-9.])(?!\s*(?:[x×*]|(?:[kmgt]i?b?|ghz|mhz)(?![a-z])))"),
)
# Words that mark the part of a configuration text about memory, and about disks.
_MEMORY_WORDS = re.compile(r"内存|ram|memory|mem(?![a-z])|ddr[0-9]?")
_DISK_WORDS = re.compile(r"硬盘|磁盘|系统盘|数据盘|存储|ssd|nvme|hdd|disk|storage|本地盘")
_PARTS_RE = re.compile(r"[,，;；|、\n/]|\s{2,}")
_SUM_RE = re.compile(r"\+")   # after NFKC, so a full-width plus too

_MEMORY_GIB = {"k": Decimal(1) / 1024 / 1024, "m": Decimal(1) / 1024, "g": Decimal(1),
               "t": Decimal(1024)}
_DISK_GB_DECIMAL = {"k": Decimal("0.000001"), "m": Decimal("0.001"), "g": Decimal(1),
                    "t": Decimal(1000)}
_DISK_GB_BINARY = {"k": Decimal(1024) / 10**9, "m": Decimal(1024**2) / 10**9,
                   "g": Decimal("1.073741824"), "t": Decimal("1099.511627776")}
# Larger than any one machine a GPU vendor rents: a value past it is a misread, not a machine.
MAX_VCPUS = Decimal(4096)
MAX_MEMORY_GIB = Decimal(65536)
MAX_DISK_GB = Decimal(10**6)


_THOUSANDS_RE = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")


def _folded(text: object) -> str:
    """NFKC (full-width digits), lower case, thousands separators dropped ("1,800 GiB")."""
    return _THOUSANDS_RE.sub("", unicodedata.normalize("NFKC", str(text)).lower())


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _bounded(value: Decimal | None, ceiling: Decimal, places: str = "0.01") -> Decimal | None:
    if value is None or not 0 < value <= ceiling:
        return None
    # trailing zeros dropped, never an exponent: 100, not 1E+2
    return Decimal(format(value.quantize(Decimal(places)).normalize(), "f"))


def vcpus_in(text: object, *, bare: bool = True) -> Decimal | None:
    """The vCPU count a text states ("30", "16 vCPU", "16核", "CPU: 32"), or None. A bare number
    counts when `bare` (the text is a vCPU field); in a configuration text it needs its word."""
    if text is None or text == "":
        return None
    s = _folded(text)
    if bare and (m := _BARE_RE.match(s)):
        return _bounded(_number(m[1]), MAX_VCPUS)
    counts = {_number(m[1]) for pattern in _CPU_RES for m in pattern.finditer(s)}
    counts.discard(None)
    # "2×Xeon 8358 (64 cores)": the cores are the machine's; two different counts say nothing
    return _bounded(counts.pop(), MAX_VCPUS) if len(counts) == 1 else None


def _sizes(s: str, units: dict[str, Decimal]) -> Decimal | None:
    """The total size in a text: sizes joined by '+' add up; 'N x SIZE' and 'SIZE x N' multiply."""
    total = Decimal(0)
    for part in _SUM_RE.split(s):
        if m := _TIMES_SIZE_RE.search(part):
            count, amount, unit = _number(m[1]), _number(m[2]), m[3]
        elif m := _SIZE_TIMES_RE.search(part):
            amount, unit, count = _number(m[1]), m[2], _number(m[3])
        elif m := _SIZE_RE.search(part):
            count, amount, unit = Decimal(1), _number(m[1]), m[2]
        else:
            continue
        scale = (_DISK_GB_BINARY if "i" in unit and units is _DISK_GB_DECIMAL else units)[unit[0]]
        total += count * amount * scale
    return total or None


def memory_gib_in(text: object, bare_unit: str | None = None) -> Decimal | None:
    """Memory in GiB from "200 GiB", "64GB", "1TB内存", "64G×16"; a bare number ("64") only in
    `bare_unit` ("GB", "MB"), the unit the vendor's field is documented in."""
    return _amount_in(text, bare_unit, _MEMORY_GIB, MAX_MEMORY_GIB)


def disk_gb_in(text: object, bare_unit: str | None = None) -> Decimal | None:
    """Local disk in decimal GB from "512 GiB SSD", "2 x 3.84 TB NVMe", "系统盘50G + 数据盘100G";
    a bare number only in `bare_unit`."""
    return _amount_in(text, bare_unit, _DISK_GB_DECIMAL, MAX_DISK_GB)


def _amount_in(text: object, bare_unit: str | None, units: dict[str, Decimal],
               ceiling: Decimal) -> Decimal | None:
    if text is None or text == "":
        return None
    s = _folded(text)
    if m := _BARE_RE.match(s):
        if bare_unit is None:
            return None
        s = f"{m[1]} {bare_unit.lower()}"
    return _bounded(_sizes(s, units), ceiling)


def _served(value: object) -> str | None:
    """A typed field's number as served (a JSON number or a decimal string), written plainly."""
    if value in (None, "") or isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    number = _number(str(value).strip())
    return None if number is None or not number.is_finite() else format(number, "f")


def vcpus_of(value: object) -> Decimal | None:
    """A typed vCPU count as served (30, 12.0, "16"), or None."""
    return vcpus_in(_served(value))


def memory_gib_of(value: object, unit: str | None) -> Decimal | None:
    """A typed memory size as served, in its unit ("B", "MB", "MiB", "GB", "GiB", "TB"), in GiB;
    None when either is missing or unreadable. Read by the same table as a text's units."""
    return _size_of(value, unit, _MEMORY_GIB, MAX_MEMORY_GIB, Decimal(2**30))


def disk_gb_of(value: object, unit: str | None) -> Decimal | None:
    """A typed disk size as served, in its unit, in decimal GB; None when unreadable."""
    return _size_of(value, unit, _DISK_GB_DECIMAL, MAX_DISK_GB, Decimal(10**9))


def _size_of(value: object, unit: str | None, units: dict[str, Decimal], ceiling: Decimal,
             bytes_per_unit: Decimal) -> Decimal | None:
    served = _served(value)
    if served is None or not unit:
        return None
    if unit == "B":     # bytes: no letter of the text tables names them
        return _bounded(Decimal(served) / bytes_per_unit, ceiling)
    return _amount_in(served, unit, units, ceiling)


def specs_in_config(config_text: object) -> dict[str, Decimal | None]:
    """vcpus, memory_gib and disk_gb from a configuration text that lists the machine
    ("2×Xeon 8358 64核 / 内存 512GB / 系统盘 480G + 数据盘 2×3.84T NVMe / 8×A100"): each from the
    part that names it, so a GPU's memory ("A100 80GB") is never read as the machine's."""
    found: dict[str, Decimal | None] = {"vcpus": None, "memory_gib": None, "disk_gb": None}
    if not config_text:
        return found
    for part in _PARTS_RE.split(_folded(config_text)):
        if found["memory_gib"] is None and _MEMORY_WORDS.search(part):
            found["memory_gib"] = memory_gib_in(part)
        elif found["disk_gb"] is None and _DISK_WORDS.search(part):
            found["disk_gb"] = disk_gb_in(part)
        if found["vcpus"] is None and not _MEMORY_WORDS.search(part):
            found["vcpus"] = vcpus_in(part, bare=False)
    return found


def machine_specs(item: dict) -> dict[str, Decimal | None]:
    """An offer's vcpus, memory_gib and disk_gb: the typed fields (a number as served with its
    unit) first, then the spider's texts, then what its configuration text lists."""
    from_config = specs_in_config(item.get("config_text"))
    return {
        "vcpus": vcpus_of(item.get("vcpus")) or vcpus_in(item.get("vcpus_text"))
        or from_config["vcpus"],
        "memory_gib": memory_gib_of(item.get("memory"), item.get("memory_unit"))
        or memory_gib_in(item.get("memory_text")) or from_config["memory_gib"],
        "disk_gb": disk_gb_of(item.get("disk"), item.get("disk_unit"))
        or disk_gb_in(item.get("disk_text")) or from_config["disk_gb"],
    }
