"""A page laid out as Wikipedia lays out an article (its skin's ids and classes, a sidebar,
300 language links, a footer), for the boilerplate tests; the text is made up."""

from __future__ import annotations

LANGUAGES = [f"Language {i}" for i in range(300)]
ARTICLE = (
    "The mallard is a dabbling duck that breeds throughout the temperate and subtropical Americas.",
    "Mallards live in wetlands, eat water plants and small animals, and are social animals.",
)


def wiki_page() -> str:
    languages = "".join(
        f'<li class="interlanguage-link"><a href="https://x{i}.example.org/wiki/Duck" lang="x{i}">{name}</a></li>'
        for i, name in enumerate(LANGUAGES)
    )
    return f"""<!DOCTYPE html><html lang="en"><head><title>Mallard - Wikipedia</title></head>
<body class="skin-vector">
<a class="mw-jump-link skip-link" href="#bodyContent">Jump to content</a>
<header class="vector-header mw-header"><div class="vector-header-start"><nav aria-label="Site" role="navigation">
<div id="vector-main-menu"><ul><li><a href="/wiki/Main_Page">Main page</a></li><li><a href="/wiki/Portal:Contents">Contents</a></li>
<li><a href="/wiki/Special:Random">Random article</a></li><li><a href="/wiki/Help:Contents">Help</a></li></ul></div></nav>
<div id="p-search" role="search"><form><input name="search" placeholder="Search Wikipedia"></form></div></div></header>
<div class="mw-page-container"><div id="mw-panel" class="vector-sidebar"><div class="vector-toc" id="vector-toc">
<h2>Contents</h2><ul><li><a href="#Taxonomy">Taxonomy</a></li><li><a href="#Habitat">Habitat</a></li></ul></div></div>
<main id="content" class="mw-body"><h1 id="firstHeading">Mallard</h1>
<div id="bodyContent"><div id="mw-content-text"><p>{ARTICLE[0]}</p>
<h2 id="Taxonomy">Taxonomy</h2><p>The species was described by Carl Linnaeus in 1758.</p>
<h2 id="Habitat">Habitat</h2><p>{ARTICLE[1]}</p></div>
<div id="catlinks" class="catlinks"><a href="/wiki/Category:Ducks">Categories: Ducks</a> | Birds described in 1758</div></div>
</main><div id="p-lang" class="vector-menu" role="navigation"><h3>Languages</h3><ul>{languages}</ul></div></div>
<footer id="footer" class="mw-footer" role="contentinfo"><ul id="footer-info"><li>This page was last edited on 1 May 2024.</li>
<li>Text is available under the Creative Commons Attribution-ShareAlike License 4.0.</li></ul>
<ul id="footer-places"><li><a href="/wiki/Privacy">Privacy policy</a></li><li><a href="/wiki/About">About Wikipedia</a></li>
<li><a href="/wiki/Disclaimers">Disclaimers</a></li></ul></footer></body></html>"""
