"""Lifecycle commands and a running haiku-ingester (docs/cli.md#tag).

`haiku-ingester serve` holds its ownership lock (``.haiku-ingester.lock`` in
the database directory) for as long as it runs. A command that replaces the
database's state under it (`tag restore`) is refused while the lock is held,
unless forced; otherwise the command holds the lock itself while it runs, so no
ingester starts on the database halfway through.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.core.errors import DatabaseLockedError, database_label

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import OwnershipLock


async def keep_ingester_out(ref: DatabaseRef, command: str, *, force: bool) -> OwnershipLock | None:
    """The ingester's ownership lock of ``ref``, now held by this command (release it when done).

    None where there is nothing to hold: a database that is not a local directory
    (its lock would be in-process only), or, with ``force``, one a running
    ingester owns (warned on stderr). Without ``force`` that last case raises
    ``DatabaseLockedError`` naming the fix.
    """
    from haiku.core.store import OwnershipLock

    if not isinstance(ref.location, Path) or not ref.location.expanduser().is_dir():
        return None
    lock = OwnershipLock(ref, "ingester", holder=f"haiku-rag {command}")
    try:
        await lock.acquire()
    except DatabaseLockedError as refused:
        if not force:
            raise DatabaseLockedError.owned_by_ingester(ref.name, f"`haiku-rag {command}`", refused.holder) from None
        typer.echo(
            f"Warning: --force: a running haiku-ingester owns {database_label(ref.label)}; it does not see "
            f"this {command} until it restarts, and may go on writing over it.",
            err=True,
        )
        return None
    return lock
