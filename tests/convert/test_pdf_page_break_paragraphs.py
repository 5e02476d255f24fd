"""When the last paragraph of a PDF page continues on the next one (docs/ingester.md, "PDF layout")."""

from __future__ import annotations

from haiku.core.convert.layout_blocks import Block
from haiku.core.convert.layout_continuation import continues
from haiku.core.convert.layout_lines import Line


def _paragraph(page: int, *lines: tuple[str, float], top: float = 700.0, left: float = 57.0, size: float = 10.0) -> Block:
    """A paragraph of ``lines`` (text, right edge), one under the other from ``top``."""
    return Block("text", [Line(page, text, left, top + 12 * i, right, top + 12 * i + size)
                          for i, (text, right) in enumerate(lines)])


ABOVE = _paragraph(1, ("Observers walk the transect in pairs and note every", 538.0), ("flock of waders within fifty metres, so", 537.0))


def test_a_paragraph_cut_mid_sentence_continues_on_the_next_page():
    assert continues(ABOVE, _paragraph(2, ("counts from different days compare.", 220.0), top=60.0))
    assert continues(ABOVE, _paragraph(2, ("50 metres from the sea wall.", 200.0), top=60.0))


def test_a_finished_sentence_or_a_capital_starts_a_new_paragraph():
    ended = _paragraph(1, ("Observers walk the transect in pairs and note it all.", 538.0))
    assert not continues(ended, _paragraph(2, ("counts from different days compare.", 220.0), top=60.0))
    assert not continues(ABOVE, _paragraph(2, ("Counts from different days compare.", 220.0), top=60.0))


def test_a_different_column_size_or_a_short_last_line_is_no_continuation():
    below = _paragraph(2, ("counts from different days compare.", 538.0), top=60.0)
    assert not continues(ABOVE, _paragraph(2, ("counts from different days compare.", 538.0), top=60.0, left=300.0))
    assert not continues(ABOVE, _paragraph(2, ("counts from different days compare.", 538.0), top=60.0, size=7.0))
    footnote = _paragraph(1, ("1 http://caml.inria.fr/ocaml/htmlman/index.html", 260.0), size=7.0)
    assert not continues(footnote, _paragraph(2, ("programs, either by dynamic linking", 538.0), top=60.0, size=7.0))
    assert continues(ABOVE, below)
