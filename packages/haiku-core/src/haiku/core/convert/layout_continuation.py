"""A paragraph that a page break cuts in two, made one item again (docs/ingester.md, "PDF layout").

The last paragraph of a page continues on the next page when the first body
block there (page headers and footers aside) is a paragraph too and:

- the paragraph above does not end a sentence (no ``.``, ``!``, ``?`` or ``:``
  at its end) and the one below starts in lower case or with a digit;
- the two stand in one column: their left edges within a line's height of each
  other, the type the same size, and the last line above running to the
  column's right edge (a paragraph that ends short of it ended there; a
  footnote is narrower than the column).

The item keeps one provenance box per page, so a chunk cut from it spans the
break and is drawn on both pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haiku.core.convert.layout_blocks import Block, join_lines

_ENDS_SENTENCE = (".", "!", "?", ":", "\u3002")
FULL_LINE = 0.9  # the share of the column's width a line reaching its right edge spans


@dataclass
class OpenParagraph:
    """The last paragraph of the page before, and the item it became."""

    block: Block
    item: Any
    text: str  # the item's text, joined over the pages so far


def continues(above: Block, below: Block) -> bool:
    """Whether ``below``, the first body block of a page, continues ``above``, the last of the page before."""
    if above.kind != "text" or below.kind != "text" or not above.lines or not below.lines:
        return False
    last, first = above.lines[-1], below.lines[0]
    if last.text.rstrip().endswith(_ENDS_SENTENCE) or not (first.text[:1].islower() or first.text[:1].isdigit()):
        return False
    height = max(last.height, 1e-6)
    if abs(above.box[0] - below.box[0]) > height or abs(first.height - last.height) > 0.25 * height:
        return False
    left, right = min(above.box[0], below.box[0]), max(above.box[2], below.box[2])
    return last.right - left >= FULL_LINE * (right - left)


def carry_on(paragraph: OpenParagraph, block: Block, prov: Any) -> OpenParagraph:
    """``paragraph``'s item grown by ``block``, the same paragraph on the next page, and its box there."""
    text = join_lines([*paragraph.block.lines[-1:], *block.lines])
    joined = paragraph.text[: len(paragraph.text) - len(paragraph.block.lines[-1].text)] + text
    prov.charspan = (len(paragraph.text) + 1, len(joined))
    paragraph.item.text = joined
    paragraph.item.orig = joined
    paragraph.item.prov.append(prov)
    return OpenParagraph(block, paragraph.item, joined)
