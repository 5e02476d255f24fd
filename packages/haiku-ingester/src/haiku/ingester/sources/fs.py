"""A folder source (docs/ingester.md): which files it holds, their revisions and uris.

Patterns are matched against the path relative to the root, in POSIX form and
case-insensitively (``*.md`` takes ``README.MD``); ``*`` crosses ``/``, so
``*.md`` matches at any depth, and a pattern without ``/`` also matches the
file's own name. A directory matching an ignore pattern is not entered.

Files a source does not take are skipped and counted by reason
(``haiku.ingester.skips``): a name an ignore pattern matches, or that no include
pattern takes (``excluded``, or ``unsupported_type`` when the format table does
not know its extension), an extension not in the format table, an empty file,
one over ``max_file_size``. An ignored folder is not entered, so its files are
not counted.

Entries are whatever else matches the patterns and is not a directory: a FIFO, a
dangling link or a symlink loop under a matching name is listed too, so that it
ends as a dead job saying what is wrong instead of being skipped in silence.
So is a symlinked file whose target resolves outside the root: unless the
source sets ``follow_external_symlinks``, its job ends dead at once, before
the file is opened (``check_link``), and ``status`` lists it with the reason.
Symlinked folders are never entered.

Uris are ``file://`` uris of the path's bytes (``Path.as_uri``), so a name
that is not UTF-8 round-trips through ``path_for`` to the same file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlparse

from haiku.core.config import FsSourceConfig, RetryConfig
from haiku.core.convert.formats import format_of
from haiku.core.errors import database_label
from haiku.ingester.errors import SymlinkOutsideRootError
from haiku.ingester.skips import SkipReason, SkipTally
from haiku.ingester.sources.files import FileFacts, inspect_file, read_bytes, revision_of


@dataclass(frozen=True)
class FileEntry:
    path: Path
    uri: str
    revision: str


def path_of_uri(uri: str) -> Path:
    """The path a ``file://`` uri names; the uri quotes the name's bytes, so a name that is not UTF-8 decodes back to them."""
    return Path(os.fsdecode(unquote_to_bytes(urlparse(uri).path)))


def matches(rel: str, patterns: list[str]) -> bool:
    lowered = rel.lower()
    name = lowered.rsplit("/", 1)[-1]
    for pattern in patterns:
        pat = pattern.lower()
        if fnmatchcase(lowered, pat) or ("/" not in pat and fnmatchcase(name, pat)):
            return True
    return False


class FolderSource:
    """One configured ``fs`` source of one database."""

    def __init__(self, database: str, config: FsSourceConfig, default_retry: RetryConfig) -> None:
        self.database = database
        self.config = config
        self.id = config.source_id
        self.root = Path(config.root).expanduser().resolve()
        self.retry = config.retry or default_retry

    # --- names -------------------------------------------------------------------
    def uri_for(self, path: Path) -> str:
        return path.as_uri()

    def path_for(self, uri: str) -> Path:
        return path_of_uri(uri)

    def check_link(self, path: Path) -> None:
        """Raise ``SymlinkOutsideRootError`` for a path that resolves outside the root, unless allowed."""
        if not self.config.follow_external_symlinks and self._leaves_root(path):
            raise SymlinkOutsideRootError(path, self.id)

    def _leaves_root(self, path: Path) -> bool:
        try:
            target = Path(os.path.realpath(path))
        except (OSError, RuntimeError):
            return False  # a loop: inspecting the file says so
        return target != self.root and self.root not in target.parents

    def relative(self, path: Path) -> str | None:
        """The path relative to the root, or None when it lies outside."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def wants(self, path: Path) -> bool:
        """Whether a file at ``path`` belongs to this source by name (no stat)."""
        rel = self.relative(path)
        if rel is None or rel == ".":
            return False
        if self._ignored(rel) or any(self._ignored(parent) for parent in self._parents(rel)):
            return False
        return matches(rel, self.config.include_patterns)

    def _ignored(self, rel: str) -> bool:
        return matches(rel, self.config.ignore_patterns)

    @staticmethod
    def _parents(rel: str) -> Iterator[str]:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            yield "/".join(parts[:i])

    # --- listing -----------------------------------------------------------------
    def entry_for(self, path: Path) -> FileEntry | None:
        """The entry for one path if it is wanted, not a directory and not skipped; None otherwise."""
        judged = self.judge(path) if self.wants(path) else None
        return judged if isinstance(judged, FileEntry) else None

    def skip_of(self, path: Path) -> SkipReason | None:
        """Why a file the patterns take is skipped (empty, too large, unknown type), or None."""
        judged = self.judge(path) if self.wants(path) else None
        return judged if isinstance(judged, SkipReason) else None

    def judge(self, path: Path) -> FileEntry | SkipReason | None:
        """A path the patterns take: its entry, why it is skipped, or None (a directory, gone)."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            try:
                st = os.lstat(path)  # dangling link: listed, fails as a missing file
            except FileNotFoundError:
                return None
        except OSError:
            try:
                st = os.lstat(path)  # a symlink loop, or a name that cannot be stat'ed
            except OSError:
                return None
        if stat.S_ISDIR(st.st_mode):
            return None
        revision = revision_of(st)
        if not self.config.follow_external_symlinks and os.path.islink(path) and self._leaves_root(path):
            # A refused link has its own revision, so turning follow_external_symlinks
            # on or off enqueues it again (and a document it brought in is then removed).
            return FileEntry(path=path, uri=self.uri_for(path), revision=revision + "-external")
        if format_of(path.name) is None:
            return SkipReason.UNSUPPORTED_TYPE
        if stat.S_ISREG(st.st_mode):
            if st.st_size == 0:
                return SkipReason.EMPTY
            if st.st_size > self.config.max_file_size:
                return SkipReason.TOO_LARGE
        return FileEntry(path=path, uri=self.uri_for(path), revision=revision)

    # --- reading (the pipeline's view of a file, as of an object in sources.s3) ----
    def inspect(self, path: Path, *, max_file_size: int) -> FileFacts:
        return inspect_file(path, max_file_size=max_file_size)

    def read(self, facts: FileFacts, *, max_file_size: int) -> bytes:
        return read_bytes(facts, max_file_size=max_file_size)

    def present(self, path: Path) -> bool:
        """Whether the file is there and wanted (a delete job finds it back)."""
        return os.path.lexists(path) and self.entry_for(path) is not None

    def label(self) -> str:
        """``source ID of database 'NAME'``: how messages name this source."""
        return f"source {self.id} of {database_label(self.database)}"

    def root_problem(self) -> str | None:
        """Why the root cannot be listed (missing, not a folder, unreadable), or None. Creates nothing."""
        try:
            st = os.stat(self.root)
        except FileNotFoundError:
            return f"the root {self.root} does not exist"
        except OSError as exc:
            return f"the root {self.root} cannot be read ({exc.strerror or exc})"
        if not stat.S_ISDIR(st.st_mode):
            return f"the root {self.root} is not a directory"
        if not os.access(self.root, os.R_OK | os.X_OK):
            return f"the root {self.root} cannot be read (permission denied)"
        return None

    def list_files(self, skipped: SkipTally | None = None) -> dict[str, FileEntry]:
        """Every wanted file under the root, by uri; the files skipped are counted in ``skipped``.

        Raises OSError for a missing or unreadable root.
        """
        problem = self.root_problem()
        if problem is not None:
            raise OSError(problem)
        entries: dict[str, FileEntry] = {}
        self._walk(self.root, entries, top=True, skipped=skipped if skipped is not None else SkipTally())
        return entries

    def list_under(self, directory: Path) -> dict[str, FileEntry]:
        """Wanted files under a subdirectory (a folder that just appeared); never raises."""
        entries: dict[str, FileEntry] = {}
        rel = self.relative(directory)
        if rel is None or (rel != "." and self._ignored(rel)):
            return entries
        try:
            self._walk(directory, entries, top=False, skipped=SkipTally())
        except OSError:
            pass
        return entries

    def _walk(self, directory: Path, out: dict[str, FileEntry], *, top: bool, skipped: SkipTally) -> None:
        try:
            iterator = os.scandir(directory)
        except OSError:
            if top:
                raise
            return  # an unreadable subfolder: its files stay as they were
        with iterator:
            for item in iterator:
                path = Path(item.path)
                rel = self.relative(path)
                if rel is None:
                    continue
                try:
                    # Folders are entered only when really folders: a symlinked folder
                    # is not followed, which also keeps symlink loops out of the walk.
                    is_dir = item.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    if not self._ignored(rel):
                        self._walk(path, out, top=False, skipped=skipped)
                    continue
                if self._ignored(rel):
                    skipped.add(SkipReason.EXCLUDED, item.name)
                    continue
                if not matches(rel, self.config.include_patterns):
                    known = format_of(item.name) is not None
                    skipped.add(SkipReason.EXCLUDED if known else SkipReason.UNSUPPORTED_TYPE, item.name)
                    continue
                judged = self.judge(path)
                if isinstance(judged, SkipReason):
                    skipped.add(judged, item.name)
                elif judged is not None:
                    out[judged.uri] = judged
