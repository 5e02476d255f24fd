"""Picture vectors and image queries in one database, and the multimodal embedder (docs/pictures.md).

The multimodal endpoint is ``MultimodalServer``, a scripted stand-in on
127.0.0.1 (no multimodal embedding model can run here); the databases are
real LanceDB directories.
"""

from __future__ import annotations

import base64
import warnings

import numpy as np
import pytest

from haiku.core.embedders import EmbedderIdentity, check_identity_on_open, get_embedder
from haiku.core.errors import ConfigMismatchError, ImageQueryError
from haiku.core.models import Chunk, Document, DocumentItem, DocumentStructure
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store, current_schema_version
from haiku.rag.cli._hints import error_text
from multimodal_server import DIM, MODEL, MultimodalServer, image_vector, multimodal_embeddings, text_vector
from support import as_schema_version, solid_png

RED, BLUE, GREEN = solid_png((255, 0, 0)), solid_png((0, 0, 255)), solid_png((0, 160, 0))
TEXT_ONLY = EmbedderIdentity("openai", MODEL, DIM)
MULTIMODAL = EmbedderIdentity("openai-multimodal", MODEL, DIM, multimodal=True)


@pytest.fixture(scope="module")
def endpoint():
    server = MultimodalServer()
    yield server
    server.close()


@pytest.fixture
def mm_config(db_config, endpoint):
    return db_config("wiki", embeddings=multimodal_embeddings(endpoint.base_url))


async def _open(config, **options) -> Store:
    return await Store.open(DatabaseScope.resolve(config).databases[0], config, **options)


@pytest.fixture
async def store(mm_config):
    """An empty writable database of the multimodal embedder."""
    opened = await _open(mm_config, create=True)
    yield opened
    await opened.close()


def _structure(pictures: dict[str, bytes], *, vectors: bool = True) -> DocumentStructure:
    items = [DocumentItem(self_ref="#/texts/0", label="text", order=0, text="Herons nest in colonies.")]
    for i, ref in enumerate(pictures, start=1):
        items.append(DocumentItem(self_ref=ref, label="picture", order=i, has_image=True))
    return DocumentStructure(
        docling_document=b"x",
        docling_version="test",
        items=items,
        images=dict(pictures),
        image_vectors={ref: image_vector(png) for ref, png in pictures.items()} if vectors else {},
    )


async def _write(store: Store, uri: str, pictures: dict[str, bytes], *, vectors: bool = True) -> Document:
    refs = list(pictures)
    chunks = [Chunk(content="Herons nest in colonies.", order=0, item_refs=["#/texts/0"])]
    chunks += [Chunk(content=f"Figure {i}", order=i, item_refs=[ref]) for i, ref in enumerate(refs, start=1)]
    document = Document(uri=uri, title=uri, content="Herons")
    [stored] = await store.writer().documents.upsert_documents(
        [(document, chunks, [text_vector(c.content) for c in chunks], _structure(pictures, vectors=vectors))]
    )
    return stored


# --- the identity --------------------------------------------------------------------------


def test_a_multimodal_identity_is_recorded_as_such_and_an_older_record_reads_as_text_only():
    assert MULTIMODAL.to_dict()["multimodal"] is True
    assert EmbedderIdentity.from_dict(MULTIMODAL.to_dict()) == MULTIMODAL
    assert "multimodal" not in TEXT_ONLY.to_dict()  # identities recorded before read the same
    assert EmbedderIdentity.from_dict({"provider": "openai", "model": MODEL, "vector_dim": DIM}) == TEXT_ONLY
    assert "multimodal" in MULTIMODAL.describe()


@pytest.mark.parametrize("recorded,configured", [(TEXT_ONLY, MULTIMODAL), (MULTIMODAL, TEXT_ONLY)])
def test_switching_between_text_only_and_multimodal_is_a_mismatch_even_read_only(recorded, configured):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never a mere drift warning
        with pytest.raises(ConfigMismatchError) as raised:
            check_identity_on_open(recorded, configured, read_only=True, name="wiki")
    message = str(raised.value)
    assert "database 'wiki'" in message and "rebuild the database" in message
    assert "haiku-ingester rebuild --db-name wiki" in error_text(raised.value)
    assert recorded.describe() in message and configured.describe() in message
    assert "text-only" in message and "multimodal" in message


# --- the embedder ---------------------------------------------------------------------------


async def test_the_multimodal_embedder_sends_images_as_chat_messages_and_texts_as_input(endpoint, mm_config):
    embedder = get_embedder(mm_config)
    assert embedder.identity == MULTIMODAL
    endpoint.requests.clear()
    vectors = await embedder.embed_images([RED, BLUE])
    assert np.allclose(vectors, [image_vector(RED), image_vector(BLUE)])
    assert np.allclose(await embedder.embed_documents(["herons"]), [text_vector("herons")])
    images = endpoint.image_requests()
    assert len(images) == 2
    first = images[0]
    assert first["model"] == MODEL and first["encoding_format"] == "float"
    [part] = first["messages"][0]["content"]
    assert part["type"] == "image_url"
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(part["image_url"]["url"].partition(",")[2]) in (RED, BLUE)
    assert {"model": MODEL, "input": ["herons"]} in endpoint.requests


async def test_an_image_prompt_rides_beside_each_image(endpoint, db_config):
    sections = multimodal_embeddings(endpoint.base_url)
    sections["model"]["image_prompt"] = "Represent the given image."
    embedder = get_embedder(db_config("wiki", embeddings=sections))
    endpoint.requests.clear()
    await embedder.embed_images([RED])
    [body] = endpoint.image_requests()
    assert body["messages"][0]["content"][1] == {"type": "text", "text": "Represent the given image."}


def test_an_image_query_that_is_no_picture_is_refused_naming_the_file(tmp_path):
    from haiku.core.embedders.multimodal import read_image

    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    with pytest.raises(ImageQueryError, match=r"image file .*notes\.txt is not a PNG"):
        read_image(notes)
    with pytest.raises(ImageQueryError, match=r"image file .*absent\.png does not exist"):
        read_image(tmp_path / "absent.png")
    assert read_image(RED) == RED


# --- the store -----------------------------------------------------------------------------


async def test_each_stored_picture_keeps_its_vector_and_an_image_finds_the_chunk_holding_it(store):
    assert store.schema_version == current_schema_version() == 4
    herons = await _write(store, "file:///herons.docx", {"#/pictures/0": RED, "#/pictures/1": BLUE})
    assert await store.count_picture_vectors() == 2
    [best, *_] = await store.picture_candidates(image_vector(BLUE), limit=2)
    assert best.document_id == herons.id and best.picture_ref == "#/pictures/1"
    assert best.content == "Figure 2" and best.source == "wiki"
    assert best.document_uri == "file:///herons.docx"  # enriched
    assert best.score == pytest.approx(1.0, abs=1e-4)


async def test_updates_and_deletes_carry_the_picture_vectors(store):
    doc = await _write(store, "file:///herons.docx", {"#/pictures/0": RED, "#/pictures/1": BLUE})
    await _write(store, "file:///herons.docx", {"#/pictures/0": GREEN})  # the document changed
    assert await store.count_picture_vectors() == 1
    [found] = await store.picture_candidates(image_vector(RED), limit=5)
    assert found.picture_ref == "#/pictures/0" and found.document_id == doc.id
    assert found.score < 0.9  # the red picture is gone: only the green one is left
    await store.writer().documents.delete_document(doc.id)
    assert await store.count_picture_vectors() == 0
    assert await store.picture_candidates(image_vector(GREEN), limit=5) == []


async def test_a_document_written_without_picture_vectors_has_none(store):
    await _write(store, "file:///herons.docx", {"#/pictures/0": RED}, vectors=False)
    assert await store.count_picture_vectors() == 0
    assert await store.picture_candidates(image_vector(RED), limit=3) == []


async def test_a_version_3_database_migrates_to_picture_vectors_and_resumes(mm_config):
    store = await _open(mm_config, create=True)
    await _write(store, "file:///herons.docx", {"#/pictures/0": RED}, vectors=False)
    location = store.handles.location.path
    await store.close()
    await as_schema_version(location, 3)
    store = await _open(mm_config, skip_validation=True)
    try:
        assert [v for v, _ in store.migrator.pending_migrations()] == [4]
        assert await store.count_picture_vectors() == 0  # no table yet: read as none
        assert await store.migrator.migrate() == [
            "4: stored pictures keep a vector from a multimodal embedder, for image queries"
        ]
        assert store.schema_version == 4 and store.handles.picture_vectors is not None
        assert len(await store.reads.list_documents()) == 1
        await _write(store, "file:///herons.docx", {"#/pictures/0": RED})
        assert await store.count_picture_vectors() == 1
    finally:
        await store.close()


async def test_replacing_picture_vectors_rewrites_them_in_one_commit(store):
    doc = await _write(store, "file:///herons.docx", {"#/pictures/0": RED, "#/pictures/1": BLUE})
    pictures = [entry async for batch in store.writer().pictures.iter_pictures() for entry in batch]
    assert sorted(key for key, _ in pictures) == [(doc.id, "#/pictures/0"), (doc.id, "#/pictures/1")]
    assert dict(pictures)[(doc.id, "#/pictures/1")] == BLUE
    swapped = {key: image_vector(GREEN) for key, _ in pictures}
    assert await store.writer().pictures.replace_picture_vectors(swapped, DIM) == 2
    [first, second] = await store.picture_candidates(image_vector(GREEN), limit=2)
    assert first.score == pytest.approx(1.0, abs=1e-4) and second.score == pytest.approx(1.0, abs=1e-4)
    assert await store.writer().pictures.replace_picture_vectors({}, DIM) == 0
    assert await store.count_picture_vectors() == 0
