"""Whether the ingester can take work now, database by database (docs/operations.md, "Readiness").

A database is ready when it is open and its directory is there and writable
(a database on object storage: when it is open). The answer names databases,
never their locations. The file system is asked from a thread, so a hung
mount delays the answer, not the ingestion.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haiku.ingester.app import IngesterApp
from haiku.ingester.databases import DatabaseRuntime


def _local_problem(location: Path) -> str | None:
    if not location.is_dir():
        return "its directory is missing"
    if not os.access(location, os.W_OK):
        return "its directory is not writable"
    return None


async def database_problem(runtime: DatabaseRuntime | None) -> str | None:
    """Why the database cannot be written now, or ``None`` when it can."""
    if runtime is None or runtime.store is None:
        return "not open"
    location = runtime.ref.db_path
    if location is None:
        return None
    return await asyncio.to_thread(_local_problem, location)


@dataclass(frozen=True)
class Readiness:
    databases: dict[str, str | None]  # name -> what is wrong, None when ready
    workers: str | None = None  # what is wrong with the workers, None when they are up

    @property
    def ready(self) -> bool:
        return self.workers is None and all(problem is None for problem in self.databases.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "workers": self.workers or "up",
            "databases": {name: problem or "ready" for name, problem in self.databases.items()},
        }


async def check_readiness(app: IngesterApp, workers_problem: str | None) -> Readiness:
    """Every configured database, and the workers (``workers_problem`` as the daemon sees them)."""
    names = list(app.config.ingester.databases)
    problems = await asyncio.gather(*(database_problem(app.databases.get(name)) for name in names))
    return Readiness(databases=dict(zip(names, problems, strict=True)), workers=workers_problem)
