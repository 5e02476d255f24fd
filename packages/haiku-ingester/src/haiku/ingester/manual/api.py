"""The Python writer: ``haiku.ingester.Ingester`` (docs/ingester.md, "From Python").

    async with Ingester(config) as ing:
        result = await ing.add("paper.pdf", database="papers", title="A paper")
        await ing.add_text("# Notes\n…", database="papers", title="Release notes")
        await ing.delete(result.document_id, database="papers")

The same rules, queue and pipeline as ``haiku-ingester add`` and ``delete``:
one method call is one argument of the command. A refused argument raises
``AddRefusedError`` (``UrlRefusedError`` for a URL) or ``DeleteRefusedError``;
a document whose job failed raises ``AddFailedError`` carrying its ``AddResult``.
The ``*_many`` methods return a ``AddResult`` per argument and raise nothing for
one argument's failure (the CLI uses them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from haiku.core.config import AppConfig, load_config
from haiku.core.errors import HaikuError, database_label
from haiku.ingester.manual.errors import AddRefusedError, DeleteRefusedError
from haiku.ingester.manual.session import AddResult, Session
from haiku.ingester.manual.source import MANUAL_SOURCE_ID, MAX_FILE_SIZE
from haiku.ingester.manual.spool import GivenFields
from haiku.ingester.manual.targets import Target, classify, file_target, text_target
from haiku.ingester.manual.urls import fetch, is_web_url
from haiku.ingester.pipeline.process import SOURCE_ID
from haiku.ingester.sources.files import content_hash

__all__ = ["AddFailedError", "AddResult", "Ingester"]


class AddFailedError(AddRefusedError):
    """A document's job ended without writing it (dead, or its file not taken)."""

    def __init__(self, result: AddResult) -> None:
        super().__init__(f"{result.argument}: {result.outcome}: {result.error or 'not written'}")
        self.result = result


class Ingester:
    """Adds and deletes documents by hand; see the module docstring."""

    def __init__(self, config: AppConfig | None = None, *, wait: bool = True) -> None:
        self.config = config if config is not None else load_config()
        self.wait = wait  # beside a running serve: wait for each job's outcome (else "queued")
        self._sessions: dict[str, Session] = {}

    async def __aenter__(self) -> Ingester:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            try:
                session.prune()
            finally:
                await session.close()

    async def _session(self, database: str) -> Session:
        session = self._sessions.get(database)
        if session is None:
            session = self._sessions[database] = await Session.open(self.config, database)
        return session

    # --- one document --------------------------------------------------------------------
    async def add(
        self, path_or_url: str | Path, *, database: str, title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:  # fmt: skip
        """Add (or update) the file at a path, or the page at an http(s) URL."""
        return _one(
            await self.add_many([str(path_or_url)], database=database, title=title, metadata=metadata)
        )

    async def add_text(
        self, text: str | bytes, *, database: str, title: str, identity: str | None = None, format: str = "md",
        metadata: Mapping[str, Any] | None = None,
    ) -> AddResult:  # fmt: skip
        """Add a text as ``text://DATABASE/IDENTITY`` (identity: a slug of the title unless given); the same
        identity with other text updates that document."""
        return _one(await self.add_text_many(
            [text], database=database, title=title, identity=identity, format=format, metadata=metadata
        ))  # fmt: skip

    async def delete(self, id_or_uri: str, *, database: str) -> AddResult:
        """Delete a document added by hand, named by its id or uri (or the path it was added from)."""
        async with (await self._session(database)).reading() as store:
            await _deletable(store, id_or_uri, database)  # DeleteRefusedError names why not
        return _one(await self.delete_many([id_or_uri], database=database))

    # --- several (one result each) -------------------------------------------------------
    async def add_many(
        self, arguments: Sequence[str], *, database: str, title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[AddResult]:  # fmt: skip
        session = await self._session(database)
        targets: list[Target] = []
        refused: list[AddResult] = []
        given = dict(metadata or {})
        for argument in arguments:
            try:
                kind = classify(argument)
                if kind == "text":
                    raise AddRefusedError("standard input ('-') is read by the command line; call add_text")
                if kind == "url":
                    targets.append(await self._fetched(session, argument, title=title, metadata=given))
                else:
                    targets.append(
                        file_target(session.config, database, argument, title=title, metadata=given)
                    )
            except (HaikuError, OSError) as exc:
                refused.append(AddResult(argument, None, "failed", error=str(exc)))
        return await self._write(database, targets, refused=refused)

    async def add_text_many(
        self, texts: Sequence[str | bytes], *, database: str, title: str, identity: str | None = None,
        format: str = "md", metadata: Mapping[str, Any] | None = None,
    ) -> list[AddResult]:  # fmt: skip
        """Texts under one title and identity: the last one given is what the document holds."""
        targets = [
            text_target(
                database, text.encode("utf-8") if isinstance(text, str) else text, title=title, identity=identity,
                fmt=format, metadata=dict(metadata or {}),
            )
            for text in texts
        ]  # fmt: skip
        return await self._write(database, targets, refused=[])

    async def refresh(self, *, database: str) -> list[AddResult]:
        """Fetch every URL added to the database again, conditionally: an unchanged page costs one request."""
        session = await self._session(database)
        uris = sorted(
            {u for u in session.spool.uris(database) if is_web_url(u)}
            | {u for u in session.queue.sync.known(database, MANUAL_SOURCE_ID) if is_web_url(u)}
        )
        targets: list[Target] = []
        results: list[AddResult] = []
        for uri in uris:
            fields = session.spool.fields(database, uri)
            record = session.record(uri)
            try:
                target = await self._fetched(
                    session, uri, title=fields.title if fields else None,
                    metadata=fields.metadata if fields else {}, conditional=record is not None,
                )  # fmt: skip
            except (HaikuError, OSError) as exc:
                results.append(AddResult(uri, uri, "failed", error=str(exc)))
                continue
            if target.data is None:
                results.append(AddResult(uri, uri, "unchanged", record.document_id if record else None))
            else:
                targets.append(target)
        written = await self._write(database, targets, refused=[])
        await session.count_chunks(results)
        return results + written

    async def delete_many(self, arguments: Sequence[str], *, database: str) -> list[AddResult]:
        session = await self._session(database)
        refused: list[AddResult] = []
        queued: list[tuple[str, str, Any]] = []
        async with session.reading() as store:
            for argument in arguments:
                try:
                    uri = await _deletable(store, argument, database)
                except DeleteRefusedError as exc:
                    refused.append(AddResult(argument, None, "failed", error=str(exc)))
                    continue
                queued.append((argument, uri, session.record(uri)))
        for _argument, uri, _before in queued:
            session.enqueue(uri, "delete", None)
        ran = await session.run([uri for _, uri, _ in queued], wait=self.wait)
        results = [await session.outcome(a, uri, before, ran=ran) for a, uri, before in queued]
        session.prune()
        return refused + results

    # --- the steps -----------------------------------------------------------------------
    async def _fetched(
        self,
        session: Session,
        url: str,
        *,
        title: str | None,
        metadata: dict[str, Any],
        conditional: bool = False,
    ) -> Target:
        kept = session.spool.fields(session.database, url) if conditional else None
        record = session.record(url)
        validators = kept is not None and record is not None and kept.fetched_hash == record.content_hash
        answer = await fetch(
            url, max_bytes=MAX_FILE_SIZE, allow_private=session.config.ingester.allow_private_urls,
            etag=kept.etag if validators and kept else None,
            last_modified=kept.last_modified if validators and kept else None,
        )  # fmt: skip
        if answer.data is None:
            return Target(url, url, "url", kept or GivenFields(url, title, metadata))
        digest = content_hash(answer.data)
        fields = GivenFields(url, title, metadata, answer.etag, answer.last_modified, digest)
        return Target(url, url, "url", fields, data=answer.data, extension=answer.extension, revision=digest)

    async def _write(
        self, database: str, targets: list[Target], *, refused: list[AddResult]
    ) -> list[AddResult]:
        session = await self._session(database)
        befores = {}
        forced: set[str] = set()
        with session.spool.locked():
            for target in targets:
                before = befores[target.uri] = session.record(target.uri)
                previous = session.spool.fields(database, target.uri)
                if previous is not None:  # a title or metadata given before stays unless given anew
                    target.fields.title = target.fields.title or previous.title
                    target.fields.metadata = {**previous.metadata, **target.fields.metadata}
                changed = previous is not None and (previous.title, previous.metadata) != (
                    target.fields.title, target.fields.metadata,
                )  # fmt: skip
                session.spool.put_fields(database, target.fields)
                revision = target.revision
                if target.data is not None:
                    digest = content_hash(target.data)
                    session.spool.keep(database, target.uri, target.data, digest, target.extension)
                    revision = digest
                # A new title or metadata on the same content: converted again to carry them.
                if changed and before is not None:
                    forced.add(target.uri)
                session.enqueue(target.uri, "upsert", revision, forced=target.uri in forced)
        ran = await session.run([t.uri for t in targets], wait=self.wait)
        results = [
            await session.outcome(t.argument, t.uri, befores[t.uri], ran=ran, forced=t.uri in forced)
            for t in targets
        ]
        await session.count_chunks(results)
        session.prune()
        return refused + results


def _one(results: list[AddResult]) -> AddResult:
    result = results[0]
    if result.ok:
        return result
    if result.uri is None:  # refused before anything was queued
        raise AddRefusedError(result.error or f"{result.argument}: refused")
    raise AddFailedError(result)


async def _deletable(store: Any, argument: str, database: str) -> str:
    """The uri of the document added by hand that ``argument`` names (id, uri or path); else why not."""
    document = await store.reads.get_document_by_id(argument)
    if document is None:
        uri = argument if "://" in argument else Path(argument).expanduser().resolve().as_uri()
        document = await store.reads.get_document_by_uri(uri)
    if document is None or document.uri is None:
        raise DeleteRefusedError(
            f"{argument}: {database_label(database)} holds no document with this id or uri"
        )
    owner = document.metadata.get(SOURCE_ID)
    if owner != MANUAL_SOURCE_ID:
        raise DeleteRefusedError(
            f"{argument}: document {document.id} belongs to source {owner} of {database_label(database)}, "
            "which syncs it; remove the file from that source instead"
        )
    return document.uri
