"""HaikuRAG's public face (and its per-database object's) is typed: each public method and property says what it returns, never ``Any``."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator

import pytest
from PIL.Image import Image

import haiku.core.store as store_module
import haiku.rag.client._client as client_module
import haiku.rag.client._database as database_module
from haiku.core.store import StoreInfo
from haiku.rag.client import Database, HaikuRAG
from haiku.rag.rerankers import Reranker

# _client.py imports these for annotations only (they load LanceDB, or PIL); the test supplies them.
_NAMESPACE = {
    **vars(client_module),
    **vars(database_module),
    **{name: getattr(store_module, name) for name in store_module.__all__ if name != "STORE_SCHEMA_VERSION"},
    "Reranker": Reranker,
    "Image": Image,
}


def _public_face() -> Iterator[tuple[str, Callable[..., object]]]:
    for prefix, cls in (("", HaikuRAG), ("database().", Database)):
        for name, member in inspect.getmembers(cls):
            if name.startswith("_") and name not in ("__aenter__", "__aexit__"):
                continue
            if isinstance(member, property):
                assert member.fget is not None
                yield prefix + name, member.fget
            elif callable(member):
                yield prefix + name, getattr(member, "__func__", member)


def _mentions_any(hint: object) -> bool:
    return hint is typing.Any or any(_mentions_any(arg) for arg in typing.get_args(hint))


def test_the_public_face_has_methods_to_check():
    names = {name for name, _ in _public_face()}
    assert {"search", "convert", "database", "scope", "database().info", "database().history"} <= names
    assert {"database().create_tag", "database().list_tags"} <= names


@pytest.mark.parametrize("name,member", list(_public_face()), ids=[name for name, _ in _public_face()])
def test_a_public_method_of_haikurag_declares_its_return_type_without_any(name, member):
    hints = typing.get_type_hints(member, globalns=_NAMESPACE)
    assert "return" in hints, f"HaikuRAG.{name} has no return annotation"
    assert not _mentions_any(hints["return"]), f"HaikuRAG.{name} returns {hints['return']}"


async def test_info_answers_exactly_the_keys_store_info_declares(two_db):
    async with HaikuRAG(config=two_db, sources=["papers"]) as client:
        info = await client.database().info()
    # The store's report, and what the client adds to it (where it is configured, package versions).
    assert set(info.as_dict()) == set(typing.get_type_hints(StoreInfo)) | {"configured_location", "packages"}
    assert set(info.fts_index) <= set(typing.get_type_hints(store_module.reports.IndexState))
