"""Cells that write the GPU count apart from the card text, read once into the card text and the
typed count and slice the later stages check (offer.py): a count cell of its own ("8颗", "1/4颗":
the card named by a header) and a calculator's accelerator text ("2 * NVIDIA T4 / 2 * 16G");
spiders/parsing/counts.py reads both."""

from __future__ import annotations

from spiders.parsing.counts import accelerator, count_cell


def with_count_cell(item: dict) -> dict:
    """`item` with the card and count its `accelerator_text` writes ("2 * NVIDIA T4 / 2 * 16G"
    -> "NVIDIA T4 16G", 2; another form: the count UNREAD_COUNT, quarantined), or the count and
    slice its `gpu_count_text` writes ("8颗" -> gpu_count 8,
    "1/4颗" -> one card, a quarter of it); a cell of another form goes on as gpu_count, for the
    count stage to quarantine with its text."""
    if item.get("accelerator_text") not in (None, ""):
        card, count = accelerator(item["accelerator_text"])
        return {**item, "gpu_text": card, "gpu_count": count}
    text = item.get("gpu_count_text")
    if text in (None, ""):
        return item
    read = count_cell(text)
    if read is None:
        return {**item, "gpu_count": text}
    count, share = read
    fraction = {"gpu_fraction": share[0] / share[1]} if share else {}
    return {**item, "gpu_count": count, **fraction}
