"""An object-storage source (docs/configuration.md, "Sources"): the objects under ``s3://bucket/prefix``.

Listed by a sweep every ``poll_interval_s`` (object storage sends no events);
an object's revision is its ETag and size, its uri ``s3://bucket/key``.
Patterns match the key relative to the prefix, as a folder source's match the
path relative to its root. The client takes the source's ``storage_options``
(the keys of ``lancedb.storage_options``: ``aws_endpoint``, ``aws_region``,
``allow_http``); credentials come from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, a role) unless the options name them, and are never
logged. Needs boto3: ``pip install 'haiku-ingester[s3]'``.
"""

from __future__ import annotations

import threading
from pathlib import PurePosixPath
from typing import Any

from haiku.core.config import RetryConfig, S3SourceConfig
from haiku.core.convert.formats import format_of
from haiku.core.errors import database_label
from haiku.ingester.errors import (
    EmptyFileError,
    FileTooLargeError,
    MissingFileError,
)
from haiku.ingester.skips import SkipReason, SkipTally
from haiku.ingester.sources.files import FileFacts, check_bytes, checked_format
from haiku.ingester.sources.fs import FileEntry, matches

S3_INSTALL = "pip install 'haiku-ingester[s3]'"
_CLIENT_OPTIONS = {
    "aws_endpoint": "endpoint_url",
    "endpoint": "endpoint_url",
    "aws_endpoint_url": "endpoint_url",
    "aws_region": "region_name",
    "region": "region_name",
    "aws_access_key_id": "aws_access_key_id",
    "access_key_id": "aws_access_key_id",
    "aws_secret_access_key": "aws_secret_access_key",
    "secret_access_key": "aws_secret_access_key",
    "aws_session_token": "aws_session_token",
    "session_token": "aws_session_token",
}


class ObjectPath(PurePosixPath):
    """An object's key as a path (its name and suffix pick the format), shown as its ``s3://`` uri."""

    def __str__(self) -> str:
        parts = self.parts[1:]
        return "s3://" + "/".join(parts)


def object_path(uri: str) -> ObjectPath:
    """``s3://bucket/key`` as a path."""
    return ObjectPath("/", *uri[len("s3://") :].split("/"))


def split_location(location: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` -> ``(bucket, "prefix/")`` (``""`` for the whole bucket)."""
    bucket, _, prefix = location[len("s3://") :].partition("/")
    prefix = prefix.strip("/")
    return bucket, (prefix + "/" if prefix else "")


def client_options(storage_options: dict[str, str]) -> dict[str, Any]:
    """boto3 client arguments from storage options; unknown keys (``allow_http``) are the server's business."""
    return {_CLIENT_OPTIONS[k]: v for k, v in storage_options.items() if k in _CLIENT_OPTIONS}


def make_client(storage_options: dict[str, str]) -> Any:
    try:
        import boto3
    except ImportError:
        from haiku.ingester.errors import MissingExtraError

        raise MissingExtraError(f"an s3 source needs boto3; install it with: {S3_INSTALL}") from None
    return boto3.client("s3", **client_options(storage_options))


class S3Source:
    """One configured ``s3`` source of one database."""

    def __init__(self, database: str, config: S3SourceConfig, default_retry: RetryConfig) -> None:
        self.database = database
        self.config = config
        self.id = config.source_id
        self.root = config.location.rstrip("/")
        self.bucket, self.prefix = split_location(config.location)
        self.retry = config.retry or default_retry
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = make_client(self.config.storage_options)
            return self._client

    # --- names -------------------------------------------------------------------
    def uri_for(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def path_for(self, uri: str) -> ObjectPath:
        return object_path(uri)

    def key_of(self, path: ObjectPath) -> str:
        return "/".join(path.parts[2:])

    def check_link(self, path: ObjectPath) -> None:
        """Objects are no links: nothing to refuse."""

    def wants(self, key: str) -> bool:
        if not key.startswith(self.prefix) or key.endswith("/"):
            return False
        rel = key[len(self.prefix) :]
        parents = rel.split("/")[:-1]
        if any(matches("/".join(parents[: i + 1]), self.config.ignore_patterns) for i in range(len(parents))):
            return False
        return not matches(rel, self.config.ignore_patterns) and matches(rel, self.config.include_patterns)

    def label(self) -> str:
        return f"source {self.id} of {database_label(self.database)}"

    # --- listing -----------------------------------------------------------------
    def root_problem(self) -> str | None:
        """Why the bucket cannot be listed, or None."""
        try:
            self.client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
        except Exception as exc:
            return f"the location {self.root} cannot be listed ({_reason(exc)})"
        return None

    def list_files(self, skipped: SkipTally | None = None) -> dict[str, FileEntry]:
        """Every wanted object under the prefix, by uri, the others counted in ``skipped``;
        OSError when the location cannot be listed."""
        entries: dict[str, FileEntry] = {}
        skipped = skipped if skipped is not None else SkipTally()
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix)
            for page in pages:
                for item in page.get("Contents", []):
                    key = item["Key"]
                    if not key.startswith(self.prefix) or key.endswith("/"):
                        continue
                    reason = self._skip_reason(key, int(item["Size"]))
                    if reason is not None:
                        skipped.add(reason, key)
                        continue
                    uri = self.uri_for(key)
                    revision = etag_revision(item["ETag"], item["Size"])
                    entries[uri] = FileEntry(path=self.path_for(uri), uri=uri, revision=revision)  # type: ignore[arg-type]
        except Exception as exc:
            raise OSError(f"the location {self.root} cannot be listed ({_reason(exc)})") from None
        return entries

    def _skip_reason(self, key: str, size: int) -> SkipReason | None:
        if not self.wants(key):
            return SkipReason.EXCLUDED if format_of(key) is not None else SkipReason.UNSUPPORTED_TYPE
        if format_of(key) is None:
            return SkipReason.UNSUPPORTED_TYPE
        if size == 0:
            return SkipReason.EMPTY
        if size > self.config.max_file_size:
            return SkipReason.TOO_LARGE
        return None

    def present(self, path: ObjectPath) -> bool:
        """Whether the object is there and wanted (a delete job finds it back)."""
        key = self.key_of(path)
        if not self.wants(key):
            return False
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except Exception as exc:
            if _missing(exc):
                return False
            raise
        return self._skip_reason(key, int(head.get("ContentLength", 1))) is None  # an emptied object is gone

    # --- reading -----------------------------------------------------------------
    def inspect(self, path: ObjectPath, *, max_file_size: int) -> FileFacts:
        """The object's facts (format, size, revision); permanent errors say why it cannot be taken."""
        spec = checked_format(path, path.name, path.suffix)
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self.key_of(path))
        except Exception as exc:
            if _missing(exc):
                raise MissingFileError(f"{path}: the object no longer exists") from None
            raise
        size = int(head["ContentLength"])
        if size > max_file_size:
            raise FileTooLargeError(f"{path}: {size} bytes is over max_file_size ({max_file_size} bytes) of its source")
        if size == 0:
            raise EmptyFileError(f"{path}: the object is empty (0 bytes)")
        return FileFacts(
            path=path,  # type: ignore[arg-type]
            format=spec.converter,
            content_type=spec.content_type,
            size=size,
            revision=etag_revision(head["ETag"], size),
        )

    def read(self, facts: FileFacts, *, max_file_size: int) -> bytes:
        return read_object(self.client, facts, max_file_size=max_file_size)

    def object_ref(self, facts: FileFacts) -> dict[str, Any]:
        """What a Ray worker needs to read the object itself: where, and the options that are no secret."""
        return {"uri": str(facts.path), "options": public_options(self.config.storage_options)}


def read_object(client: Any, facts: FileFacts, *, max_file_size: int) -> bytes:
    """An object's bytes (at most max_file_size + 1), if the pipeline can take them."""
    bucket, _, key = str(facts.path)[len("s3://") :].partition("/")
    try:
        data = client.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{max_file_size}")["Body"].read()
    except Exception as exc:
        if _missing(exc):
            raise MissingFileError(f"{facts.path}: the object no longer exists") from None
        raise
    return check_bytes(facts, data, max_file_size=max_file_size)


def public_options(storage_options: dict[str, str]) -> dict[str, str]:
    """The storage options without credentials: a worker reads those from its own environment."""
    secret = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token"}
    return {k: v for k, v in storage_options.items() if _CLIENT_OPTIONS.get(k) not in secret}


def etag_revision(etag: str, size: int) -> str:
    return f"{etag.strip(chr(34))}-{size}"


def _missing(exc: BaseException) -> bool:
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    return code in ("404", "NoSuchKey", "NotFound")


def _reason(exc: BaseException) -> str:
    response = getattr(exc, "response", None) or {}
    error = response.get("Error", {})
    if error:
        return f"{error.get('Code')}: {error.get('Message') or 'no message'}"
    return f"{type(exc).__name__}: {exc}"
