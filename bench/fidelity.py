"""How faithfully the converter reads real published documents (docs/benchmarks.md, "Reading fidelity").

The set lives in bench/fidelity/: page ranges of Debian manuals published as PDF and
chapters published as HTML (the licences and how each file was cut are in its README),
and ``truth.json``, written once from each manual's own outline and HTML twin and checked
by hand. Each document goes through the converter as the ingester runs it (the default
processing settings) and is scored against its truth:

* title right: the stored title equals one of the truth's titles (case, quotes and a
  leading section number aside); documents cut from a manual's middle have no title;
* headings: recall (truth headings found among the document's section headers and
  title), precision (section headers that are a truth heading, the title or an allowed
  line such as "Contents"), pooled over the documents of a format;
* tables: a truth table is recalled when one stored table holds at least half of its
  non-empty cells; empty cells among all stored table cells;
* text: bag-of-words F1 against the truth text (running headers, page numbers and
  tables of contents left out of it), and boilerplate: the share of stored words that
  appear nowhere in the truth; once for the stored chunks (what search reads: a table's
  rows as sentences repeat its column names, so tabular documents score lower there) and
  once for the stored markdown (what a reader of the document sees).

    python bench/fidelity.py [--json bench/results/fidelity.json] [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SET = REPO / "bench" / "fidelity"
NUMBERING = re.compile(r"^(chapter|appendix)?\s*([0-9]+|[a-z])?([.][0-9]+)*[.]?\s+(?=\S)")
WORD = re.compile(r"\w+")


def normalized(text: str) -> str:
    """A line as compared: NFKC, case-folded, straight quotes, no leading section number or pilcrow."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'").replace("¶", "")
    text = re.sub(r"\s+", " ", text.replace("\ufffe", "").replace("\xad", "")).strip().casefold()
    return NUMBERING.sub("", text).strip()


def words(text: str) -> Counter[str]:
    text = unicodedata.normalize("NFKC", text).replace("\ufffe", "").replace("\xad", "").casefold()
    return Counter(WORD.findall(text))


def same_line(a: str, b: str) -> bool:
    a, b = normalized(a), normalized(b)
    return a == b or (min(len(a), len(b)) > 8 and SequenceMatcher(None, a, b).ratio() >= 0.9)


def predicted_headings(docling: Any) -> list[str]:
    """The document's section headers and title items, body only (running headers are furniture)."""
    from docling_core.types.doc import DocItemLabel

    wanted = {DocItemLabel.SECTION_HEADER, DocItemLabel.TITLE}
    return [item.text for item, _ in docling.iterate_items() if getattr(item, "label", None) in wanted]


def predicted_tables(docling: Any) -> list[list[str]]:
    """Each stored table's cells, row by row flattened (empty cells kept, to count them)."""
    return [[cell.text.strip() for row in table.data.grid for cell in row] for table in docling.tables]


def score_headings(truth: dict, found: list[str]) -> dict[str, int]:
    wanted = [h["text"] for h in truth["headings"]]
    titles = truth.get("title") or []
    allowed = [re.compile(p, re.IGNORECASE) for p in truth.get("allowed_headings", [])]
    hits = sum(1 for w in wanted if any(same_line(w, f) for f in found))
    right = sum(
        1
        for f in found
        if any(same_line(f, w) for w in [*wanted, *titles]) or any(p.fullmatch(f.strip()) for p in allowed)
    )
    return {"wanted": len(wanted), "recalled": hits, "found": len(found), "right": right}


def score_tables(truth: dict, tables: list[list[str]]) -> dict[str, int]:
    recalled = 0
    for table in truth["tables"]:
        cells = [normalized(c) for row in table["rows"] for c in row if c.strip()]
        best = 0.0
        for stored in tables:
            pool = Counter(normalized(c) for c in stored if c)
            best = max(best, sum(min(n, pool[c]) for c, n in Counter(cells).items()) / max(len(cells), 1))
        recalled += best >= 0.5
    stored_cells = sum(len(t) for t in tables)
    return {
        "wanted": len(truth["tables"]),
        "recalled": recalled,
        "stored_tables": len(tables),
        "stored_cells": stored_cells,
        "empty_cells": sum(1 for t in tables for c in t if not c),
    }


def score_text(truth: dict, stored: str) -> dict[str, float]:
    reference, got = words(truth["text"]), words(stored)
    common = sum((reference & got).values())
    precision = common / max(sum(got.values()), 1)
    recall = common / max(sum(reference.values()), 1)
    foreign = sum(n for w, n in got.items() if w not in reference)
    return {
        "f1": round(2 * precision * recall / (precision + recall), 4) if common else 0.0,
        "boilerplate": round(foreign / max(sum(got.values()), 1), 4),
    }


def score_document(files: Any, name: str, truth: dict) -> dict[str, Any]:
    started = time.perf_counter()
    document = files.convert(SET / name)
    title = files.generate_title(document)
    chunks = files.chunk(document)
    seconds = time.perf_counter() - started
    titles = truth.get("title")
    return {
        "format": truth["format"],
        "title": title,
        "title_right": None if not titles else any(normalized(title) == normalized(t) for t in titles),
        "headings": score_headings(truth, predicted_headings(document.docling)),
        "tables": score_tables(truth, predicted_tables(document.docling)),
        "text": score_text(truth, "\n".join(c.content for c in chunks)),
        "markdown": score_text(truth, document.content),
        "seconds": round(seconds, 2),
    }


def summary(results: dict[str, dict]) -> dict[str, dict]:
    """Per format and over all: titles right, pooled heading recall/precision, tables, text means."""
    groups: dict[str, list[dict]] = {"all": list(results.values())}
    for result in results.values():
        groups.setdefault(result["format"], []).append(result)
    table = {}
    for group, rows in groups.items():
        titled = [r for r in rows if r["title_right"] is not None]
        h = {k: sum(r["headings"][k] for r in rows) for k in ("wanted", "recalled", "found", "right")}
        t = {k: sum(r["tables"][k] for r in rows) for k in ("wanted", "recalled", "stored_cells", "empty_cells")}
        table[group] = {
            "documents": len(rows),
            "titles_right": f"{sum(1 for r in titled if r['title_right'])}/{len(titled)}",
            "heading_recall": round(h["recalled"] / max(h["wanted"], 1), 3),
            "heading_precision": round(h["right"] / max(h["found"], 1), 3),
            "tables_recalled": f"{t['recalled']}/{t['wanted']}",
            "empty_cells": round(t["empty_cells"] / t["stored_cells"], 3) if t["stored_cells"] else None,
            "text_f1": round(sum(r["text"]["f1"] for r in rows) / len(rows), 3),
            "boilerplate": round(sum(r["text"]["boilerplate"] for r in rows) / len(rows), 3),
            "markdown_f1": round(sum(r["markdown"]["f1"] for r in rows) / len(rows), 3),
            "markdown_boilerplate": round(sum(r["markdown"]["boilerplate"] for r in rows) / len(rows), 3),
        }
    return table


def render(results: dict[str, dict], table: dict[str, dict]) -> str:
    lines = [
        "| document | title | heading R / P | tables | empty cells | text F1 chunks / markdown | boilerplate chunks / markdown | s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        h, t = r["headings"], r["tables"]
        mark = "-" if r["title_right"] is None else ("yes" if r["title_right"] else f"no ({r['title'][:40]})")
        empty = f"{t['empty_cells'] / t['stored_cells']:.2f}" if t["stored_cells"] else "-"
        lines.append(
            f"| {name} | {mark} | {h['recalled']}/{h['wanted']} / {h['right']}/{h['found']} | "
            f"{t['recalled']}/{t['wanted']} of {t['stored_tables']} | {empty} | {r['text']['f1']:.3f} / "
            f"{r['markdown']['f1']:.3f} | {r['text']['boilerplate']:.3f} / {r['markdown']['boilerplate']:.3f} | {r['seconds']} |"
        )
    lines += [
        "",
        "| format | docs | titles | heading recall | heading precision | tables | empty cells | text F1 chunks / markdown "
        "| boilerplate chunks / markdown |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for group, s in table.items():
        lines.append(
            f"| {group} | {s['documents']} | {s['titles_right']} | {s['heading_recall']} | {s['heading_precision']} | "
            f"{s['tables_recalled']} | {s['empty_cells']} | {s['text_f1']} / {s['markdown_f1']} | "
            f"{s['boilerplate']} / {s['markdown_boilerplate']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write the scores here as JSON")
    parser.add_argument("--only", action="append", help="score only this document (repeatable)")
    args = parser.parse_args(argv)

    from haiku.core.config import AppConfig
    from haiku.core.convert.files import FileConverter

    truths: dict[str, dict] = json.loads((SET / "truth.json").read_text(encoding="utf-8"))
    names = [n for n in truths if not args.only or n in args.only]
    files = FileConverter(AppConfig())
    load = Path("/proc/loadavg").read_text().split()[0]
    results = {name: score_document(files, name, truths[name]) for name in names}
    table = summary(results)
    print(render(results, table))
    print(f"\nload average before: {load}, after: {Path('/proc/loadavg').read_text().split()[0]}")
    if args.json:
        args.json.write_text(json.dumps({"documents": results, "summary": table, "load": load}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
