"""Published LaTeX papers read as a careful reader reads them (docs/ingester.md, "PDF layout"):
R package vignettes set in the Journal of Statistical Software's style, cut from Debian's
r-cran-sandwich and r-cran-zoo (bench/fidelity/README.md gives their licences).

Their Latin Modern fonts report a weight pdfium guesses (the regular face reads 744, the bold
620), so the font's name says which is bold; their subsubsections are italic and a point larger
than the body; their display formulas and echoed code fall in the layout model's title regions;
their tables set code in a monospaced font whose spaces are as wide as a column's gap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from haiku.core.convert.layout_fonts import font_is_bold, monospaced

FIDELITY = Path(__file__).resolve().parents[2] / "bench" / "fidelity"


def _read(converter, name: str):
    return converter.read(name=name, fmt="pdf", data=(FIDELITY / name).read_bytes())


def _headings(document) -> list[tuple[str, int]]:
    return [(item.text, item.level) for item, _ in document.docling.iterate_items() if item.label == "section_header"]


def test_a_fonts_name_says_its_weight_before_pdfiums_guess():
    assert not font_is_bold("LMRoman10-Regular", 744, 0)  # what pdfium reports for LaTeX's regular face
    assert font_is_bold("LMRoman10-Bold", 620, 0)
    assert font_is_bold("ABCDEF+LMRomanDemi10-Regular", 685, 0)
    assert font_is_bold("NimbusRomNo9L-Medi", 400, 0) and not font_is_bold("NimbusRomNo9L-Regu", 700, 0)
    assert not font_is_bold("CMR10", 700, 0) and font_is_bold("CMBX12", 400, 0)
    assert font_is_bold("ArialMT", 700, 0) and not font_is_bold("ArialMT", 400, 0)  # no style word: the weight decides
    assert monospaced("LMMono10-Regular", 0) and monospaced("Whatever", 1) and not monospaced("LMRoman10-Regular", 0)


@pytest.mark.slow
def test_a_papers_sections_and_italic_subsections_are_its_headings_and_formulas_are_not(converter):
    paper = _read(converter, "sandwich-cl-p1-10.pdf")
    headings = _headings(paper)
    texts = [text for text, _ in headings]
    assert converter.title(paper) == "Various Versatile Variances: An Object-Oriented Implementation of Clustered Covariances in R"
    assert texts[1:] == [
        "1. Introduction", "2. Overview", "2.1. Clustered dependencies in regression models",
        "2.2. Clustered covariance methods", "2.3. R packages for sandwich covariances",
        "2.4. R packages for clustered covariances", "2.5. Stata software for clustered covariances",
        "3. Methods", "3.1. Sandwich covariances", "3.2. Clustered covariances", "Types of bias correction",
        "Two-way and multi-way clustered covariances", "3.3. Clustered covariances for panel data",
        "Panel Newey-West", "Driscoll and Kraay", "3.4. Panel-corrected standard errors",
    ]
    levels = dict(headings)
    # italic subsubsections stand under the bold subsections, which stand under the sections
    assert levels["3. Methods"] < levels["3.2. Clustered covariances"] < levels["Types of bias correction"]


@pytest.mark.slow
def test_echoed_code_and_an_author_under_the_title_are_no_headings(converter):
    zoo = _headings(_read(converter, "zoo-p1-8.pdf"))
    assert [text for text, _ in zoo] == [
        "zoo: An S3 Class and Methods for Indexed Totally Ordered Observations", "1. Introduction",
        '2. The class "zoo" and its methods', '2.1. Creation of "zoo" objects', '2.2. Creation of "zooreg" objects',
        "2.3. Plotting",
    ]  # not "R> z1", "R> summary(z1)" nor "[1] TRUE"
    oop = [text for text, _ in _headings(_read(converter, "sandwich-oop-p1-3.pdf"))]
    assert oop == [
        "Object-Oriented Computation of Sandwich Estimators", "1. Introduction", "2. Model frame",
        "3. Existing R infrastructure",
    ]  # not the author's name set in bold under the title, nor the affiliation under it


@pytest.mark.slow
def test_a_table_of_code_keeps_its_cells_whole(converter):
    paper = _read(converter, "sandwich-cl-p21-22.pdf")
    [table] = paper.docling.tables
    grid = [[cell.text for cell in row] for row in table.data.grid]
    assert grid[0] == ["Label", "Model", "Object", "Variance-covariance matrix"]
    assert grid[1] == ["CL-0", "(g)lm", "m", 'vcovCL(m, cluster = id, type = "HC0")']
    assert grid[6] == ["PC", "(g)lm", "m", "vcovPC(m, cluster = id, order.by = round)"]
    assert grid[7] == ["standard", "(g)lm", "m", "vcov(m)"]  # a long first entry spans no column
    assert grid[10] == ["gee", "geeglm", "m_gee", "m_gee$geese$vbeta"]


REAL = Path(__file__).parent / "real_pdfs"  # R vignettes' page cuts (their README gives each licence)


def _read_real(converter, name: str):
    return converter.read(name=name, fmt="pdf", data=(REAL / name).read_bytes())


def test_an_articles_authors_set_large_are_no_headings_and_its_titles_mark_is_dropped(converter):
    article = _read_real(converter, "generalsiminf-page-1.pdf")
    assert [text for text, _ in _headings(article)] == ["Simultaneous Inference in General Parametric Models ∗"]
    assert converter.title(article) == "Simultaneous Inference in General Parametric Models"


def test_code_echoed_in_bold_monospaced_type_is_no_heading(converter):
    assert _headings(_read_real(converter, "coin-pages-5-6.pdf")) == []  # not "R> statistic(it)", "R> pvalue(it)"


@pytest.mark.slow
def test_a_text_layer_of_dingbats_is_read_by_ocr(converter):
    paper = _read_real(converter, "xts-page-1.pdf")
    assert converter.title(paper) == "xts: Extensible Time Series"
    assert "Jeffrey A. Ryan" in paper.content and "❊" not in paper.content


def test_a_paragraph_columns_lines_carried_over_stay_in_their_cell(converter):
    [table] = _read_real(converter, "lmer-page-7.pdf").docling.tables
    grid = [[cell.text for cell in row] for row in table.data.grid]
    assert grid == [
        ["Formula", "Alternative", "Meaning"],
        ["(1 | g)", "1 + (1 | g)", "Random intercept with fixed mean."],
        ["0 + offset(o) + (1 | g)", "-1 + offset(o) + (1 | g)", "Random intercept with a priori means."],
        ["(1 | g1/g2)", "(1 | g1)+(1 | g1:g2)", "Intercept varying among g1 and g2 within g1."],
        ["(1 | g1) + (1 | g2)", "1 + (1 | g1) + (1 | g2).", "Intercept varying among g1 and g2."],
        ["x + (x | g)", "1 + x + (1 + x | g)", "Correlated random intercept and slope."],
        ["x + (x || g)", "1 + x + (1 | g) + (0 + x | g)", "Uncorrelated random intercept and slope."],
    ]  # before: each cell's second line a row of its own, the first two columns empty


def test_a_titles_first_line_ending_in_a_colon_runs_on_into_its_second():
    from haiku.core.convert.layout_headings import HeadingRule
    from haiku.core.convert.layout_lines import Line

    first = Line(1, "The Strucplot Framework:", 150, 100, 450, 117, size=17.0, bold=True)
    second = Line(1, "Visualizing Multi-way Contingency Tables with vcd", 100, 120, 500, 137, size=17.0, bold=True)
    label = Line(2, "Warning:", 72, 100, 150, 117, size=17.0, bold=True)  # a label, nothing of its size under it
    body = [Line(page, "body text " * 8, 72, 200 + 14 * row, 540, 211 + 14 * row, size=11.0) for page in (1, 2) for row in range(30)]
    rule = HeadingRule([first, second, label, *body], [])
    assert rule.level(first, in_title_region=True) == rule.level(second, in_title_region=True) == 1
    assert rule.level(label, in_title_region=True) is None
