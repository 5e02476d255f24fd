"""The errors of adding and deleting documents by hand (docs/ingester.md, "Adding documents")."""

from __future__ import annotations

from haiku.ingester.errors import IngesterError


class AddRefusedError(IngesterError):
    """An argument of ``add`` (or ``Ingester.add``) cannot become a document: nothing was queued for it."""


class UrlRefusedError(AddRefusedError):
    """A URL was not fetched, or its answer was not taken (scheme, address, size, content type, redirects)."""


class DeleteRefusedError(IngesterError):
    """``delete`` named no document added by hand: unknown, or a source's document."""
