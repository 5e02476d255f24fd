"""The federating client: one object over one database or a configured set (docs/client.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import haiku.rag.client._context as _context
import haiku.rag.client._coverage as _coverage
import haiku.rag.client._lookups as _lookups
import haiku.rag.client._pictures as _pictures
import haiku.rag.client._search as _search
from haiku.core.config import AppConfig, load_config
from haiku.core.convert.asynchronous import AsyncFileConverter
from haiku.core.convert.document import ConvertedChunk, ReadDocument
from haiku.core.malloc_arenas import limit_malloc_arenas
from haiku.core.models import Chunk, Document, DocumentItem, SearchResult, SearchType
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.rag.client._database import Database
from haiku.rag.client._federation import Federation, Reach
from haiku.rag.client._search import SearchResults

if TYPE_CHECKING:
    from PIL.Image import Image

    from haiku.core.store import Store


@dataclass(frozen=True)
class _Resolved:
    """A client over an already resolved scope; with ``federation``, one lent by that federation's owner."""

    scope: DatabaseScope
    federation: Federation | None = None


class HaikuRAG:
    """Search, list and look up documents across the databases a configuration names.

    ``async with HaikuRAG(config=config) as client`` covers every configured
    database and opens each on first use; ``sources=[…]`` narrows the coverage;
    ``db_path=…`` covers one local database named by its stem. The databases,
    once entered, are a ``Federation`` (``_federation``); this class is the
    public face over it (docs/client.md).
    """

    def __init__(
        self,
        db_path: str | Path | None = None,
        config: AppConfig | None = None,
        *,
        sources: Sequence[str] | None = None,
        create: bool = False,
        read_only: bool = False,
        tag: str | None = None,
        skip_validation: bool = False,
        _resolved: _Resolved | None = None,
    ) -> None:
        _coverage.check_constructor(db_path, sources, create, tag)
        self._config = config if config is not None else load_config()
        self._db_path = db_path
        self._sources = None if sources is None else tuple(sources)
        self._create = create
        self._read_only = read_only
        self._tag = tag
        self._skip_validation = skip_validation
        self._base_scope: DatabaseScope | None = None if _resolved is None else _resolved.scope
        self._effective_scope: DatabaseScope | None = None
        self._federation: Federation | None = None
        self._borrowed: dict[str, HaikuRAG] = {}
        self._entered = False
        self._lent = _resolved is not None and _resolved.federation is not None
        if _resolved is not None and _resolved.federation is not None:
            self._effective_scope = _resolved.scope
            self._federation = _resolved.federation
            self._entered = True
        self._files: AsyncFileConverter | None = None

    @classmethod
    def from_scope(
        cls,
        scope: DatabaseScope,
        config: AppConfig | None = None,
        *,
        create: bool = False,
        read_only: bool = False,
        tag: str | None = None,
        skip_validation: bool = False,
    ) -> HaikuRAG:
        """A client over an already resolved scope (how the CLI hands down --db-name / --db)."""
        return cls(
            config=config,
            create=create,
            read_only=read_only,
            tag=tag,
            skip_validation=skip_validation,
            _resolved=_Resolved(scope),
        )

    # --- coverage, known before entering ---------------------------------------------

    def _resolve(self) -> DatabaseScope:
        """Resolution happens once; entering again reuses it."""
        if self._base_scope is None:
            self._base_scope = _coverage.resolve_coverage(self._config, self._db_path, self._sources)
        return self._base_scope

    def _scope(self) -> DatabaseScope:
        return self._effective_scope if self._effective_scope is not None else self._resolve()

    @property
    def config(self) -> AppConfig:
        return self._config

    @property
    def scope(self) -> DatabaseScope:
        """The databases this client covers (at its tag, once entered)."""
        return self._scope()

    @property
    def covers_multiple(self) -> bool:
        return self._scope().covers_multiple

    @property
    def source_names(self) -> tuple[str, ...]:
        """Covered names in order; ``()`` for the unnamed legacy ``lancedb.uri`` database."""
        return tuple(name for name in self._scope().names if name is not None)

    @property
    def source(self) -> str | None:
        """The one database's name; None on a set, for the legacy database, and before entering."""
        if not self._entered or self.covers_multiple:
            return None
        return self._scope().databases[0].name

    @property
    def location(self) -> Path | str | None:
        scope = self._scope()
        return None if scope.covers_multiple else scope.databases[0].location

    @property
    def is_read_only(self) -> bool:
        scope = self._scope()
        tagged = self._tag is not None or (not scope.covers_multiple and scope.databases[0].tag is not None)
        return self._read_only or tagged

    @property
    def is_closed(self) -> bool:
        return self._federation is not None and self._federation.closed

    @property
    def store(self) -> Store:
        """The open store of a single-database client; a set has none."""
        if self.covers_multiple:
            raise AttributeError(
                f"store exists on a single-database client, and this client covers "
                f"{', '.join(self.source_names)}; use reader_for(name).store"
            )
        return self._open().store(self._scope().databases[0])

    def __repr__(self) -> str:
        state = "closed" if self.is_closed else ("open" if self._entered else "new")
        return f"<HaikuRAG {list(self._scope().names)!r} {state}>"

    # --- lifetime ------------------------------------------------------------------------

    async def __aenter__(self) -> HaikuRAG:
        if self._lent or (self._entered and not self.is_closed):
            return self
        self._entered = False
        scope = self._resolve()
        if self._create:
            _coverage.refuse_create_on_set(scope)
        scope = _coverage.apply_tag(scope, self._tag)
        self._effective_scope = scope
        limit_malloc_arenas()  # a search over many databases: docs/storage.md, "Memory"
        self._federation = Federation(
            self._config,
            scope,
            read_only=self._read_only or self._tag is not None,
            create=self._create,
            skip_validation=self._skip_validation,
        )
        self._borrowed = {}
        if not scope.covers_multiple:
            # A client covering one database opens it on enter (docs/storage.md).
            await self._federation.members(scope.databases)
        self._entered = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every database this client opened; a borrowed client closes nothing."""
        if self._lent or self._federation is None:
            return
        await self._federation.close()

    def _reach(self) -> Reach:
        return Reach(self._config, self._scope(), self._open)

    def _open(self) -> Federation:
        federation = self._federation
        if federation is None or not self._entered:
            raise RuntimeError("the client is not open; use it as `async with HaikuRAG(...) as client`")
        if federation.closed:
            raise RuntimeError("the client is closed")
        return federation

    # --- borrowed clients: the one rule that turns a selection into clients ---------------

    def check_sources(self, sources: Sequence[str] | None) -> list[str] | None:
        """Validate a selection by name, opening nothing; deduplicated names, or None for all."""
        if sources is None:
            return None
        return _coverage.selected_names(sources, self.source_names)

    def _borrow(self, federation: Federation, ref: DatabaseRef) -> HaikuRAG:
        name = ref.name
        assert name is not None
        client = self._borrowed.get(name)
        if client is None:
            resolved = _Resolved(DatabaseScope((ref,)), federation)
            client = HaikuRAG(config=self._config, read_only=self._read_only, _resolved=resolved)
            self._borrowed[name] = client
        return client

    async def clients_for(self, names: Sequence[str]) -> list[HaikuRAG]:
        """Borrowed clients for ``names`` in the order given, opening any not yet open together."""
        wanted = self.check_sources(names) or []
        federation = self._open()
        if not self.covers_multiple:
            return [self] if wanted else []
        refs = [_coverage.ref_named(self._scope(), name) for name in wanted]
        await federation.opened.ensure(refs)
        return [self._borrow(federation, ref) for ref in refs]

    async def reader_for(self, name: str | None) -> HaikuRAG | None:
        """The client reading ``name``: borrowed on a set, this client on one database."""
        if name is None:
            self._open()
            return None if self.covers_multiple else self
        return (await self.clients_for([name]))[0]

    async def clients_covering(self, sources: Sequence[str] | None = None) -> list[HaikuRAG]:
        """Every covered client for None, none for [], else those named."""
        if sources is None:
            self._open()
            if not self.covers_multiple:
                return [self]
            return await self.clients_for(self.source_names)
        return await self.clients_for(sources)

    # --- reading: each call fans out over the federation ------------------------------------

    async def search(
        self,
        query: str,
        limit: int | None = None,
        search_type: SearchType | None = None,
        filter: str | None = None,
        sources: Sequence[str] | None = None,
    ) -> SearchResults:
        """Search the selection and fuse the candidates into one ranking (docs/fusion.md).

        A list of results; its ``skipped`` names the databases left out under
        ``search.on_unavailable: skip``, each with why (docs/client.md).
        """
        return await _search.search(
            self._reach(), query, limit=limit, search_type=search_type, filter=filter, sources=sources
        )

    async def search_by_image(
        self,
        image: bytes | str | Path,
        limit: int | None = None,
        sources: Sequence[str] | None = None,
    ) -> SearchResults:
        """Search the selection's stored pictures with an image (its bytes, or its file's path).

        Needs a multimodal embedder (docs/pictures.md, "Image queries"): the
        image is embedded once, each database answers with the chunks holding
        its nearest pictures (each result's ``picture_ref``), fused like a
        vector query; no full text, no reranker. The results'
        ``without_pictures`` names each database that holds no picture vector.
        """
        from haiku.rag.client._image_search import search_by_image

        return await search_by_image(self._reach(), image, limit=limit, sources=sources)

    async def expand_context(self, results: Sequence[SearchResult]) -> list[SearchResult]:
        """Grow each result with its neighbouring chunks, through the database it came from."""
        return await _context.expand_context(self._reach(), results)

    async def list_documents(
        self,
        limit: int | None = None,
        offset: int | None = None,
        *,
        sources: Sequence[str] | None = None,
        filter: str | None = None,
        include_content: bool = False,
    ) -> list[Document]:
        """Documents of the selection by creation time, each with its ``source`` (docs/client.md)."""
        return await _lookups.list_documents(
            self._reach(),
            limit=limit,
            offset=offset,
            filter=filter,
            include_content=include_content,
            sources=sources,
        )

    async def count_documents(self, filter: str | None = None, sources: Sequence[str] | None = None) -> int:
        return await _lookups.count_documents(self._reach(), filter=filter, sources=sources)

    async def count_chunks(self, sources: Sequence[str] | None = None) -> int:
        """Chunks stored in the selected databases (all covered ones by default)."""
        return await _lookups.count_chunks(self._reach(), sources=sources)

    async def get_document_by_id(self, document_id: str, source: str | None = None) -> Document | None:
        return await _lookups.first_holder(self._reach(), "get_document_by_id", document_id, source)

    async def get_document_by_uri(self, uri: str, source: str | None = None) -> Document | None:
        return await _lookups.first_holder(self._reach(), "get_document_by_uri", uri, source)

    async def get_chunk_by_id(self, chunk_id: str, source: str | None = None) -> Chunk | None:
        return await _lookups.first_holder(self._reach(), "get_chunk_by_id", chunk_id, source)

    async def get_chunks(self, document_id: str, source: str | None = None) -> list[Chunk]:
        """The chunks of a document, in order, from the first database holding it."""
        return await _lookups.chunks_of(self._reach(), document_id, source)

    async def chunk_counts(self, document_ids: Sequence[str], source: str | None = None) -> dict[str, int]:
        """How many chunks each document has, in one read per database (ids it lacks are left out)."""
        return await _lookups.chunk_counts(self._reach(), document_ids, source)

    async def databases_holding(self, document_id: str) -> list[str]:
        """The covered databases holding a document with this id, in configured order.

        Ids are unique within a database only, so there may be several
        (docs/client.md#listing-and-lookups).
        """
        return await _lookups.holders(self._reach(), document_id)

    async def databases_holding_chunk(self, chunk_id: str) -> list[str]:
        """The covered databases holding a chunk with this id, in configured order (``visualize``
        over a set draws from the one holder)."""
        return await _lookups.holders(self._reach(), chunk_id, "get_chunk_by_id")

    # --- structure, pictures and pages (docs/client.md#pictures-and-pages) -----------------

    async def get_document_items(self, document_id: str, source: str | None = None) -> list[DocumentItem]:
        """The document's items (headings, paragraphs, tables, pictures…) in document order, from
        ``source`` or the first database holding it; ``NotFoundError`` when none does."""
        return await _pictures.document_items(self._reach(), document_id, source)

    async def get_picture_bytes(self, document_id: str, picture_ref: str, source: str | None = None) -> bytes:
        """The PNG of one picture (its ``self_ref``, e.g. ``#/pictures/0``); ``source`` is
        required on a client covering several databases."""
        return await _pictures.picture_bytes(self._reach(), document_id, picture_ref, source)

    async def visualize_chunk(self, chunk_id: str, source: str | None = None) -> list[Image]:
        """Every page the chunk touches with its boxes drawn (PIL images, ``info["page"]`` set);
        ``source`` is required on a client covering several databases."""
        return await _pictures.visualize_chunk(self._reach(), chunk_id, source)

    # --- one database, and conversion (docs/client.md, "One-database operations", "Conversion")

    def database(self, name: str | None = None) -> Database:
        """One covered database's lifecycle verbs (vacuum, migrate, tags, history, info…);
        ``name`` is required on a client covering several databases."""
        return Database(self._reach(), name)

    # Conversion touches no database: any client, open or not, converts off the event loop.
    async def convert(self, path: str | Path) -> ReadDocument:
        """``AsyncFileConverter.convert`` under this client's configuration."""
        return await self._converter().convert(path)

    async def chunk(self, document: ReadDocument) -> list[ConvertedChunk]:
        """``AsyncFileConverter.chunk`` under this client's configuration."""
        return await self._converter().chunk(document)

    async def generate_title(self, document: ReadDocument) -> str:
        """``AsyncFileConverter.generate_title`` under this client's configuration."""
        return await self._converter().generate_title(document)

    def _converter(self) -> AsyncFileConverter:
        if self._files is None:
            self._files = AsyncFileConverter(self._config)
        return self._files
