"""Opening one database (docs/storage.md, "Nothing is created by accident" and "How failures are named").

``open_database`` does what ``Store.open`` promises:
1. find the database without creating anything; a missing one is created
   only with ``create=True`` (under the writer lock, settings last);
2. read the settings record (at the tag, for a tagged read) and refuse a
   database with pending migrations, before touching anything else;
3. check the recorded embedder against the configuration;
4. open every table, checked out at the tag for a tagged read (read-only).

Errors about a configured database name it: the kept types get a
``database 'NAME': `` prefix, anything else becomes ``SourceUnavailableError``
raised outside the handler so nothing (no path, no bucket) rides on its chain.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

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
    database_label,
    missing_at_path,
)
from haiku.core.logs import get_logger
from haiku.core.scope import DatabaseRef
from haiku.core.store._failures import timeout_message
from haiku.core.store._location import Location, connect, database_exists
from haiku.core.store.handles import Handles
from haiku.core.store.locks import WriterLock
from haiku.core.store.migrations import (
    MIGRATE_HINT,
    current_schema_version,
    migration_required_message,
    pending_migrations,
)
from haiku.core.store.schema import SETTINGS, TABLES, StoreSettings, data_table_schemas, tables_at

log = get_logger("haiku.core.store")

# Raised opening a configured database, these keep their type and gain the name.
_NAMED_KINDS = (MigrationRequiredError, ConfigMismatchError, ReadOnlyError, TagError, DatabaseLockedError)


@dataclass(frozen=True)
class OpenedDatabase:
    """What an open hands to the ``Store``: the loaded handles, the writer lock, whether it created it."""

    handles: Handles
    lock: WriterLock
    created: bool


def _prefix_with_name(error: Exception, name: str) -> None:
    prefix = database_label(name)
    message = str(error)
    if not message.startswith(prefix):
        error.args = (f"{prefix}: {message}", *error.args[1:])
        if isinstance(error, HaikuError) and error.problem is not None:
            error.problem = f"{prefix}: {error.problem}"


async def open_database(
    ref: DatabaseRef,
    config: AppConfig,
    *,
    create: bool,
    read_only: bool,
    tag: str | None,
    skip_validation: bool,
) -> OpenedDatabase:
    """Open one database (see the module docstring)."""
    if tag is not None and ref.tag is not None and tag != ref.tag:
        ref.at_tag(tag)  # raises AmbiguousDatabaseError naming both tags
    effective_tag = ref.tag if ref.tag is not None else tag
    if create and effective_tag is not None:
        raise ValueError("a database read at a tag is read-only and cannot be created; drop create=True")
    named = not ref.given and ref.name is not None
    failure: str | None = None
    opening = _open(
        ref, config, create=create, read_only=read_only, tag=effective_tag, skip_validation=skip_validation
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
        message = timeout_message(database_label(ref.name), "opened", deadline)
    else:
        message = f"{database_label(ref.name)} could not be opened: {failure}"
    raise SourceUnavailableError(message, database=ref.name)


async def database_reachable_and_exists(ref: DatabaseRef, config: AppConfig) -> bool:
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
        f"{database_label(ref.label)} could not be reached: {type(failed).__name__}", database=ref.name
    )


async def _open(
    ref: DatabaseRef, config: AppConfig, *, create: bool, read_only: bool, tag: str | None, skip_validation: bool
) -> OpenedDatabase:
    location = Location.of(ref)
    # A local database is judged on the file system before connecting, because
    # connecting creates the directory; a URI is listed through the connection.
    db = None if location.is_local else await connect(location, config)
    try:
        exists = await database_exists(location, config, db)
        if not exists:
            if not create:
                raise _missing_error(ref, location)
            if read_only:
                raise ReadOnlyError(f"{database_label(ref.name)} does not exist, and a read-only open cannot create it")
            if location.path is not None:
                location.path.mkdir(parents=True, exist_ok=True)
        if db is None:
            db = await connect(location, config)
    except BaseException:
        if db is not None:
            db.close()
        raise
    handles = Handles(ref, config, location, db, read_only=read_only, tag=tag)
    lock = WriterLock(ref, config.storage.writer_lock_timeout_s)
    try:
        created = False if exists else await _create(handles, lock)
        await _load(handles, skip_validation=skip_validation)
    except BaseException:
        handles.release()
        raise
    return OpenedDatabase(handles, lock, created)


def _missing_error(ref: DatabaseRef, location: Location) -> Exception:
    if not ref.given and ref.name is not None:
        return SourceUnavailableError.missing(ref.name)
    return missing_at_path(ref.name, location.display())


async def _create(handles: Handles, lock: WriterLock) -> bool:
    """Create the tables, settings last; ``False`` when another process created it meanwhile."""
    config, db = handles.config, handles.connection
    async with lock.hold("creating the database"):
        # Another process may have created it while this one waited for the lock.
        if await database_exists(handles.location, config, db):
            return False
        dim = config.embeddings.model.vector_dim
        for name, schema in data_table_schemas(dim).items():
            await db.create_table(name, schema=schema, exist_ok=True)
        settings = StoreSettings(
            schema_version=current_schema_version(),
            identity=EmbedderIdentity.from_config(config.embeddings.model),
            created_at=datetime.now(UTC),
        )
        # Settings last, with its row in the same commit: its presence marks a complete database.
        await db.create_table(SETTINGS, data=settings.to_table(), mode="create")
        log.info("store.created", database=handles.name, vector_dim=dim)
        return True


async def _load(handles: Handles, *, skip_validation: bool) -> None:
    # The tables open at once (each open is a LanceDB round trip); a failure
    # to open a data table is raised only after the settings were judged, so
    # a database needing migration still says so first. Only the tables of
    # the recorded schema version are kept (``tables_at``).
    db, tag, tables = handles.connection, handles.tag, handles.tables
    deferred: BaseException | None = None
    if tag is None:
        opened = await asyncio.gather(*(db.open_table(name) for name in TABLES), return_exceptions=True)
        outcomes = dict(zip(TABLES, opened, strict=True))
        settings_table = outcomes[SETTINGS]
        if isinstance(settings_table, BaseException):
            raise settings_table
        tables[SETTINGS] = settings_table
        handles.settings = await handles.read_settings()
        for name, outcome in outcomes.items():
            if name == SETTINGS:
                continue
            if name not in tables_at(handles.settings.schema_version):
                if not isinstance(outcome, BaseException):
                    outcome.close()
            elif isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                deferred = deferred or outcome
            else:
                tables[name] = outcome
    else:
        tables[SETTINGS] = await db.open_table(SETTINGS)
        await _check_tag_readable(handles, tag)
    stored = handles.settings.schema_version
    steps = pending_migrations(stored)
    if tag is not None:
        steps = [step for step in steps if not step.tag_readable]
    if steps and not skip_validation:
        message = migration_required_message(stored, steps)
        if tag is not None:
            message += (
                f" Tag '{tag}' was taken at schema version {stored}: restore the tag into a copy "
                "of the database and migrate the copy to read it."
            )
        raise MigrationRequiredError.hinted(message, MIGRATE_HINT)
    if stored > current_schema_version():
        log.warning(
            "store.schema_newer_than_code",
            database=handles.name,
            schema_version=stored,
            supported=current_schema_version(),
        )
    if not skip_validation:
        check_identity_on_open(
            handles.settings.identity,
            EmbedderIdentity.from_config(handles.config.embeddings.model),
            read_only=handles.read_only,
            name=handles.name,
        )
    if deferred is not None:
        raise deferred
    await handles.open_tables(tuple(n for n in tables_at(stored) if n != SETTINGS))
    handles.note_chunk_schema(await handles.chunks.schema())
    if handles.settings.rebuild_marker is not None:
        log.warning(
            "store.rebuild_interrupted",
            database=handles.name,
            marker=handles.settings.rebuild_marker,
            hint="run the rebuild again to complete it",
        )


async def _check_tag_readable(handles: Handles, tag: str) -> None:
    """Check every table of the tag's schema version carries it; opens them checked out at it.

    A tag taken before a schema step that added tables is carried by the
    tables of its own version only (``tables_at``), and is complete so.
    """
    settings = handles.tables[SETTINGS]
    live = tables_at((await handles.read_settings()).schema_version)
    opened = {name: await handles.connection.open_table(name) for name in live if name != SETTINGS}
    opened[SETTINGS] = settings
    try:
        carrying = [name for name in live if tag in await opened[name].tags.list()]
        if not carrying:
            raise TagError(f"Tag '{tag}' does not exist")
        if SETTINGS in carrying:
            await settings.checkout(tag)
            handles.settings = await handles.read_settings()
        expected = tables_at(handles.settings.schema_version) if SETTINGS in carrying else live
        missing = [t for t in expected if t not in carrying]
        if missing:
            raise TagError(f"Tag '{tag}' is partial (missing on {', '.join(missing)}) and cannot be read")
        for name in expected:
            if name != SETTINGS:
                await opened[name].checkout(tag)
                handles.tables[name] = opened.pop(name)
    finally:
        for name, table in opened.items():
            if name != SETTINGS:
                table.close()
