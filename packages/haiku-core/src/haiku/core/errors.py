"""Every error haiku-core raises, in one tree (docs/design.md, docs/client.md#errors).

Catch a category to handle a kind of failure, ``HaikuError`` to handle them all::

    HaikuError
    ├── ConfigError                 the configuration, or what is installed, cannot do it
    │   ├── InvalidConfigError          (ValueError) a file missing, unreadable or invalid
    │   ├── MissingEnvVarError          (ValueError) an unset ${VAR} without a default
    │   ├── ConfigMismatchError         embedder identities that conflict
    │   ├── ConverterUnavailableError   no ``convert`` extra installed
    │   └── EmbeddingError              (RuntimeError, haiku.core.embedders) no vectors
    ├── DatabaseError               a database cannot be used as asked
    │   ├── SourceUnavailableError      missing, or could not be opened
    │   ├── UnknownDatabaseError        (KeyError) a name outside the coverage
    │   ├── AmbiguousDatabaseError      one database asked of a set
    │   ├── MigrationRequiredError      behind the code's schema
    │   ├── ReadOnlyError               a write on a read-only or tagged store
    │   ├── DatabaseLockedError         the writer or ownership lock is held
    │   ├── TagError                    (ValueError) a missing or partial tag
    │   └── UnknownTableError           (ValueError) none of the database's tables
    └── QueryError                  what was asked is at fault or is not there
        ├── EmptyQueryError             (ValueError)
        ├── QueryTooLongError           (ValueError) over search.max_query_chars
        ├── LimitTooLargeError          (ValueError) over search.max_limit
        ├── InvalidFilterError          (ValueError) a document filter that cannot run
        ├── ImageQueryError             (ValueError) no multimodal embedder, or no image
        ├── NotFoundError               (LookupError) a document or chunk id not held
        ├── PictureNotFoundError        (KeyError)
        ├── NoPageLayoutError           a chunk with nothing to draw
        ├── AmbiguousCitationError      a cited id held by several databases
        └── ConversionError             (ValueError) a file the converter cannot read

The packages above add their own under ``HaikuError`` (``haiku.ingester.errors``,
``haiku.rag.llm.errors``, …); the ingester's failed conversion is a ``ConversionError``.
Each type also derives from the builtin callers expect of it (in brackets), so
``except KeyError`` / ``except ValueError`` keep working.

Messages are complete sentences in the library's words, naming a database by its
configured name, never its location. An error whose message ends in what to do
carries it apart as a ``Hint``: each CLI words the hints it knows as its flags and
commands (``worded``), and prints ``Error: <message>`` with exit 1.

Two exceptions stay outside the tree on purpose, as internal signals caught where they
are raised and never reaching a caller: ``DamagedExportError`` (an ONNX export to make
again) and the ingester's ``PictureModelFailed`` (one picture left undescribed).
"""

from __future__ import annotations

from haiku.core._errors.base import (
    ConfigError,
    DatabaseError,
    HaikuError,
    Hint,
    QueryError,
    Wording,
    database_label,
    hinted_message,
    missing_at_path,
    missing_database,
    names_list,
    skip_reason,
    with_hint,
    worded,
)
from haiku.core._errors.config import (
    ConfigMismatchError,
    ConverterUnavailableError,
    InvalidConfigError,
    MissingEnvVarError,
)
from haiku.core._errors.database import (
    AmbiguousDatabaseError,
    DatabaseLockedError,
    MigrationRequiredError,
    ReadOnlyError,
    SourceUnavailableError,
    TagError,
    UnknownDatabaseError,
    UnknownTableError,
)
from haiku.core._errors.query import (
    AmbiguousCitationError,
    ConversionError,
    EmptyQueryError,
    ImageQueryError,
    InvalidFilterError,
    LimitTooLargeError,
    NoPageLayoutError,
    NotFoundError,
    PictureNotFoundError,
    QueryTooLongError,
)

__all__ = [
    "AmbiguousCitationError",
    "AmbiguousDatabaseError",
    "ConfigError",
    "ConfigMismatchError",
    "ConversionError",
    "ConverterUnavailableError",
    "DatabaseError",
    "DatabaseLockedError",
    "EmptyQueryError",
    "HaikuError",
    "Hint",
    "ImageQueryError",
    "InvalidConfigError",
    "InvalidFilterError",
    "LimitTooLargeError",
    "MigrationRequiredError",
    "MissingEnvVarError",
    "NoPageLayoutError",
    "NotFoundError",
    "PictureNotFoundError",
    "QueryError",
    "QueryTooLongError",
    "ReadOnlyError",
    "SourceUnavailableError",
    "TagError",
    "UnknownDatabaseError",
    "UnknownTableError",
    "Wording",
    "database_label",
    "hinted_message",
    "missing_at_path",
    "missing_database",
    "names_list",
    "skip_reason",
    "with_hint",
    "worded",
]
