"""Where documents come from: folder sources, their watchers and sweeps."""

from haiku.ingester.sources.fs import FileEntry, FolderSource, revision_of

__all__ = ["FileEntry", "FolderSource", "revision_of"]
