"""Tags and history (docs/storage.md, "Tags" and "History").

A tag is one LanceDB tag of the same name on every table (documents, chunks,
document items, page images, settings), all taken under the writer lock so
they name one consistent state. A tag taken before schema version 3 is
carried by the tables of its version only (no structure tables) and is
complete so. A tag carried by only some tables is *partial*: it cannot be
read or restored, only deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from haiku.core.errors import TagError, UnknownTableError
from haiku.core.logs import get_logger
from haiku.core.models import as_utc
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.schema import (
    ADDED_IN_3,
    CHUNKS,
    DOCUMENT_ITEMS,
    DOCUMENTS,
    PAGE_IMAGES,
    PICTURE_VECTORS,
    PICTURE_VECTORS_SINCE,
    SETTINGS,
    STRUCTURE_TABLES_SINCE,
    TABLES,
    tables_at,
)

log = get_logger("haiku.core.store")

# Restore order: documents last, so a restored document row appears only once
# its chunks, items and page images are back.
RESTORE_ORDER = (CHUNKS, DOCUMENT_ITEMS, PAGE_IMAGES, SETTINGS, DOCUMENTS)


def tag_tables(carrying: Iterable[str]) -> tuple[str, ...]:
    """The tables a tag should be on: all of them, or those of the schema version before the
    first table added later that no table of the tag's is."""
    carrying = set(carrying)
    if PICTURE_VECTORS in carrying:
        return TABLES
    if carrying & set(ADDED_IN_3):
        return tables_at(PICTURE_VECTORS_SINCE - 1)
    return tables_at(STRUCTURE_TABLES_SINCE - 1)


@dataclass
class TagInfo:
    name: str
    versions: dict[str, int]  # table -> version, for the tables carrying it
    missing: list[str] = field(default_factory=list)  # tables not carrying it

    @property
    def complete(self) -> bool:
        return not self.missing


@dataclass
class HistoryEntry:
    version: int
    timestamp: datetime
    tags: list[str]


@dataclass(frozen=True, eq=False)
class History(Mapping[str, list[HistoryEntry]]):
    """Per table, versions newest first; ``notices`` say what could not be read (tags shown without).

    Reads as a mapping of table name to its entries.
    """

    tables: dict[str, list[HistoryEntry]]
    notices: list[str] = field(default_factory=list)

    def __getitem__(self, table: str) -> list[HistoryEntry]:
        return self.tables[table]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {
            name: [{"version": e.version, "timestamp": e.timestamp.isoformat(), "tags": e.tags} for e in rows]
            for name, rows in self.tables.items()
        }


def safety_tag_base(now: datetime | None = None) -> str:
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"before-restore-{moment:%Y%m%dT%H%M%SZ}"


class Tags:
    """The tags of one database (taken, listed, deleted, restored) and its version history."""

    def __init__(self, handles: Handles, gate: WriteGate) -> None:
        self.handles = handles
        self.gate = gate

    async def _tags_by_table(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for name, table in self.handles.tables.items():
            listing = await table.tags.list()
            out[name] = {tag: int(info["version"]) for tag, info in listing.items()}
        return out

    @staticmethod
    def _info_from(name: str, by_table: dict[str, dict[str, int]]) -> TagInfo | None:
        versions = {table: tags[name] for table, tags in by_table.items() if name in tags}
        if not versions:
            return None
        return TagInfo(name=name, versions=versions, missing=[t for t in tag_tables(versions) if t not in versions])

    async def tag_info(self, name: str) -> TagInfo | None:
        """The tag's versions per table, or ``None`` when no table carries it."""
        self.handles.require_open()
        return self._info_from(name, await self._tags_by_table())

    async def list_tags(self) -> list[TagInfo]:
        """Every tag by name, with its table versions and any tables missing it."""
        self.handles.require_open()
        by_table = await self._tags_by_table()
        names = sorted({tag for tags in by_table.values() for tag in tags})
        return [info for name in names if (info := self._info_from(name, by_table)) is not None]

    async def create_tag(self, name: str) -> TagInfo:
        """Tag the current version of every table with ``name``."""
        if not name or not name.strip():
            raise TagError("a tag name cannot be blank")
        async with self.gate.writing(f"creating tag '{name}'"):
            existing = await self.tag_info(name)
            if existing is not None:
                if existing.complete:
                    raise TagError(f"Tag '{name}' already exists")
                raise TagError(
                    f"Tag '{name}' is partial (missing on {', '.join(existing.missing)}); delete it first"
                )
            created: list[str] = []
            versions: dict[str, int] = {}
            failure: Exception | None = None
            try:
                for table_name, table in self.handles.tables.items():
                    version = await table.version()
                    await table.tags.create(name, version)
                    created.append(table_name)
                    versions[table_name] = version
            except Exception as exc:
                failure = exc
            if failure is not None:
                for table_name in created:
                    try:
                        await self.handles.tables[table_name].tags.delete(name)
                    except Exception as cleanup_error:  # reported, the original error wins
                        log.error(
                            "store.tag_cleanup_failed", database=self.handles.name, tag=name, error=str(cleanup_error)
                        )
                raise TagError(f"could not create tag '{name}': {failure}") from failure
        log.info("store.tag_created", database=self.handles.name, tag=name, versions=versions)
        return TagInfo(name=name, versions=versions)

    async def delete_tag(self, name: str) -> None:
        """Remove the tag from every table carrying it."""
        async with self.gate.writing(f"deleting tag '{name}'"):
            existing = await self.tag_info(name)
            if existing is None:
                raise TagError(f"Tag '{name}' does not exist")
            for table_name in existing.versions:
                await self.handles.tables[table_name].tags.delete(name)
        log.info("store.tag_deleted", database=self.handles.name, tag=name)

    async def _free_safety_tag(self) -> str:
        by_table = await self._tags_by_table()
        taken = {tag for tags in by_table.values() for tag in tags}
        base = safety_tag_base()
        candidate, suffix = base, 1
        while candidate in taken:
            suffix += 1
            candidate = f"{base}-{suffix}"
        return candidate

    async def restore_tag(self, name: str) -> str:
        """Make the tagged state the latest version of every table; returns the safety tag.

        A complete safety tag of the current state is created first (if that
        fails nothing changes). Tables are restored documents last; a failure
        rolls every restored table back to its pre-restore version. Restore
        never migrates.
        """
        async with self.gate.writing(f"restoring tag '{name}'"):
            existing = await self.tag_info(name)
            if existing is None:
                raise TagError(f"Tag '{name}' does not exist")
            if not existing.complete:
                raise TagError(
                    f"Tag '{name}' is partial (missing on {', '.join(existing.missing)}) and cannot be restored"
                )
            safety = await self._free_safety_tag()
            await self.create_tag(safety)
            before = {t: await table.version() for t, table in self.handles.tables.items()}
            restored: list[str] = []
            failure: Exception | None = None
            try:
                for table_name in (t for t in RESTORE_ORDER if t in existing.versions):
                    table = self.handles.tables[table_name]
                    await table.checkout(name)
                    restored.append(table_name)
                    await table.restore()
            except Exception as exc:
                failure = exc
            if failure is not None:
                rolled_back = await self._roll_back(restored, before)
                outcome = (
                    "every table was rolled back to its state before the restore"
                    if rolled_back
                    else "rolling back failed too, so the tables may be at different states; restore "
                    f"the safety tag '{safety}' to recover"
                )
                raise TagError(
                    f"restoring tag '{name}' failed ({type(failure).__name__}: {failure}); {outcome}. "
                    f"The safety tag '{safety}' holds the state before the restore"
                ) from failure
            handles = self.handles
            handles.settings = await handles.read_settings()
            handles.keep_tables_of(handles.settings.schema_version)
            handles.note_chunk_schema(await handles.chunks.schema())
            handles.pinned_chunks = None
        self.gate.written()
        log.info("store.tag_restored", database=self.handles.name, tag=name, safety_tag=safety)
        return safety

    async def _roll_back(self, tables: list[str], before: dict[str, int]) -> bool:
        ok = True
        for table_name in tables:
            table = self.handles.tables[table_name]
            try:
                await table.checkout_latest()
                if await table.version() != before[table_name]:
                    await table.checkout(before[table_name])
                    await table.restore()
                else:
                    await table.checkout_latest()
            except Exception as exc:
                ok = False
                log.error(
                    "store.restore_rollback_failed", database=self.handles.name, table=table_name, error=str(exc)
                )
        return ok

    async def history(self, table: str | None = None, limit: int | None = None) -> History:
        """Per table, versions newest first, each with the tags pointing at it.

        Unreadable tag annotations are logged, and the history comes back without
        them and with a notice saying so.
        """
        self.handles.require_open()
        if table is not None and table not in self.handles.tables:
            raise UnknownTableError.of(table, tuple(self.handles.tables))
        out: dict[str, list[HistoryEntry]] = {}
        notices: list[str] = []
        for table_name in [table] if table else sorted(self.handles.tables):
            handle = self.handles.tables[table_name]
            versions = await handle.list_versions()
            try:
                tags = await handle.tags.list()
            except Exception as exc:
                tags = {}
                notice = (
                    f"tags of table {table_name} could not be read ({type(exc).__name__}); shown without them"
                )
                notices.append(notice)
                log.warning(
                    "store.history_tags_unreadable", database=self.handles.name, table=table_name, error=str(exc)
                )
            by_version: dict[int, list[str]] = {}
            for tag, info in tags.items():
                by_version.setdefault(int(info["version"]), []).append(tag)
            entries = [
                HistoryEntry(
                    version=int(v["version"]),
                    timestamp=as_utc(v["timestamp"], naive_is_local=True),
                    tags=sorted(by_version.get(int(v["version"]), [])),
                )
                for v in versions
            ]
            entries.sort(key=lambda e: e.version, reverse=True)
            out[table_name] = entries[:limit] if limit is not None else entries
        return History(out, notices)
