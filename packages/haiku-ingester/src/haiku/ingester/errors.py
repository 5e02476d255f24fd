"""Every error the ingester raises on its own account (docs/ingester.md).

The CLI prints ``Error: <message>`` and exits 1 for these, like the core errors,
so each message names what it is about (database, source id, file) and says
what to do.

Job errors are split by what a retry could change: a ``PermanentJobError`` sends
its job straight to ``dead``; anything else is retried with backoff.
"""

from __future__ import annotations

import errno
from typing import ClassVar

from haiku.core import errors as core_errors
from haiku.core.errors import HaikuError, database_label
from haiku.ingester.skips import SkipReason

__all__ = [
    "BinaryContentError",
    "ContentMismatchError",
    "ConversionCrashedError",
    "ConversionError",
    "ConversionTimeoutError",
    "DiskFullError",
    "DuplicateSourceError",
    "EmptyFileError",
    "EmptyListingError",
    "EngineUnavailableError",
    "FileTooLargeError",
    "HttpEndpointError",
    "IngesterError",
    "MissingExtraError",
    "MissingFileError",
    "NotARegularFileError",
    "NothingToIngestError",
    "PermanentJobError",
    "QueueError",
    "ReloadRefusedError",
    "RootUnavailableError",
    "SkippedFileError",
    "SweepError",
    "SymlinkLoopError",
    "SymlinkOutsideRootError",
    "UnknownFileTypeError",
    "UnsupportedFileError",
    "skipped_error",
]


class IngesterError(HaikuError):
    """Base of the ingester's own errors."""


class DiskFullError(IngesterError):
    """A write (to a database or to the queue) found no space left: the ingester stops.

    Retrying each job until it goes dead would report written documents dead and
    spin while the disk stays full; stopping leaves every unfinished job queued
    (or claimed, requeued at the next start), so nothing acknowledged is lost.
    """

    def __init__(self, database: str | None) -> None:
        what = database_label(database) if database else "the job queue"
        super().__init__(
            f"{what}: no space left on device; the ingester stopped, and the unfinished jobs stay queued "
            "(nothing acknowledged is lost). Free space and run it again"
        )
        self.database = database


_DISK_FULL_TEXTS = ("no space left on device", "os error 28", "database or disk is full")


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether an error, or one it was raised from, says the disk is full (ENOSPC, SQLITE_FULL)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        if any(text in str(exc).lower() for text in _DISK_FULL_TEXTS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class DuplicateSourceError(IngesterError):
    """Two configured sources share an id, so their jobs and sync state would mix."""


class NothingToIngestError(IngesterError):
    """``run-batch`` found no database in ``ingester.databases``."""


class RootUnavailableError(IngesterError):
    """``run-batch``: a source's root is missing or unreadable, so nothing was started or created."""


class QueueError(IngesterError):
    """The job queue (SQLite) cannot be opened or used."""


class HttpEndpointError(IngesterError):
    """``ingester.http`` cannot serve as configured (its port taken, its token unreadable): ``serve`` does
    not start."""


class ReloadRefusedError(IngesterError):
    """A reload changed a section that only a restart can apply."""


class SweepError(IngesterError):
    """A sweep of one source failed (missing or unreadable root)."""

    def __init__(self, message: str, *, database: str, source_id: str) -> None:
        super().__init__(message)
        self.database = database
        self.source_id = source_id


class EmptyListingError(SweepError):
    """A root listed nothing while documents are known: deleting them all is refused."""


class MissingExtraError(IngesterError):
    """The configuration needs an optional extra that is not installed (the Ray engine, s3 sources)."""


class EngineUnavailableError(IngesterError):
    """The engine (a Ray cluster) cannot be reached: no fault of the job's file.

    The job goes back to the queue with its attempt uncounted; ``serve`` waits
    and tries again with back-off, ``run-batch`` stops and exits 1.
    """


class PermanentJobError(IngesterError):
    """A job failure that retrying cannot fix: the job goes dead at once."""


class SkippedFileError(PermanentJobError):
    """A file the ingester does not take, for one of the skip reasons (``haiku.ingester.skips``).

    Not a failure: its job ends ``skipped`` (never dead), the document an earlier
    version of the file left is removed, and the file is counted under ``reason``.
    """

    reason: ClassVar[SkipReason]


class UnsupportedFileError(PermanentJobError):
    """A file the ingester could take but does not here (no soffice, a PEM key named .key): dead, with why."""


class UnknownFileTypeError(SkippedFileError):
    """An extension not in the format table."""

    reason = SkipReason.UNSUPPORTED_TYPE


class MissingFileError(PermanentJobError):
    pass


class NotARegularFileError(PermanentJobError):
    pass


class SymlinkLoopError(PermanentJobError):
    pass


class SymlinkOutsideRootError(PermanentJobError):
    """A symlinked file whose target lies outside its source's root: skipped, never read."""

    def __init__(self, path: object, source_id: str) -> None:
        super().__init__(
            f"{path}: a symlink to a file outside the root of source {source_id}; skipped "
            "(set follow_external_symlinks: true on the source to ingest such files)"
        )


class FileTooLargeError(SkippedFileError):
    reason = SkipReason.TOO_LARGE


class EmptyFileError(SkippedFileError):
    reason = SkipReason.EMPTY


class BinaryContentError(SkippedFileError):
    """Bytes that are not text in a file whose name says it is text."""

    reason = SkipReason.NOT_TEXT


class ContentMismatchError(PermanentJobError):
    """Bytes of another format than the file's extension names (a zip named .pdf)."""


class ConversionError(PermanentJobError, core_errors.ConversionError):
    """A file the converter could not turn into a document, as a job that a retry would not help.

    The core's ``ConversionError`` as the ingester meets it: ``except haiku.core.errors.ConversionError``
    catches both.
    """


class ConversionTimeoutError(ConversionError):
    pass


class ConversionCrashedError(ConversionError):
    pass


def skipped_error(reason: SkipReason, message: str) -> SkippedFileError:
    """The skip error of ``reason``, as a Ray worker that read the file reported it."""
    kinds: dict[SkipReason, type[SkippedFileError]] = {
        kind.reason: kind for kind in (UnknownFileTypeError, FileTooLargeError, EmptyFileError, BinaryContentError)
    }
    return kinds[reason](message)
