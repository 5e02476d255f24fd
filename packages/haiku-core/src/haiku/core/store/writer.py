"""``StoreWriter``: the document writes of one database, handed out by a writable store.

A ``Store`` publishes its reading parts as attributes (``reads``,
``structure``, ``tags``, ``indexes``, ``migrator``, ``report``…); the parts
that write documents and chunks sit behind ``store.writer()``, which a
read-only or tagged store refuses with ``ReadOnlyError``. The ingester holds
the writer; ``haiku-rag`` opens its stores read-only for documents and never
asks for one (docs/storage.md, "Parts and the writer").
"""

from __future__ import annotations

from dataclasses import dataclass

from haiku.core.store.orphans import Orphans
from haiku.core.store.picture_rebuild import PictureRebuild
from haiku.core.store.processing import ProcessingRecord
from haiku.core.store.rebuild import Rebuild
from haiku.core.store.writes import Writes


@dataclass(frozen=True)
class StoreWriter:
    """The writing parts: ``documents`` (upsert, load, metadata, delete), ``orphans``,
    ``rebuild`` (vectors, identity, marker), ``pictures`` (picture vectors), ``processing``."""

    documents: Writes
    orphans: Orphans
    rebuild: Rebuild
    pictures: PictureRebuild
    processing: ProcessingRecord
