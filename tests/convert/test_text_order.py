"""Text read in order and without markup or furniture in chunks (docs/ingester.md, "Formats"):
LaTeX macros expanded or dropped, tables of contents' dot leaders kept out of chunks."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from haiku.core.convert.furniture import is_contents_line

REAL_PDFS = Path(__file__).parent / "real_pdfs"

# As a paper's source has it (the Mistral 7B paper's preamble defines \model this way).
PAPER = r"""\documentclass{article}
\usepackage{xspace}
\usepackage{wrapfig}
\newcommand{\model}{Mistral~7B\xspace}
\title{\model: a small language model}
\begin{document}
\maketitle
\section{Introduction}
We present \model, a model that outperforms larger ones. See Table~\ref{tab:results} and Fig.~1.
\begin{wrapfigure}{r}{0.48\textwidth}
\centering
\includegraphics[width=0.45\textwidth]{architecture.png}
\caption{The architecture of \model.}
\end{wrapfigure}
Results follow~\cite{touvron}. The model\xspace is fast, and \model is small.
Code lives at \url{https://example.org/~mistral}.
\end{document}
"""


def test_latex_macros_are_expanded_and_package_markup_dropped(converter):
    document = converter.convert(name="paper.tex", fmt="latex", data=PAPER.encode())
    text = "\n".join(chunk.content for chunk in document.chunks)
    assert document.title == "Mistral 7B: a small language model"
    assert "We present Mistral 7B, a model" in text and "Fig. 1" in text and "The model is fast" in text
    assert "Mistral 7B is small" in text
    for leak in ("\\xspace", "~7B", "r0.48", "Fig.1"):
        assert leak not in text, leak


def test_a_url_keeps_its_tilde():
    from haiku.core.convert.latex_source import plain_latex_source

    assert r"\url{https://example.org/~mistral}" in plain_latex_source(PAPER)


def test_dot_leader_lines_are_contents_and_prose_is_not():
    assert is_contents_line("2.1. NAME . . . . . . . . . . . . . . . 2")
    assert is_contents_line("1. Introduction . . . . . . . . . 1 2. How to use bzip2 . . . . . . . . . 2")
    assert is_contents_line("Preface ........ iv")
    assert not is_contents_line("He waited...... 3 days later it rained.")
    assert not is_contents_line("Values: 1.5, 2.5 and so on.")


def test_a_real_manuals_table_of_contents_stays_out_of_its_chunks(converter):
    data = (REAL_PDFS / "bzip2-manual-pages-1-3.pdf").read_bytes()
    document = converter.read(name="bzip2-manual.pdf", fmt="pdf", data=data)
    chunks = converter.chunk(document)
    text = "\n".join(chunk.content for chunk in chunks)
    assert ". . . . . ." not in text and "All rights reserved" in text
    furniture = [item.text for item in document.docling.texts if item.content_layer.value == "furniture"]
    assert any("How to use bzip2" in line for line in furniture)  # kept in the document, for visualize


def test_a_wiki_pages_menus_language_links_and_footer_stay_out_of_its_chunks(converter):
    from web_pages import ARTICLE, wiki_page

    document = converter.convert(name="Mallard.html", fmt="html", data=wiki_page().encode())
    text = " ".join(" ".join(chunk.content for chunk in document.chunks).split())
    assert document.title == "Mallard"
    assert all(sentence in text for sentence in ARTICLE) and "Carl Linnaeus" in text
    for boilerplate in ("Random article", "Language 150", "Privacy policy", "Jump to content", "Categories: Ducks"):
        assert boilerplate not in text, boilerplate


def test_a_texinfo_pages_next_and_up_links_stay_out_of_its_chunks(converter):
    data = (Path(__file__).parent / "web" / "libffi-The-Basics.html").read_bytes()
    document = converter.convert(name="The-Basics.html", fmt="html", data=data)
    text = " ".join(" ".join(chunk.content for chunk in document.chunks).split())
    assert "ffi_prep_cif" in text and "Next:" not in text and "Simple Example" not in text


def test_a_docbook_pages_prev_next_tables_stay_out_of_its_chunks(converter):
    """A published DocBook chapter: its navigation header and footer are link tables of scattered
    words ("Prev", "Next", "Home", the next chapter's title), not tables of the text."""
    page = Path(__file__).parents[2] / "bench" / "fidelity" / "debian-faq-basic-defs.html"
    document = converter.convert(name="basic-defs.en.html", fmt="html", data=page.read_bytes())
    text = " ".join(" ".join(chunk.content for chunk in document.chunks).split())
    assert "Deb'-ee-en" in text and "Chapter 2. Getting and installing" not in text
    assert not any("tables" in ref for chunk in document.chunks for ref in chunk.item_refs)


def test_an_articles_own_header_and_its_title_stay():
    from haiku.core.convert.html_boilerplate import strip_boilerplate

    page = (
        "<html><body><header><a href='/'>Home</a> <a href='/blog'>Blog</a></header><main><article>"
        "<header><h2>Ruffs on the lek</h2><p>By Ann, 3 May</p></header>"
        + "<p>The males gather each spring and display to the females for weeks on end.</p>" * 3
        + "</article></main></body></html>"
    )
    kept = strip_boilerplate(page)
    assert "Ruffs on the lek" in kept and "By Ann" in kept and "Blog</a>" not in kept


def test_a_right_to_left_pdf_line_drawn_run_by_run_reads_in_logical_order(converter):
    """An Arabic heading and Arabic and Hebrew lines drawn as one text cell per run (a Latin
    word or a number inside them is a run): each line reads right to left, its Latin word
    and numbers in place, and the heading, not its Latin word, is the title; of two columns
    of Arabic side by side, the right one is read first."""
    import rtl_samples as rtl

    if rtl.font_file() is None or rtl.font_file(bold=True) is None:
        pytest.skip("no font with Arabic and Hebrew glyphs (DejaVu Sans) here")
    document = converter.convert(name="rtl.pdf", fmt="pdf", data=rtl.rtl_pdf())
    text = " ".join(" ".join(chunk.content for chunk in document.chunks).split())
    assert document.title == rtl.ARABIC_TITLE
    for line in rtl.ARABIC_LINES + rtl.HEBREW_LINES:
        assert line in text, line
    assert all(chunk.headings == [rtl.ARABIC_TITLE] for chunk in document.chunks)
    assert text.index(" ".join(rtl.RIGHT_COLUMN)) < text.index(" ".join(rtl.LEFT_COLUMN))


def test_cells_of_a_right_to_left_row_join_right_to_left_and_columns_stay_apart():
    from haiku.core.convert.layout_bidi import logical_rows
    from haiku.core.convert.layout_lines import Line

    def cell(text: str, left: float, right: float, top: float = 100.0) -> Line:
        return Line(1, text, left, top, right, top + 10)

    row = [cell("למתחילים", 245, 337), cell("Python", 344, 424), cell("מבוא לשפת", 431, 540)]
    far = cell("עמודה", 40, 120)  # another column, far to the left
    joined = logical_rows([*row, far])
    assert [x.text for x in joined] == ["עמודה", "מבוא לשפת Python למתחילים"]
    assert joined[1].left == 245 and joined[1].right == 540
    latin = [cell("Name", 40, 80), cell("Value", 85, 120)]  # no right-to-left letter: as it was
    assert logical_rows(latin) == latin
    mostly_latin = [cell("The word", 40, 90), cell("שלום", 95, 120), cell("means peace", 125, 190)]
    assert logical_rows(mostly_latin)[0].text == "The word שלום means peace"


def test_a_contents_page_and_a_running_header_stay_out_of_the_chunks(converter):
    """The Debian FAQ's first contents page (chapter entries with their page numbers set apart,
    wrapped entries, dot leaders), its first chapter page, and a page whose running header's
    two halves the text layer reads as one line: the entries and the header are kept for
    ``visualize`` but no chunk holds them; the chapter's text stays."""
    import pypdfium2

    source = pypdfium2.PdfDocument(Path(__file__).parents[2] / "bench" / "fidelity" / "debian-faq-p1-11.pdf")
    cut = pypdfium2.PdfDocument.new()
    cut.import_pages(source, pages=[2, 8, 10])  # the contents page, chapter 1's first and third pages
    out = io.BytesIO()
    cut.save(out)
    cut.close()
    source.close()
    document = converter.read(name="debian-faq.pdf", fmt="pdf", data=out.getvalue())
    text = " ".join(" ".join(chunk.content for chunk in converter.chunk(document)).split())
    assert "This document gives frequently asked questions" in text
    for entry in ("Getting and installing Debian", "What is the latest version of Debian", "Choosing a Debian"):
        assert entry not in text, entry
    furniture = " ".join(x.text for x in document.docling.texts if x.content_layer.value == "furniture")
    assert "2 Getting and installing Debian GNU/Linux" in furniture and "I thought this CD contains just" in furniture
    assert "HOW DOES THE DEBIAN PROJECT FIT IN" not in text and "HOW DOES THE DEBIAN PROJECT FIT IN" in furniture


def test_numbers_that_go_back_are_no_page_numbers():
    from haiku.core.convert.furniture import contents_lines
    from haiku.core.convert.layout_lines import Line

    def row(text: str, number: str, top: float) -> list[Line]:
        return [Line(1, text, 80, top, 300, top + 12), Line(1, number, 500, top, 512, top + 12)]

    contents = [x for i, name in enumerate(["Scope", "Applying", "Packaging", "Uploads"]) for x in row(name, str(3 + 4 * i), 100 + 20 * i)]
    assert len(contents_lines(contents)) == 8
    prices = [x for i, name in enumerate(["Apples", "Pears", "Plums", "Figs"]) for x in row(name, str(12 - i * 3), 100 + 20 * i)]
    assert contents_lines(prices) == set()
    console = [Line(1, f"Unpacking package {i} ....", 80, 100 + 20 * i, 300, 112 + 20 * i) for i in range(5)]
    assert contents_lines(console) == set()


HANDBOOK = """# Field handbook

## Contents

- Choosing a site
- Counting the flock
- Sending the counts

## Choosing a site

Pick a spot with a clear view of the water and the shore behind it.

## Counting the flock

Count in tens when the birds are packed close together.

## Sending the counts

Send the totals to the regional recorder before the month ends.
"""


def test_a_contents_list_that_repeats_the_headings_stays_out_of_the_chunks(converter):
    document = converter.read(name="handbook.md", fmt="md", data=HANDBOOK.encode())
    chunks = converter.chunk(document)
    bodies = [chunk.content for chunk in chunks]
    assert not any("Choosing a site" in body and "Counting the flock" in body for body in bodies)
    text = " ".join(bodies)
    assert "Pick a spot" in text and "Count in tens" in text and "Send the totals" in text
    furniture = [x.text for x in document.docling.texts if x.content_layer.value == "furniture"]
    assert furniture == ["Choosing a site", "Counting the flock", "Sending the counts"]


def test_arabic_presentation_forms_read_as_the_letters_they_show():
    from haiku.core.convert.clean import clean_text

    assert clean_text("ﻣﺮﺣﺒﺎ ﺑﻜﻢ ﻻ") == "مرحبا بكم لا"
    assert clean_text("שלום, Python 3.12") == "שלום, Python 3.12"
