"""The quality benchmark splits corpora reproducibly and reports its verdicts honestly."""

from __future__ import annotations

import numpy as np
from bench.docs_section import replace_section
from bench.quality_anchor import exact_rankings
from bench.quality_build import doc_id_of, doc_uri
from bench.quality_layouts import LAYOUTS, part_sizes, split
from bench.quality_report import anchor_check, federation_checks


def _row(ndcg: float) -> dict:
    return {"ndcg@10": ndcg, "recall@10": 0.0, "recall@100": 0.0}


def test_part_sizes_follow_the_weights_and_sum_to_the_corpus():
    assert part_sizes(5183, (0.70, 0.15, 0.15)) == [3628, 778, 777]
    assert sum(part_sizes(5183, (0.1,) * 10)) == 5183


def test_split_is_a_partition_independent_of_input_order():
    ids = [str(i) for i in range(100)]
    parts = split(ids, ids, (1, 1, 1))
    reversed_parts = split(ids[::-1], ids[::-1], (1, 1, 1))
    assert sorted(x for p in parts for x in p) == sorted(ids)
    assert [sorted(p) for p in parts] == [sorted(p) for p in reversed_parts]


def test_every_layout_names_its_databases_uniquely():
    names = [name for layout in LAYOUTS for name in layout.database_names()]
    assert len(names) == len(set(names))


def test_a_stored_document_uri_gives_back_its_corpus_id():
    assert doc_id_of(doc_uri("scifact", "4983")) == "4983"
    assert doc_id_of("file:///elsewhere.md") is None


def test_federation_check_fails_a_layout_beyond_the_tolerance():
    results = {"fts": {"one": _row(0.684), "even3": _row(0.683), "even10": _row(0.670)}}
    verdicts = {c["layout"]: c["ok"] for c in federation_checks(results)}
    assert verdicts == {"even3": True, "even10": False}


def test_anchor_check_compares_one_database_vector_search_with_the_published_figure():
    assert anchor_check({"vector": {"one": _row(0.6401)}})["ok"] is True
    assert anchor_check({"vector": {"one": _row(0.6301)}})["ok"] is False


def test_replace_section_rewrites_only_the_quality_section():
    document = "# Benchmarks\n\n## Ingest\nfast\n\n## Quality\nold table\n\n## Search\nquick\n"
    updated = replace_section(document, "## Quality\n\nnew table\n")
    assert updated == "# Benchmarks\n\n## Ingest\nfast\n\n## Quality\n\nnew table\n\n## Search\nquick\n"


def test_replace_section_appends_when_the_section_is_absent():
    assert replace_section("# Benchmarks\n", "## Quality\nx\n") == "# Benchmarks\n\n## Quality\nx\n"


def test_exact_rankings_rank_each_document_at_its_best_chunk():

    chunks = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    owners = ["a", "b", "a"]
    runs = exact_rankings(["q"], np.array([[0.0, 1.0]]), chunks, owners)
    assert runs == {"q": ["a", "b"]}
