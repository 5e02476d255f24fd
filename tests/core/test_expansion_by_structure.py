"""Context expansion grows a hit within the section, table or picture that holds it
(docs/client.md, "Context expansion"), and by neighbours where no structure is stored.

The expansion is a pure function of a document's chunks and items; these tests
give it a document of three sections (the second with a table and a picture)
laid out as the converter stores one: headings are items no chunk holds.
"""

from __future__ import annotations

from haiku.core.models import Box, Chunk, DocumentItem, SearchResult
from haiku.core.store.expansion import expand_results

DOC = "doc-1"


def _item(order: int, ref: str, label: str, text: str = "", *, parent: str | None = None, caption: str | None = None):
    return DocumentItem(
        document_id=DOC, self_ref=ref, label=label, order=order, page_numbers=[1 + order // 6],
        boxes=[Box(page=1 + order // 6, left=50, top=20.0 * order, right=300, bottom=20.0 * order + 15)],
        text=text, caption=caption, parent_ref=parent,
    )


ITEMS = [
    _item(0, "#/texts/0", "section_header", "Reed beds"),
    _item(1, "#/texts/1", "text", "reeds one"),
    _item(2, "#/texts/2", "text", "reeds two"),
    _item(3, "#/texts/3", "section_header", "Mudflats"),
    _item(4, "#/texts/4", "text", "mud one"),
    _item(5, "#/texts/5", "text", "mud two"),
    _item(6, "#/texts/6", "text", "mud three"),
    _item(7, "#/tables/0", "table", "Species Curlew 412", caption="Table 1: counts"),
    _item(8, "#/texts/7", "caption", "Table 1: counts", parent="#/tables/0"),
    _item(9, "#/pictures/0", "picture", "", caption="Figure 1: map"),
    _item(10, "#/texts/8", "caption", "Figure 1: map", parent="#/pictures/0"),
    _item(11, "#/texts/9", "section_header", "Counts"),
    _item(12, "#/texts/10", "text", "counts one"),
]
# (content, item refs): one chunk per paragraph; the table's rows make two chunks.
CHUNKS = [
    ("Reed beds filter nutrients.", ["#/texts/1"]),
    ("Cut one fifth each winter.", ["#/texts/2"]),
    ("Mudflats feed waders twice a day.", ["#/texts/4"]),
    ("Curlews probe deep with long bills.", ["#/texts/5"]),
    ("Bait digging disturbs the roosts.", ["#/texts/6"]),
    ("| Species | March |\n| Curlew | 412 |", ["#/tables/0"]),
    ("| Dunlin | 2310 |\nTable 1: counts", ["#/tables/0", "#/texts/7"]),
    ("Figure 1: map", ["#/pictures/0", "#/texts/8"]),
    ("The counts come from the spring survey.", ["#/texts/10"]),
]


def _chunks(with_refs: bool = True) -> list[Chunk]:
    return [
        Chunk(
            id=f"c{i}", document_id=DOC, order=i, content=text, page_numbers=[1 + i // 5],
            item_refs=refs if with_refs else [], boxes=[Box(page=1 + i // 5, left=50, top=30.0 * i, right=300, bottom=30.0 * i + 25)],
        )
        for i, (text, refs) in enumerate(CHUNKS)
    ]


def _hit(chunk: Chunk, score: float = 1.0) -> SearchResult:
    return SearchResult(content=chunk.content, score=score, chunk_id=chunk.id, document_id=DOC, source="guides")


def _expand(hits, chunks, max_chars=10_000, items=ITEMS):
    return expand_results(hits, {DOC: chunks}, max_chars, {DOC: items} if items is not None else None)


def test_a_hit_grows_to_its_whole_section_and_starts_with_its_heading():
    chunks = _chunks()
    [expanded] = _expand([_hit(chunks[3])], chunks)
    assert expanded.content.split("\n\n")[0] == "Mudflats"
    assert expanded.chunk_ids == ["c2", "c3", "c4", "c5", "c6", "c7"]
    assert "Reed beds filter" not in expanded.content and "spring survey" not in expanded.content


def test_a_section_expansion_stays_within_the_size_limit_and_keeps_the_hit():
    chunks = _chunks()
    limit = len("Mudflats") + len(chunks[3].content) + len(chunks[4].content) + 4
    [expanded] = _expand([_hit(chunks[3])], chunks, max_chars=limit)
    assert len(expanded.content) <= limit
    assert expanded.chunk_ids == ["c3", "c4"]
    assert expanded.content.startswith("Mudflats\n\n")


def test_a_hit_in_a_table_grows_to_the_whole_table_with_its_caption():
    chunks = _chunks()
    [expanded] = _expand([_hit(chunks[5])], chunks)
    assert expanded.chunk_ids == ["c5", "c6"]
    assert "Curlew | 412" in expanded.content and "Dunlin | 2310" in expanded.content
    assert "Table 1: counts" in expanded.content and "Bait digging" not in expanded.content
    assert expanded.content.startswith("Mudflats\n\n|")  # the section it lies in comes first


def test_a_table_whose_caption_no_chunk_holds_is_led_by_its_heading_and_caption():
    chunks = _chunks()
    chunks[6] = chunks[6].model_copy(update={"content": "| Dunlin | 2310 |", "item_refs": ["#/tables/0"]})
    [expanded] = _expand([_hit(chunks[5])], chunks)
    assert expanded.content.startswith("Mudflats\n\nTable 1: counts\n\n| Species")


def test_a_hit_on_a_caption_grows_to_its_picture_and_no_further():
    chunks = _chunks()
    [expanded] = _expand([_hit(chunks[7])], chunks)
    assert expanded.chunk_ids == ["c7"]


def test_a_hit_on_the_first_section_never_grows_into_the_next():
    chunks = _chunks()
    [expanded] = _expand([_hit(chunks[0])], chunks)
    assert expanded.chunk_ids == ["c0", "c1"]
    assert expanded.content == "Reed beds\n\nReed beds filter nutrients.\n\nCut one fifth each winter."


def test_two_hits_in_one_section_merge_into_one_result_with_the_better_score():
    chunks = _chunks()
    results = _expand([_hit(chunks[2], 0.5), _hit(chunks[4], 0.9), _hit(chunks[8], 0.7)], chunks)
    assert [r.chunk_id for r in results] == ["c4", "c8"]
    assert results[0].content.count("Mudflats\n\n") == 1


def test_inline_code_in_a_paragraph_grows_with_its_section_not_alone():
    items = [
        _item(0, "#/texts/0", "section_header", "Tuning"),
        _item(1, "#/texts/1", "text", "Raise", parent="#/groups/0"),
        _item(2, "#/texts/2", "code", "nprobes", parent="#/groups/0"),
        _item(3, "#/texts/3", "text", "until recall is acceptable.", parent="#/groups/0"),
        _item(4, "#/texts/4", "text", "Measure on real queries."),
    ]
    chunks = [
        Chunk(id="c0", document_id=DOC, content="Raise `nprobes` until recall is acceptable.",
              item_refs=["#/texts/1", "#/texts/2", "#/texts/3"]),
        Chunk(id="c1", document_id=DOC, order=1, content="Measure on real queries.", item_refs=["#/texts/4"]),
    ]
    [expanded] = _expand([_hit(chunks[0])], chunks, items=items)
    assert expanded.content.startswith("Tuning\n\n") and expanded.chunk_ids == ["c0", "c1"]


def test_an_expanded_result_carries_the_boxes_and_refs_of_every_chunk_it_covers():
    chunks = _chunks()
    [expanded] = _expand([_hit(chunks[0])], chunks)
    assert expanded.boxes == [*chunks[0].boxes, *chunks[1].boxes]
    assert expanded.item_refs == ["#/texts/1", "#/texts/2"]


def test_without_stored_items_a_hit_grows_with_its_neighbours_as_before():
    chunks = _chunks(with_refs=False)
    limit = sum(len(c.content) + 2 for c in chunks[2:5])
    [with_items] = _expand([_hit(chunks[3])], chunks, max_chars=limit)
    [without] = _expand([_hit(chunks[3])], chunks, max_chars=limit, items=None)
    assert with_items.chunk_ids == without.chunk_ids == ["c2", "c3", "c4"]
    assert without.content.startswith("Mudflats feed waders")
