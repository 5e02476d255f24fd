"""``Store``: one open LanceDB database (docs/storage.md, docs/configuration.md).

Opening (``Store.open``):
1. find the database without creating anything; a missing one is created
   only with ``create=True`` (under the writer lock, settings last);
2. read the settings record (at the tag, for a tagged read) and refuse a
   database with pending migrations, before touching anything else;
3. check the recorded embedder against the configuration;
4. open every table, checked out at the tag for a tagged read (read-only).

Errors about a configured database name it (docs/storage.md): the kept types get a
``database 'NAME': `` prefix, anything else becomes ``SourceUnavailableError``
raised outside the handler so nothing (no path, no bucket) rides on its chain.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.embedders import EmbedderIdentity, check_identity_on_open
from haiku.core.errors import (
    AmbiguousDatabaseError,
    ConfigMismatchError,
    DatabaseLockedError,
    HaikuError,
    MigrationRequiredError,
    ReadOnlyError,
    SourceUnavailableError,
    TagError,
    missing_database,
)
from haiku.core.scope import DatabaseRef
from haiku.core.store._base import log
from haiku.core.store._failures import name_read_failures, timeout_message
from haiku.core.store._location import Location, connect, database_exists
from haiku.core.store.maintenance import CLOSE_VACUUM_LOCK_TIMEOUT_S, MaintenanceMixin
from haiku.core.store.migrations import current_schema_version, migration_required_message, pending_migrations
from haiku.core.store.schema import (
    CHUNKS,
    DOCUMENTS,
    SETTINGS,
    TABLES,
    StoreSettings,
    chunks_schema,
    documents_schema,
)
from haiku.core.store.search import SearchMixin
from haiku.core.store.writes import WritesMixin

# Raised opening a configured database, these keep their type and gain the name.
_NAMED_KINDS = (MigrationRequiredError, ConfigMismatchError, ReadOnlyError, TagError, DatabaseLockedError)


def _prefix_with_name(error: Exception, name: str) -> None:
    prefix = f"database '{name}'"
    message = str(error)
    if not message.startswith(prefix):
        error.args = (f"{prefix}: {message}", *error.args[1:])


# Reads failing inside LanceDB (a damaged or unreachable database) name the database, not its location.
@name_read_failures(
    "search",
    "vector_candidates",
    "fts_candidates",
    "hybrid_candidates",
    "enrich",
    "expand_context",
    "list_documents",
    "count_documents",
    "count_chunks",
    "count_orphan_chunks",
    "get_document_by_id",
    "get_document_by_uri",
    "get_documents_by_ids",
    "get_chunk_by_id",
    "get_chunks",
    "fts_statistics",
)
class Store(SearchMixin, WritesMixin, MaintenanceMixin):
    """One open database. Use ``await Store.open(ref, config)``; close with ``await store.close()``."""

    @classmethod
    async def open(
        cls,
        ref: DatabaseRef,
        config: AppConfig,
        *,
        create: bool = False,
        read_only: bool = False,
        tag: str | None = None,
        skip_validation: bool = False,
    ) -> Store:
        """Open one database (see the module docstring)."""
        if tag is not None and ref.tag is not None and tag != ref.tag:
            ref.at_tag(tag)  # raises AmbiguousDatabaseError naming both tags
        effective_tag = ref.tag if ref.tag is not None else tag
        if create and effective_tag is not None:
            raise ValueError("a database read at a tag is read-only and cannot be created; drop create=True")
        named = not ref.given and ref.name is not None
        failure: str | None = None
        opening = cls._open(
            ref,
            config,
            create=create,
            read_only=read_only,
            tag=effective_tag,
            skip_validation=skip_validation,
        )
        deadline = None if isinstance(ref.location, Path) else config.lancedb.object_storage_timeout_s
        try:
            return await (opening if deadline is None else asyncio.wait_for(opening, deadline))
        except TimeoutError:
            failure = "timeout"
        except _NAMED_KINDS as error:
            if named:
                _prefix_with_name(error, ref.name)  # type: ignore[arg-type]
            raise
        except (SourceUnavailableError, AmbiguousDatabaseError):
            raise
        except Exception as error:
            if not named:
                raise
            failure = type(error).__name__
            log.warning("store.open_failed", database=ref.name, error=failure)
        # Raised here, outside the handler: neither __cause__ nor __context__ is set.
        if failure == "timeout":
            message = timeout_message(cls._label(ref), "opened", deadline)
        else:
            message = f"database '{ref.name}' could not be opened: {failure}"
        raise SourceUnavailableError(message, database=ref.name)

    @classmethod
    async def _open(
        cls,
        ref: DatabaseRef,
        config: AppConfig,
        *,
        create: bool,
        read_only: bool,
        tag: str | None,
        skip_validation: bool,
    ) -> Store:
        location = Location.of(ref)
        # A local database is judged on the file system before connecting, because
        # connecting creates the directory; a URI is listed through the connection.
        db = None if location.is_local else await connect(location, config)
        try:
            exists = await database_exists(location, config, db)
            if not exists:
                if not create:
                    raise cls._missing_error(ref, location)
                if read_only:
                    raise ReadOnlyError(
                        f"{cls._label(ref)} does not exist, and a read-only open cannot create it"
                    )
                if location.path is not None:
                    location.path.mkdir(parents=True, exist_ok=True)
            if db is None:
                db = await connect(location, config)
        except BaseException:
            if db is not None:
                db.close()
            raise
        store = cls(ref, config, location, db, read_only=read_only, tag=tag)
        try:
            if not exists:
                await store._create()
            await store._load(skip_validation=skip_validation)
        except BaseException:
            await store._abandon()
            raise
        return store

    @staticmethod
    def _label(ref: DatabaseRef) -> str:
        return f"database '{ref.name}'" if ref.name is not None else "the database"

    @staticmethod
    def _missing_error(ref: DatabaseRef, location: Location) -> Exception:
        if not ref.given and ref.name is not None:
            return SourceUnavailableError.missing(ref.name)
        return FileNotFoundError(missing_database(ref.name, at=location.display()))

    @staticmethod
    async def exists(ref: DatabaseRef, config: AppConfig) -> bool:
        """Whether ``ref`` holds a haiku database; creates and opens nothing writable.

        A location that cannot be looked at raises ``SourceUnavailableError``
        naming the database and the kind of failure (LanceDB's own text carries
        the URI, bucket and endpoint).
        """
        failed: Exception | None = None
        try:
            return await database_exists(Location.of(ref), config)
        except HaikuError:
            raise
        except Exception as error:
            failed = error
        raise SourceUnavailableError(
            f"database '{ref.label}' could not be reached: {type(failed).__name__}", database=ref.name
        )

    # --- opening steps --------------------------------------------------------------
    async def _create(self) -> None:
        async with self._lock.hold("creating the database"):
            # Another process may have created it while this one waited for the lock.
            if await database_exists(self._location, self.config, self._db):
                return
            dim = self.config.embeddings.model.vector_dim
            await self._db.create_table(DOCUMENTS, schema=documents_schema(), exist_ok=True)
            await self._db.create_table(CHUNKS, schema=chunks_schema(dim), exist_ok=True)
            settings = StoreSettings(
                schema_version=current_schema_version(),
                identity=EmbedderIdentity.from_config(self.config.embeddings.model),
                created_at=datetime.now(UTC),
            )
            # Settings last, with its row in the same commit: its presence marks a complete database.
            await self._db.create_table(SETTINGS, data=settings.to_table(), mode="create")
            self.created = True
            log.info("store.created", database=self.name, vector_dim=dim)

    async def _load(self, *, skip_validation: bool) -> None:
        # The three tables open at once (each open is a LanceDB round trip); a
        # failure to open documents or chunks is raised only after the settings
        # were judged, so a database needing migration still says so first.
        deferred: BaseException | None = None
        if self.tag is None:
            opened = await asyncio.gather(*(self._db.open_table(name) for name in TABLES), return_exceptions=True)
            for name, outcome in zip(TABLES, opened, strict=True):
                if isinstance(outcome, BaseException):
                    if name == SETTINGS or not isinstance(outcome, Exception):
                        raise outcome
                    deferred = deferred or outcome
                else:
                    self._tables[name] = outcome
        else:
            self._tables[SETTINGS] = await self._db.open_table(SETTINGS)
            await self._check_tag_readable()
            await self._settings_table.checkout(self.tag)
        self._settings = await self._read_settings()
        stored = self._settings.schema_version
        steps = pending_migrations(stored)
        if steps and not skip_validation:
            message = migration_required_message(stored, steps)
            if self.tag is not None:
                message += (
                    f" Tag '{self.tag}' was taken at schema version {stored}: restore the tag into a copy "
                    "of the database and migrate the copy to read it."
                )
            raise MigrationRequiredError(message)
        if stored > current_schema_version():
            log.warning(
                "store.schema_newer_than_code",
                database=self.name,
                schema_version=stored,
                supported=current_schema_version(),
            )
        if not skip_validation:
            check_identity_on_open(
                self._settings.identity,
                EmbedderIdentity.from_config(self.config.embeddings.model),
                read_only=self.read_only,
                name=self.name,
            )
        if deferred is not None:
            raise deferred
        for name in (DOCUMENTS, CHUNKS):
            table = self._tables.get(name) or await self._db.open_table(name)
            if self.tag is not None:
                await table.checkout(self.tag)
            self._tables[name] = table
        self._note_chunk_schema(await self._chunks.schema())
        if self._settings.rebuild_marker is not None:
            log.warning(
                "store.rebuild_interrupted",
                database=self.name,
                marker=self._settings.rebuild_marker,
                hint="rerun `haiku-ingester rebuild` to complete it",
            )

    async def _check_tag_readable(self) -> None:
        assert self.tag is not None
        carrying: list[str] = []
        for name in TABLES:
            table = self._tables.get(name) or await self._db.open_table(name)
            self._tables.setdefault(name, table)
            if self.tag in await table.tags.list():
                carrying.append(name)
        if not carrying:
            raise TagError(f"Tag '{self.tag}' does not exist")
        if len(carrying) != len(TABLES):
            missing = [t for t in TABLES if t not in carrying]
            raise TagError(
                f"Tag '{self.tag}' is partial (missing on {', '.join(missing)}) and cannot be read"
            )

    # --- closing --------------------------------------------------------------------
    async def close(self) -> None:
        """Close; a store that wrote anything vacuums once first (``storage.auto_vacuum``). Idempotent."""
        if self._closed:
            return
        task, self._vacuum_task = self._vacuum_task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        if self._dirty and self.config.storage.auto_vacuum and not self.read_only:
            timeout = min(self.config.storage.writer_lock_timeout_s, CLOSE_VACUUM_LOCK_TIMEOUT_S)
            await self._auto_vacuum(lock_timeout_s=timeout)
        await self._abandon()

    async def _abandon(self) -> None:
        """Release every handle without any further write."""
        self._closed = True
        tables, self._tables = list(self._tables.values()), {}
        self._pinned_chunks = None
        for table in tables:
            try:
                table.close()
            except Exception:  # closing handles must not mask the real outcome
                pass
        try:
            self._db.close()
        except Exception:
            pass

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        at = f" at tag {self.tag!r}" if self.tag else ""
        mode = "read-only" if self.read_only else "writable"
        return f"<Store {self.name!r}{at} {mode}>"
