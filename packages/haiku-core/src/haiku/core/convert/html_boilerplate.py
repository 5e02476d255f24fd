"""A web page's navigation, language lists and footers left out before docling reads it
(docs/ingester.md, "Formats"), so chunks hold the page's own text.

Removed: ``<nav>``, ``<footer>``, ``<aside>``, a page-level ``<header>`` (not
inside an article, main or section) that holds no ``<h1>``, elements whose ARIA role is navigation, contentinfo,
banner, search or complementary, and elements whose id or class names them as
navigation (``nav``, ``menu``, ``sidebar``, ``breadcrumb``, ``footer``,
Wikipedia's language links ``p-lang`` and ``interlanguage``, DocBook's
``navheader`` and ``navfooter`` (Prev/Next/Home link tables), Texinfo's ``header`` and ``nav-panel``). A page that
would be left with almost no words this way is kept whole: the markers misled.

A heading's permalink (Sphinx's and MkDocs' ``¶``, GitHub's and Docusaurus' ``#``
anchors: a link to the page's own fragment holding a mark or nothing) is removed
in any case, so headings, titles and chunk headings do not end in ``¶``.
"""

from __future__ import annotations

import re
from typing import Any

_TAGS = ("nav", "footer", "aside", "script", "style", "noscript")
_ROLES = {"navigation", "contentinfo", "banner", "search", "complementary"}
_NAMES = re.compile(
    r"(?:^|[-_\s])(?:nav|navbar|navigation|nav-panel|navheader|navfooter|menu|sidebar|side-bar|breadcrumbs?|footer|site-footer|"
    r"p-lang|interlanguage|interlanguage-link|language-list|lang-list|languages|catlinks|mw-navigation|"
    r"mw-panel|skip-link|cookie-banner|printfooter)(?:$|[-_\s])",
    re.IGNORECASE,
)
_CONTENT = ("article", "main", "section")  # a <header> inside one heads content: its post title, byline
_KEEP_AT_LEAST = 20  # words: a page left with fewer is kept whole (the markers misled)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PERMALINK_MARKS = {"", "¶", "§", "#", "🔗", "\u200b"}


def _named_as_navigation(tag: Any) -> bool:
    names = " ".join([tag.get("id") or "", *(tag.get("class") or [])])
    if tag.name == "div" and "header" in (tag.get("class") or []):  # Texinfo's Next/Previous/Up line
        return True
    return bool(names.strip()) and bool(_NAMES.search(names))


def _permalinks(body: Any) -> list[Any]:
    links = [link for heading in body.find_all(_HEADINGS) for link in heading.find_all("a", href=True)]
    return [link for link in links if str(link["href"]).startswith("#") and link.get_text().strip() in _PERMALINK_MARKS]


def strip_boilerplate(html: str) -> str:
    """``html`` without its headings' permalinks, navigation, language lists and footers (the
    latter kept if removing them would lose most words)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    body = soup.body or soup
    permalinks = _permalinks(body)
    for link in permalinks:
        link.decompose()
    if permalinks:
        html = str(soup)
    before = len(body.get_text(" ").split())
    doomed = [tag for tag in body.find_all(_TAGS)]
    doomed += [tag for tag in body.find_all(attrs={"role": True}) if str(tag.get("role")).lower() in _ROLES]
    doomed += [tag for tag in body.find_all("header") if tag.find("h1") is None and not tag.find_parent(_CONTENT)]
    doomed += [tag for tag in body.find_all(True) if tag.name not in ("body", "main", "article") and _named_as_navigation(tag)]
    if not doomed:
        return html
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()
    if len(body.get_text(" ").split()) < min(_KEEP_AT_LEAST, before):
        return html
    return str(soup)
