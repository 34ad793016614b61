"""Text as a browser shows it: a price or cell written with markup ("<b>$2.99</b>/hr",
"&yen;12.5") is read as the text a reader sees (the price grammar's input, prices.py)."""

from __future__ import annotations

import html
import re

from lxml import etree
from lxml import html as lxml_html

# Elements a browser sets apart (a space between their text and their neighbours') or never shows:
# lxml's HTML 4 block list (less del/ins, which render inline), <br> and HTML 5's sections.
_BLOCK_TAGS = (*sorted(lxml_html.defs.block_tags - {"del", "ins"}), "br", "article", "aside",
               "figure", "footer", "header", "main", "nav", "section")
_UNSHOWN = (etree.Comment, etree.ProcessingInstruction, "script", "style", "template", "noscript",
            "head", "title")
_TAG_RE = re.compile(r"<[a-zA-Z!/?]")
_UNSHOWABLE_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def displayed_text(text: str) -> str:
    """Text as a browser shows it: tags removed, so "<b>$2.99</b>/hr" joins to "$2.99/hr"; block
    elements and <br> as spaces; comments, scripts and control characters (lxml refuses them)
    dropped; entities ("&yen;") decoded."""
    if not _TAG_RE.search(text):
        return html.unescape(text)
    root = etree.fromstring(f"<div>{_UNSHOWABLE_RE.sub('', text)}</div>", lxml_html.html_parser)
    etree.strip_elements(root, *_UNSHOWN, with_tail=False)
    for el in root.iter(*_BLOCK_TAGS):
        el.text, el.tail = " " + (el.text or ""), " " + (el.tail or "")
    return etree.tostring(root, method="text", encoding=str)
