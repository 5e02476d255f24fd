"""The ``manual`` source of a database: the documents added by hand (docs/ingester.md, "Adding documents").

Every ingested database has one, beside its configured sources, under the id
``manual``. Sweeps never list it, so no sync deletes its documents; only
``haiku-ingester delete`` does. It gives the pipeline the same view of a
document as a folder source gives of a file:

- ``file://`` uris name a file anywhere (outside the database's source roots);
  its revision is its modification time and size, as in a folder;
- ``http(s)://`` and ``text://DATABASE/KEY`` uris name the bytes ``add`` kept in
  the data directory (``spool``); their revision is their content hash.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path
from typing import Any

from haiku.core.config import DEFAULT_DATABASE_NAME, AppConfig, FsSourceConfig, RetryConfig
from haiku.core.errors import database_label
from haiku.ingester.errors import MissingFileError
from haiku.ingester.manual.spool import Spool
from haiku.ingester.sources.files import FileFacts, inspect_file, read_bytes, revision_of
from haiku.ingester.sources.fs import FileEntry, path_of_uri

MANUAL_SOURCE_ID = "manual"
# The size limit of a document added by hand: a source's max_file_size default.
MAX_FILE_SIZE: int = FsSourceConfig.model_fields["max_file_size"].default


@dataclasses.dataclass(frozen=True)
class ManualSettings:
    """What the pipeline reads of a source's configuration."""

    max_file_size: int = MAX_FILE_SIZE
    watch: bool = False


class ManualSource:
    """The documents added by hand to one database."""

    def __init__(
        self, database: str, spool: Spool, retry: RetryConfig, *, max_file_size: int = MAX_FILE_SIZE
    ) -> None:
        self.database = database
        self.id = MANUAL_SOURCE_ID
        self.spool = spool
        self.retry = retry
        self.config = ManualSettings(max_file_size=max_file_size)

    def path_for(self, uri: str) -> Path:
        if uri.startswith("file://"):
            return path_of_uri(uri)
        kept = self.spool.latest(self.database, uri)
        return kept if kept is not None else self.spool.folder(self.database, uri) / "(no bytes kept)"

    def check_link(self, path: Path) -> None:
        """A file named by hand is read wherever its link points: the user chose it."""

    def inspect(self, path: Path, *, max_file_size: int) -> FileFacts:
        if path.name == "(no bytes kept)":
            raise MissingFileError(
                f"{path.parent}: the bytes of this document are no longer kept; add it again"
            )
        facts = inspect_file(path, max_file_size=max_file_size)
        if self.spool.root in path.parents:
            return dataclasses.replace(facts, revision=Spool.revision_of(path))
        return facts

    def read(self, facts: FileFacts, *, max_file_size: int) -> bytes:
        return read_bytes(facts, max_file_size=max_file_size)

    def entry_for(self, path: Path) -> FileEntry | None:
        """The file or kept bytes to convert again (re-processing); None when gone (a page or text's bytes
        are kept only until their job ends: add it again)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        revision = Spool.revision_of(path) if self.spool.root in path.parents else revision_of(st)
        return FileEntry(path=path, uri=path.as_uri(), revision=revision)

    def present(self, path: Path) -> bool:
        """A document added by hand goes only when deleted by hand, whatever its file does."""
        return False

    def given(self, uri: str) -> tuple[str | None, dict[str, Any]]:
        """The title and metadata ``add`` was given for this document."""
        fields = self.spool.fields(self.database, uri)
        return (fields.title, dict(fields.metadata)) if fields is not None else (None, {})

    def label(self) -> str:
        return f"source {self.id} of {database_label(self.database)}"

    def root_problem(self) -> str | None:
        return None


def manual_source(config: AppConfig, database: str) -> ManualSource:
    return ManualSource(database, Spool(config.data_dir), config.ingester.workers.retry)


def given_fields(source: Any, uri: str) -> tuple[str | None, dict[str, Any]]:
    """The title and metadata given by hand for a document (none for a configured source's files)."""
    return source.given(uri) if isinstance(source, ManualSource) else (None, {})


def manual_source_ids(config: AppConfig) -> set[tuple[str, str]]:
    """``(database, "manual")`` for every database ``add`` may write."""
    names = set(config.ingester.databases) | set(config.lancedb.databases) | {DEFAULT_DATABASE_NAME}
    return {(name, MANUAL_SOURCE_ID) for name in names}
