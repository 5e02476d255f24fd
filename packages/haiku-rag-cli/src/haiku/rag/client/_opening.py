"""Opening a client's databases: lazily, together, failures naming the database (docs/storage.md).

``before_open`` is a test hook: when set, it is awaited with each ref just
before that database opens. Tests use it to slow opens down (showing they
run concurrently) or to make one fail; it is ``None`` in normal use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING

from haiku.core.config import AppConfig
from haiku.core.errors import (
    ConfigMismatchError,
    DatabaseLockedError,
    MigrationRequiredError,
    ReadOnlyError,
    SourceUnavailableError,
    TagError,
)
from haiku.core.progress import status
from haiku.core.scope import DatabaseRef

if TYPE_CHECKING:
    from haiku.core.store import Store

before_open: Callable[[DatabaseRef], Awaitable[None]] | None = None
# Opening this many databases at once says so on a terminal (haiku.core.progress).
_MANY = 4

# Errors about a configured database that keep their type; the store prefixes
# them with "database 'NAME': " and they may chain the original.
_NAMED_TYPES = (
    SourceUnavailableError,
    MigrationRequiredError,
    ConfigMismatchError,
    ReadOnlyError,
    TagError,
    DatabaseLockedError,
)


def _named_failure(ref: DatabaseRef, error: BaseException) -> BaseException:
    """Anything unexpected about a configured database becomes a SourceUnavailableError.

    Built here, outside any ``except`` block, so neither ``__cause__`` nor
    ``__context__`` carries the original (and with it a path, bucket or URI).
    A caller-given path or the unnamed legacy database has no name to report,
    so its error passes through unchanged.
    """
    if ref.given or ref.name is None or isinstance(error, _NAMED_TYPES) or not isinstance(error, Exception):
        return error
    return SourceUnavailableError.unopenable(ref.name, error)


class OpenDatabases:
    """The stores one covering client has opened, keyed by database name."""

    def __init__(
        self, config: AppConfig, *, read_only: bool, create: bool = False, skip_validation: bool = False
    ) -> None:
        self._config = config
        self._read_only = read_only
        self._create = create
        self._skip_validation = skip_validation
        self._stores: dict[str | None, Store] = {}
        self._lock: asyncio.Lock | None = None

    def get(self, name: str | None) -> Store | None:
        return self._stores.get(name)

    @property
    def opened(self) -> tuple[str | None, ...]:
        return tuple(self._stores)

    async def _open_one(self, ref: DatabaseRef) -> Store:
        if before_open is not None:
            await before_open(ref)
        from haiku.core.store import Store

        return await Store.open(
            ref,
            self._config,
            create=self._create,
            read_only=self._read_only,
            writes_documents=False,  # documents are the ingester's to write (docs/design.md)
            skip_validation=self._skip_validation,
        )

    async def ensure(self, refs: Sequence[DatabaseRef]) -> list[Store]:
        """Open every ref not yet open, all at once; return the stores in ``refs`` order.

        Every open runs to completion and the successes are kept, so a retry
        opens only what failed; then the first failure in requested order is raised.
        """
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            missing = [ref for ref in refs if ref.name not in self._stores]
            if missing:
                waiting = status(f"opening {len(missing)} databases…") if len(missing) >= _MANY else nullcontext()
                with waiting:
                    outcomes = await asyncio.gather(
                        *(self._open_one(ref) for ref in missing), return_exceptions=True
                    )
                first_error: BaseException | None = None
                for ref, outcome in zip(missing, outcomes, strict=True):
                    if isinstance(outcome, BaseException):
                        if first_error is None:
                            first_error = _named_failure(ref, outcome)
                    else:
                        self._stores[ref.name] = outcome
                if first_error is not None:
                    raise first_error
        return [self._stores[ref.name] for ref in refs]

    async def close_all(self) -> None:
        stores, self._stores = list(self._stores.values()), {}
        errors = await asyncio.gather(*(store.close() for store in stores), return_exceptions=True)
        for error in errors:
            if isinstance(error, BaseException):
                raise error
