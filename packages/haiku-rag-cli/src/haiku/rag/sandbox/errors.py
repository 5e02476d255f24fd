"""Errors of the code sandbox."""

from __future__ import annotations

from haiku.core.errors import HaikuError


class SandboxUnavailableError(HaikuError, RuntimeError):
    """The machine cannot isolate code (no ``unshare``, or user namespaces disabled).

    execute_code refuses to run code unisolated rather than falling back.
    """


class SharedDocumentIdError(HaikuError, ValueError):
    """Two selected databases hold one document id; the sandbox mounts one document per id."""
