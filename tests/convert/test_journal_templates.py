"""Journal and conference papers read as a careful reader reads them (docs/ingester.md, "PDF
layout"): first pages of the sample papers that publishers' LaTeX classes ship (ACM's acmart, AIP's
REVTeX, APA, Oxford University Press, US Army ERDC reports, Elsevier's elsarticle), cut from
Debian's texlive-publishers-doc; tests/convert/real_pdfs/README.md and bench/fidelity/README.md give
their licences.

What they show: a title the layout model takes for a teaser figure's caption, authors in a grid
of columns or marked with TeX's asterisk (``∗``), section heads set a size under the body in two
columns, an abstract set larger than the body, a chart's markers read as page numbers, a banner
set sideways on a cover and a running banner of three lines.
"""

from __future__ import annotations

from pathlib import Path

REAL = Path(__file__).parent / "real_pdfs"
FIDELITY = Path(__file__).resolve().parents[2] / "bench" / "fidelity"  # its README gives the licences


def _read(converter, name: str):
    return converter.read(name=name, fmt="pdf", data=(REAL / name).read_bytes())


def _headings(document) -> list[str]:
    return [item.text for item, _ in document.docling.iterate_items() if item.label == "section_header"]


def test_a_title_over_a_teaser_figure_is_the_title_not_a_caption(converter):
    paper = _read(converter, "acmart-sigconf-page-1.pdf")
    assert converter.title(paper) == "The Name of the Title Is Hope"  # before: "CCS CONCEPTS"
    assert _headings(paper) == ["The Name of the Title Is Hope", "CCS CONCEPTS", "1 INTRODUCTION"]
    captions = [item.text for item in paper.docling.texts if item.label == "caption"]
    assert not any("Title Is Hope" in text for text in captions)


def test_authors_marked_with_a_tex_asterisk_and_a_large_abstract_are_no_headings(converter):
    paper = _read(converter, "acmart-acmlarge-page-1.pdf")
    assert _headings(paper) == ["The Name of the Title Is Hope", "1 INTRODUCTION"]  # not its abstract


def test_a_journals_small_numbered_heads_are_headings_and_its_title_no_running_header(converter):
    paper = converter.read(name="revtex-aipsamp.pdf", fmt="pdf", data=(FIDELITY / "revtex-aipsamp.pdf").read_bytes())
    headings = _headings(paper)
    # its running header repeats the title ("Sample title") in small type: the title set large
    # under it is the title, whole; its bold heads are a point under the body's size, the
    # appendices' "Appendix A:" numbered too; its first head runs on two lines, the first
    # ending in a colon
    assert headings[:4] == [
        "Sample Title: with Forced Linebreaka)",
        "I. FIRST-LEVEL HEADING: THE LINE BREAK WAS FORCED via \\\\",
        "A. Second-level heading: Formatting",
        "1. Third-level heading: Citations and Footnotes",
    ]
    assert {"II. MATH AND EQUATIONS", "Appendix A: Appendixes", "a. A subsubsection in an appendix"} <= set(headings)
    assert converter.title(paper) == "Sample Title: with Forced Linebreak"  # its footnote's mark "a)" dropped


def test_a_bold_head_wrapped_onto_two_lines_stands_alone_as_a_whole():
    from haiku.core.convert.layout_lines import Line
    from haiku.core.convert.layout_styled_heads import styled_heads

    def line(text: str, top: float, *, bold: bool = False, right: float = 300) -> Line:
        return Line(1, text, 54, top, right, top + 9, size=10.0, bold=bold)

    first = line("4 EXPERIMENTAL RESULTS AND", 100, bold=True, right=200)
    second = line("DISCUSSION", 111, bold=True, right=120)
    body = [line("The measurements of the first run show that the method holds up", 128 + 11 * n) for n in range(3)]
    note = [line("Do not run this as root, it", 200, bold=True, right=180), line("will break your system.", 211, bold=True, right=170)]
    after = line("Then the next paragraph starts here and runs on for a while", 228)
    found = styled_heads([first, second, *body, *note, after], body_size=10.0, measure=246)
    assert {id(first), id(second)} <= found.heads and found.runs_on == {id(first)}
    assert not {id(x) for x in note} & found.heads  # a short bold paragraph that ends a sentence


def test_a_titles_letter_mark_is_dropped_but_a_bracketed_letter_kept():
    from haiku.core.convert.titles import usable_title

    assert usable_title("Sample Title: with Forced Linebreaka)") == "Sample Title: with Forced Linebreak"
    assert usable_title("Results (part a)") == "Results (part a)"


def test_a_wide_tables_header_over_two_columns_makes_no_column_of_its_own(converter):
    paper = converter.read(name="revtex-aipsamp.pdf", fmt="pdf", data=(FIDELITY / "revtex-aipsamp.pdf").read_bytes())
    grids = [[[cell.text for cell in row] for row in table.data.grid] for table in paper.docling.tables]
    assert len(grids) == 4  # before: the wide one, between double rules, 7 columns and no table
    [wide] = [grid for grid in grids if any(row[0] == "Ion" for row in grid)]
    assert ["Ion", "1st alternative", "2nd alternative", "lst alternative", "2nd alternative"] in wide
    assert ["Cl", "(a) + (b) + (c) + (d)", "(2g)b", "(4e)a", ""] in wide


def test_heads_in_two_columns_stand_alone_beside_the_other_column(converter):
    paper = _read(converter, "apa7-shortsample-page-1.pdf")
    assert _headings(paper) == [
        "Sample APA-Style Document Using the apa7 Package",
        "Participants", "Materials", "Paper-and-Pencil Instrument", "Design", "Procedure",
    ]  # not the author under the bold title, nor "Figure 1"; the chart's "l" markers are no page numbers


def test_an_abstract_set_large_and_a_keyword_line_are_text_and_wrapped_heads_one_heading(converter):
    headings = _headings(_read(converter, "oup-template-page-1.pdf"))
    assert not any(text.startswith(("Abstracts must", "Key words")) for text in headings)
    assert "head" not in headings  # a head's wrapped second line joins it across the other column's lines
    assert "This is an example for first level head - section head" in headings
    assert "This is an example for second level head - subsection head" in headings


def test_a_covers_sideways_banner_is_no_title(converter):
    report = _read(converter, "erdc-sample-page-1.pdf")
    assert converter.title(report) == "Donec Felis Erat, Congue Non, Volutpat At, Tincidunt Tristique, Libero"
    assert "Engineer Research and" not in _headings(report)


def test_a_running_banner_of_three_lines_is_furniture_whole(converter):
    headings = _headings(_read(converter, "elsdoc-pages-1-3.pdf"))
    assert "document" not in headings  # the banner's last line reaches under the page's top band
    assert headings[:2] == ["1. Introduction", "2. Major Di\ufffderences"]  # its "ff" ligature has no Unicode


def test_a_chart_marker_is_no_page_number_and_one_number_beside_a_line_no_contents():
    from haiku.core.convert.furniture import PAGE_NUMBER, contents_entries
    from haiku.core.convert.layout_lines import Line

    assert all(PAGE_NUMBER.match(text) for text in ("iv", "xii", "xxxviii", "12", "Page 3", "3 of 9"))
    assert not any(PAGE_NUMBER.match(text) for text in ("l", "ll", "c", "iiii"))
    heading = Line(1, "Materials", 54, 380, 95, 390, size=10.0)
    label = Line(1, "x", 376, 379, 380, 389, size=6.5)  # a chart's axis label on the heading's row
    assert contents_entries([heading, label]) == set()
    entries = [Line(1, f"{n} Section", 72, 100 + 20 * n, 200, 110 + 20 * n) for n in (1, 2)]
    numbers = [Line(1, str(3 * n), 500, 100 + 20 * n, 510, 110 + 20 * n) for n in (1, 2)]
    assert contents_entries(entries + numbers) == {id(x) for x in entries}


def test_two_columns_of_text_the_model_boxes_as_one_table_stay_text(converter):
    page = _read(converter, "quantum-template-page-2.pdf")
    assert page.docling.tables == []  # before: one table of 34 rows, the page's two columns its cells
    assert "Citations to other works should appear in the References section" in page.content


def test_a_theorems_label_is_no_heading():
    from haiku.core.convert.layout_headings import heading_shaped

    assert not heading_shaped("Theorem 1 (DOI links are required)")
    assert not heading_shaped("Lemma 2.1.") and not heading_shaped("Proof.")
    assert heading_shaped("Theorem proving in Lean") and heading_shaped("Definitions")
