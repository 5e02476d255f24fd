"""A document's title is the one it declares of itself, before its first heading (docs/ingester.md, "Titles");
a code chunk is headed by the class and function it lies in (docs/ingester.md, "Formats")."""

from __future__ import annotations

from pathlib import Path

import pytest

from haiku.core.convert.declared_titles import latex_title, plain_latex, site_trimmed


def _read(converter, path: Path):
    from haiku.core.convert.formats import format_of

    document = converter.read(name=str(path), fmt=format_of(path.name).converter, data=path.read_bytes())
    return document, converter.title(document)


def test_a_web_page_is_titled_by_its_h1_not_its_sidebars_first_heading(converter, tmp_path):
    page = tmp_path / "Duck.html"
    page.write_text(
        "<html><head><title>Duck - Wikipedia</title></head><body>"
        "<nav><h2>Contents</h2><ul><li>Etymology</li></ul></nav>"
        "<main><h1>Duck</h1><p>Duck is the common name for waterfowl.</p></main></body></html>"
    )
    assert _read(converter, page)[1] == "Duck"


def test_a_web_page_without_h1_is_titled_by_its_title_less_the_sites_name(converter, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Kestrel hovering | Birds of Europe</title></head><body>"
        "<h2>Contents</h2><p>Kestrels hover over fields.</p></body></html>"
    )
    assert _read(converter, page)[1] == "Kestrel hovering"
    assert site_trimmed("Duck - Wikipedia") == "Duck" and site_trimmed("A - B - Wikipedia") == "A - B"
    assert site_trimmed("Python - a language for everyone, everywhere and always") == (
        "Python - a language for everyone, everywhere and always"
    )


def test_a_documentation_sites_banner_or_section_h1_gives_way_to_the_pages_title(converter, tmp_path):
    # As Node.js' API pages, Sphinx's (a section's h1, a permalink per heading) and GCC's news are set.
    banner = tmp_path / "cluster.html"
    banner.write_text(
        "<html><head><title>Cluster | Node.js v20.20.2 Documentation</title></head><body>"
        "<header><h1>Node.js v20.20.2 documentation</h1></header><h2>Cluster</h2>"
        "<p>Clusters of Node.js processes run several instances.</p></body></html>"
    )
    sphinx = tmp_path / "policy.html"
    sphinx.write_text(
        "<html><head><title>Debian Python Policy 0.12.0.0 documentation</title></head><body>"
        '<section id="abstract"><h1>Abstract<a class="headerlink" href="#abstract" title="Link">¶</a></h1>'
        "<p>This document describes the packaging of Python within Debian.</p></section>"
        '<section id="copyright"><h2>1. Copyright<a class="headerlink" href="#copyright">¶</a></h2>'
        "<p>1999-2021, Software in the Public Interest.</p></section></body></html>"
    )
    news = tmp_path / "NEWS.html"
    news.write_text(
        "<html><head><title>GCC 12 Release Series — Changes</title></head><body>"
        "<h1>GCC 12 Release Series<br>Changes, New Features, and Fixes</h1><p>This page lists changes.</p>"
        "</body></html>"
    )
    assert _read(converter, banner)[1] == "Cluster"
    document, title = _read(converter, sphinx)
    assert title == "Debian Python Policy 0.12.0.0 documentation"
    assert "¶" not in document.content
    assert [c.headings for c in converter.chunk(document)] == [["Abstract"], ["Abstract", "1. Copyright"]]
    assert _read(converter, news)[1] == "GCC 12 Release Series Changes, New Features, and Fixes"


def test_office_files_are_titled_by_their_document_properties(converter, tmp_path):
    import docx
    import openpyxl
    import pptx

    word = docx.Document()
    word.core_properties.title = "Annual report of the kestrel survey"
    word.add_heading("Front cover", level=1)
    word.add_paragraph("Counts by county.")
    word.save(tmp_path / "survey.docx")
    book = openpyxl.Workbook()
    book.properties.title = "Widget sales by month"
    book.active.append(["Widget", "Month", "Sales"])
    book.active.append(["Widget C", "2024-01", 5])
    book.save(tmp_path / "sales.xlsx")
    deck = pptx.Presentation()
    deck.core_properties.title = "Kestrels in winter"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Agenda"
    deck.save(tmp_path / "deck.pptx")

    assert _read(converter, tmp_path / "survey.docx")[1] == "Annual report of the kestrel survey"
    assert _read(converter, tmp_path / "sales.xlsx")[1] == "Widget sales by month"
    assert _read(converter, tmp_path / "deck.pptx")[1] == "Kestrels in winter"


def test_placeholder_properties_leave_the_title_to_the_first_heading(converter, tmp_path):
    import docx

    word = docx.Document()
    word.core_properties.title = "Document1"
    word.add_heading("Kestrel counts", level=1)
    word.save(tmp_path / "counts.docx")
    assert _read(converter, tmp_path / "counts.docx")[1] == "Kestrel counts"


def test_a_latex_title_has_its_macros_expanded():
    source = r"\documentclass{article}\title{Mistral~7B\xspace: a \emph{small} model\thanks{Work in progress}}"
    assert latex_title(source) == "Mistral 7B: a small model"
    assert plain_latex(r"Rates of 5\% \textbf{or more}") == "Rates of 5% or more"


def test_a_pdf_title_from_its_metadata_comes_before_its_first_heading(converter, tmp_path):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "redpaper.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.setTitle("Storage tiers on IBM Z")
    pdf.setFont("Helvetica-Bold", 28)
    pdf.drawString(72, 760, "Front cover")
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 700, "This paper describes how storage tiers are placed on the machine.")
    pdf.save()
    assert _read(converter, path)[1] == "Storage tiers on IBM Z"


@pytest.fixture
def python_source(tmp_path) -> Path:
    lines = ['"""Tools for reading arguments."""', "", "import sys", "", "", "class Parser:", "", "    @staticmethod",
             "    def parse_args(argv):"]
    lines += [f"        option_{i} = argv.get('flag_{i}', 'default value number {i}')" for i in range(30)]
    lines += ["", "        return locals()", "", "", "def write_report(rows):"]
    lines += [f"    print('row {i}', rows[{i}])" for i in range(20)]
    path = tmp_path / "tools.py"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_code_chunks_carry_the_class_and_function_they_lie_in(converter, python_source):
    document, _ = _read(converter, python_source)
    chunks = converter.chunk(document)
    headings = [tuple(chunk.headings) for chunk in chunks]
    assert ("Parser", "parse_args") in headings and ("write_report",) in headings
    for chunk in chunks:
        if "option_12 =" in chunk.content:
            assert chunk.headings == ["Parser", "parse_args"]
            assert chunk.embed_text.startswith("Parser\nparse_args\n")
        if "rows[15]" in chunk.content:
            assert chunk.headings == ["write_report"]


def test_source_that_does_not_parse_gets_no_headings_and_no_error(converter, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def broken(:\n    pass\n")
    document, _ = _read(converter, path)
    assert [chunk.headings for chunk in converter.chunk(document)] == [[]]


def test_a_contents_heading_never_titles_a_document(converter, tmp_path):
    # a deck's "Contents" slide comes before its first section; no title is declared
    page = tmp_path / "talk.md"
    page.write_text("## Contents\n\n1. Scope\n2. Results\n\n## Research progress\n\nWe measured it.\n")
    assert _read(converter, page)[1] == "Research progress"
    from haiku.core.convert.titles import plausible_title

    assert [plausible_title(t) for t in ("Table of Contents", "Abstract", "차 례", "An Index of Things")] == [
        None, None, None, "An Index of Things"]
