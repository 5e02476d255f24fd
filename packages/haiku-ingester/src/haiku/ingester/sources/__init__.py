"""Where documents come from: folder sources (watched and swept) and object-storage sources (swept)."""

from haiku.ingester.sources.fs import FileEntry, FolderSource, revision_of
from haiku.ingester.sources.s3 import S3Source

# What the pipeline and the sweeps take: either kind offers the same methods.
Source = FolderSource | S3Source

__all__ = ["FileEntry", "FolderSource", "S3Source", "Source", "revision_of"]
