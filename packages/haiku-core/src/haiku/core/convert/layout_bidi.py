"""Right-to-left lines of a PDF page in logical order (docs/ingester.md, "PDF layout").

docling-parse joins the characters a PDF draws one after another, left to right,
into one text cell and puts each cell's characters in logical (reading) order,
so an Arabic or Hebrew line drawn in visual order comes as one line that reads
right. A typesetter that draws a line's runs in logical order (its Arabic words
right to left, then a Latin word, then more Arabic) gives one cell per run
instead, each on the same row; read left to right they would be separate lines
in the wrong order, and a heading's Latin word would stand alone as a heading.

Here the cells of one row that follow each other closely, when any of them holds
right-to-left letters, become one line: in a line whose letters are mostly
right-to-left the cells go right to left (an embedded Latin word or number keeps
its own order, as its cell has it); else left to right. Pages without
right-to-left letters are left as they are.
"""

from __future__ import annotations

import re
from dataclasses import replace

from haiku.core.convert.layout_lines import Line

WORD_GAP = 1.0  # cells of one row at most this many line heights apart belong to one line
ROW_OVERLAP = 0.5  # the share of the lower cell's height two cells of one row share
# Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic and their presentation forms
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_LTR = re.compile(r"[^\W\d_\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")  # other letters


def has_rtl(text: str) -> bool:
    return _RTL.search(text) is not None


def rtl_dominant(text: str) -> bool:
    """More of ``text``'s letters are right-to-left (Arabic, Hebrew, …) than left-to-right."""
    return has_rtl(text) and len(_RTL.findall(text)) > len(_LTR.findall(text))


def logical_rows(lines: list[Line]) -> list[Line]:
    """``lines`` of one page with each row of right-to-left cells joined into one line in
    reading order; a page without right-to-left letters is returned as it is."""
    if not any(has_rtl(line.text) for line in lines):
        return lines
    result: list[Line] = []
    for row in _rows(lines):
        for run in _runs(row):
            if len(run) > 1 and any(has_rtl(x.text) for x in run):
                result.append(_joined(run))
            else:
                result.extend(run)
    return result


def _rows(lines: list[Line]) -> list[list[Line]]:
    """The lines grouped by row: each joins the row of the line above it whose box it shares
    ``ROW_OVERLAP`` of its height with."""
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda x: (x.top, x.left)):
        for row in reversed(rows[-4:]):
            anchor = row[0]
            shared = min(anchor.bottom, line.bottom) - max(anchor.top, line.top)
            if shared >= ROW_OVERLAP * min(anchor.height, line.height):
                row.append(line)
                break
        else:
            rows.append([line])
    return rows


def _runs(row: list[Line]) -> list[list[Line]]:
    """The row's cells split where the gap between neighbours is wider than ``WORD_GAP`` line heights."""
    runs: list[list[Line]] = []
    for line in sorted(row, key=lambda x: x.left):
        if runs:
            last = runs[-1][-1]
            if line.left - last.right <= WORD_GAP * max(last.height, line.height, 1e-6):
                runs[-1].append(line)
                continue
        runs.append([line])
    return runs


def _joined(run: list[Line]) -> Line:
    text = " ".join(x.text for x in run)
    ordered = sorted(run, key=lambda x: -x.right) if rtl_dominant(text) else run
    return replace(
        run[0],
        text=" ".join(x.text for x in ordered),
        left=min(x.left for x in run),
        top=min(x.top for x in run),
        right=max(x.right for x in run),
        bottom=max(x.bottom for x in run),
    )
