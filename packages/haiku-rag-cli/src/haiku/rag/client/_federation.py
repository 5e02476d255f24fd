"""The federation: the databases one entered client covers, and its members for a call (docs/client.md).

One ``Federation`` exists per entry of a covering client and is shared by the
clients it lends (``reader_for``): it holds the covered scope (at its tag),
the stores opened so far (``_opening.OpenDatabases``: lazily, together), each
database's place in configured order (which breaks ties in fusion), and the
reranker. Every fan-out asks it for ``members``: the selected databases,
opened, in configured order. Then ``_search`` fans a search out and fuses
with ``haiku.core.fusion``; ``_lookups`` and ``_context`` fan out listings,
lookups and context expansion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from haiku.rag.client._coverage import ref_named, selected_names
from haiku.rag.client._opening import OpenDatabases

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.core.scope import DatabaseRef, DatabaseScope
    from haiku.core.store import Store
    from haiku.rag.rerankers import Reranker


class Member(NamedTuple):
    """One selected database: its place in configured order and its open store."""

    order: int
    store: Store


@dataclass(frozen=True)
class Reach:
    """What one client reaches: the scope it covers, and the federation it reads through once entered.

    A covering client's scope is its federation's; a lent client's is its one database.
    """

    config: AppConfig
    covered: DatabaseScope
    federation: Callable[[], Federation]  # raises while the client is not open

    def refs(self, sources: Sequence[str] | None) -> list[DatabaseRef]:
        """The refs a selection names (None: every covered one), checked by name; opens nothing."""
        if sources is None:
            return list(self.covered.databases)
        names = [ref.name for ref in self.covered.databases if ref.name is not None]
        return [ref_named(self.covered, name) for name in selected_names(sources, names)]

    async def members(self, sources: Sequence[str] | None) -> list[Member]:
        """The selected databases, opened, in configured order."""
        refs = self.refs(sources)
        return await self.federation().members(refs)

    async def member(self, source: str | None) -> Member:
        """The database ``source`` names, opened; None names the first covered one."""
        refs = list(self.covered.databases[:1]) if source is None else self.refs([source])
        return (await self.federation().members(refs))[0]


class Federation:
    """The open state of one entered client: its scope, its open stores, its reranker."""

    def __init__(
        self, config: AppConfig, scope: DatabaseScope, *, read_only: bool, create: bool, skip_validation: bool
    ) -> None:
        self.config = config
        self.scope = scope
        self.opened = OpenDatabases(config, read_only=read_only, create=create, skip_validation=skip_validation)
        self._order = {ref.name: i for i, ref in enumerate(scope.databases)}
        self._reranker: Reranker | None = None
        self.closed = False

    def order_of(self, ref: DatabaseRef) -> int:
        """The database's place in configured order (ties in fusion)."""
        return self._order.get(ref.name, 0)

    async def members(self, refs: Sequence[DatabaseRef]) -> list[Member]:
        """The databases of ``refs`` opened (those not yet open, together), in configured order."""
        stores = await self.opened.ensure(refs)
        members = [Member(self.order_of(ref), store) for ref, store in zip(refs, stores, strict=True)]
        return sorted(members, key=lambda member: member.order)

    def store(self, ref: DatabaseRef) -> Store:
        """The open store of ``ref`` (a single-database client opens it on entering)."""
        store = self.opened.get(ref.name)
        if store is None:  # pragma: no cover - a single-database client opens on enter
            raise RuntimeError(f"database {ref.label} is not open")
        return store

    def reranker(self) -> Reranker | None:
        """The configured reranker, built on first use and shared by every lent client."""
        model = self.config.reranking.model
        if model is None:
            return None
        if self._reranker is None:
            from haiku.rag.rerankers import create_reranker

            self._reranker = create_reranker(model)
        return self._reranker

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        reranker, self._reranker = self._reranker, None
        try:
            if reranker is not None:
                await reranker.aclose()
        finally:
            await self.opened.close_all()
