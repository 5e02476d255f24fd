"""The title a file declares of itself (docs/ingester.md, "Titles").

A web page's ``<h1>`` (or its ``<title>`` less the site's name), an office
file's or an e-book's document properties, a PDF's ``/Title``, a LaTeX
``\\title{}``: each read before the document's first heading, which can be a
sidebar's "Contents" or a cover's "Front cover". A declared title that is a
placeholder ("document title"), a file name or no words at all is not one, nor
is a document property written as a file's or a template's name.
"""

from __future__ import annotations

import re
import zipfile
from html.parser import HTMLParser
from io import BytesIO
from typing import Any

from haiku.core.convert.titles import TITLE_MAX_CHARS, usable_title

# " - Wikipedia", " | The Site", " — Blog": a site's name after the page's.
_SITE_SEPARATORS = re.compile(r"\s+[-|–—·:]{1,2}\s+")
_SITE_NAME_MAX_CHARS = 40
# A document property in the form of a file's or a template's name (``xinxinli-blue-squares``,
# ``report_v2``): lower-case words joined by hyphens or underscores, which the tool that made
# the file left there, not a title set for readers
_PROPERTY_SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)+$")


def declared_title(fmt: str, data: bytes) -> str | None:
    """The title ``data`` (a file of converter format ``fmt``) declares, if a usable one."""
    try:
        if fmt == "html":
            title = _html_title(data)
        elif fmt in ("docx", "pptx", "xlsx"):
            title = _zip_xml_title(data, "docProps/core.xml")
        elif fmt in ("odt", "ods", "odp"):
            title = _zip_xml_title(data, "meta.xml")
        elif fmt == "epub":
            title = _epub_title(data)
        elif fmt == "latex":
            title = latex_title(data.decode("utf-8", "replace"))
        elif fmt == "pdf":
            from haiku.core.convert.titles import pdf_title

            return pdf_title(data)
        else:
            return None
    except (zipfile.BadZipFile, OSError, ValueError, KeyError):
        return None
    if fmt not in ("html", "latex") and title and _PROPERTY_SLUG.match(title.strip()):
        return None
    return usable_title(title)


class _Headings(HTMLParser):
    """The text of the first ``<title>`` and the first ``<h1>`` of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, str] = {}
        self._open: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("title", "h1") and tag not in self.found and self._open is None:
            self._open, self._text = tag, []
        elif tag == "br" and self._open is not None:  # "Release Series<br>Changes": two words
            self._text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            self.found[tag] = " ".join("".join(self._text).split())
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)


def _html_title(data: bytes) -> str | None:
    from haiku.core.convert.document import decode_text

    parser = _Headings()
    parser.feed(decode_text(data))
    h1, title = parser.found.get("h1") or "", parser.found.get("title") or ""
    if h1 and title and (_same(h1, _site_part(title)) or _GENERIC_HEADING.match(h1)):
        # The <h1> is the site's banner ("Node.js documentation" atop every page) or a section's
        # name ("Abstract"): the <title> names the page.
        return site_trimmed(title)
    if h1 and len(h1) <= TITLE_MAX_CHARS:
        return h1
    return site_trimmed(title) if title else None


# A section's name set as a page's <h1> by documentation tools: it titles a part, not the document.
_GENERIC_HEADING = re.compile(
    r"(?i)^(?:abstract|contents|table of contents|introduction|overview|preface|foreword|summary|index)$"
)


def _same(a: str, b: str | None) -> bool:
    return b is not None and a.casefold().split() == b.casefold().split()


def _site_part(title: str) -> str | None:
    """``Cluster | Node.js Documentation`` → ``Node.js Documentation``: what ``site_trimmed`` cuts off."""
    trimmed = site_trimmed(title)
    return title[len(trimmed):].lstrip(" -|–—·:") if trimmed != title else None


def site_trimmed(title: str) -> str:
    """``Duck - Wikipedia`` → ``Duck``: a short last part after a separator is the site's name."""
    separators = list(_SITE_SEPARATORS.finditer(title))
    last = separators[-1] if separators else None
    if last is not None and last.start() > 0 and len(title) - last.end() <= _SITE_NAME_MAX_CHARS:
        return title[: last.start()].strip()
    return title


def _zip_xml_title(data: bytes, member: str) -> str | None:
    with zipfile.ZipFile(BytesIO(data)) as archive:
        if member not in archive.namelist():
            return None
        return _dc_title(archive.read(member)[:1_000_000])


def _epub_title(data: bytes) -> str | None:
    with zipfile.ZipFile(BytesIO(data)) as archive:
        package = next((n for n in archive.namelist() if n.endswith(".opf")), None)
        return _dc_title(archive.read(package)[:1_000_000]) if package else None


def _dc_title(xml: bytes) -> str | None:
    # Dublin Core's title, whatever the prefix bound to it; no entity is expanded (a regex, not a parser).
    match = re.search(rb"<(?:[\w.-]+:)?title[^>]*>(.*?)</(?:[\w.-]+:)?title>", xml, re.S)
    if not match:
        return None
    from html import unescape

    return unescape(match.group(1).decode("utf-8", "replace")).strip() or None


_LATEX_TITLE = re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{")


def latex_title(source: str) -> str | None:
    """The argument of ``\\title{…}`` with its macros expanded to plain words."""
    match = _LATEX_TITLE.search(source)
    if not match:
        return None
    depth, start = 1, match.end()
    for index in range(start, min(len(source), start + 4 * TITLE_MAX_CHARS)):
        depth += {"{": 1, "}": -1}.get(source[index], 0)
        if depth == 0:
            return plain_latex(source[start:index])
    return None


def plain_latex(text: str) -> str:
    """LaTeX as a reader sees it: ``Mistral~7B\\xspace`` → ``Mistral 7B``, ``\\emph{x}`` → ``x``."""
    text = re.sub(r"(?<!\\)%.*", "", text)  # comments
    text = text.replace("\\\\", " ").replace("~", " ")
    text = re.sub(r"\\(?:thanks|footnote|footnotetext|label)\s*\{[^{}]*\}", "", text)
    text = re.sub(r"\\[a-zA-Z@]+\*?\s*(?:\[[^\]]*\])?", "", text)  # a macro's name: its argument stays
    text = re.sub(r"\\([&%$#_{}])", r"\1", text)
    text = text.replace("{", "").replace("}", "")
    return " ".join(text.split())
