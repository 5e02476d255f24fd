"""``QueryError``: what was asked is at fault or is not there (docs/client.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from haiku.core._errors.base import Hint, QueryError, database_label, names_list


class AmbiguousCitationError(QueryError):
    """A cited chunk id resolves to more than one database (docs/qa.md)."""

    @classmethod
    def shared(cls, chunk_id: str, names: Iterable[str | None]) -> AmbiguousCitationError:
        return cls(
            f"chunk id {chunk_id} names a chunk in more than one database ({names_list(names)}); "
            "a citation records the id alone and cannot say which"
        )

    @classmethod
    def already_cited(
        cls, chunk_id: str, before: Iterable[str | None], now: str | None
    ) -> AmbiguousCitationError:
        return cls(
            f"chunk id {chunk_id} from database {now} was already cited from another database "
            f"({names_list(before)}) in this conversation; a citation records the id alone and cannot say which"
        )


class PictureNotFoundError(QueryError, KeyError):
    """A picture asked for by document id and item ref that the database does not hold (docs/storage.md)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""

    @classmethod
    def of(cls, label: str, document_id: str, ref: str, *, document_exists: bool) -> PictureNotFoundError:
        if not document_exists:
            return cls(f"{label} holds no document '{document_id}'")
        return cls(f"document '{document_id}' in {label} has no stored picture '{ref}'")


class QueryTooLongError(QueryError, ValueError):
    """A search query longer than ``search.max_query_chars`` (a bound on the work one query may cost)."""

    @classmethod
    def check(cls, query: str, limit: int) -> None:
        if len(query) > limit:
            raise cls(
                f"the query is {len(query):,} characters long; a search takes at most {limit:,} "
                "(search.max_query_chars): shorten it"
            )


class LimitTooLargeError(QueryError, ValueError):
    """A result limit above ``search.max_limit``: one bound for search and listing, everywhere
    (docs/configuration.md#search)."""

    @classmethod
    def check(cls, limit: int | None, bound: int, *, what: str = "limit") -> None:
        """Raise when ``limit`` is above ``bound``; ``what`` names the argument as the caller gave it."""
        if limit is not None and limit > bound:
            raise cls(
                f"{what} {limit:,} is more than the {bound:,} results one call returns "
                "(search.max_limit): ask for fewer"
            )

    MAX_OFFSET = 2**32 - 1
    """The largest offset a listing takes (LanceDB's own bound)."""

    @classmethod
    def check_offset(cls, offset: int | None) -> None:
        if offset is not None and offset > cls.MAX_OFFSET:
            raise cls(
                f"offset {offset:,} is more than {cls.MAX_OFFSET:,}, the largest offset a listing takes"
            )


class EmptyQueryError(QueryError, ValueError):
    """A search query or question that is empty or blank: it matches nothing in particular."""

    def __init__(self, message: str = "the query is empty; say what to search for") -> None:
        super().__init__(message)

    @classmethod
    def check(cls, query: str) -> None:
        if not query or not query.strip():
            raise cls()


class InvalidFilterError(QueryError, ValueError):
    """A document filter that cannot run (the message names the documented document fields) or failed on the rows."""

    @classmethod
    def of(cls, filter: str, detail: str, fields: Iterable[str]) -> InvalidFilterError:
        return cls(
            f"invalid document filter {filter!r}: {detail}. A filter is an SQL WHERE over the document "
            f"fields {', '.join(fields)}"
        )

    @classmethod
    def failed(cls, filter: str, reason: str) -> InvalidFilterError:
        """A filter that runs but fails on the stored documents (a cast, a division by zero)."""
        return cls(f"document filter {filter!r} failed on the stored documents: {reason}")


class ImageQueryError(QueryError, ValueError):
    """An image query cannot run: no multimodal embedder is configured, or the image is unreadable
    (docs/pictures.md, "Image queries")."""

    @classmethod
    def text_only(cls, identity: str) -> ImageQueryError:
        return cls(
            f"image queries need a multimodal embedder (embeddings.model.provider: openai-multimodal), "
            f"but the configured embedder {identity} embeds text only"
        )


class ConversionError(QueryError, ValueError):
    """A file the converter cannot turn into a document (docs/ingester.md, "Formats").

    The ingester's failed conversion jobs (``haiku.ingester.errors.ConversionError``) derive from it.
    """


class NotFoundError(QueryError, LookupError):
    """A document or chunk id that the database asked does not hold."""

    @classmethod
    def chunk(cls, chunk_id: str, name: str | None) -> NotFoundError:
        return cls(f"{database_label(name)} holds no chunk with id {chunk_id}")

    @classmethod
    def chunk_in_none(cls, chunk_id: str, names: Sequence[str | None]) -> NotFoundError:
        """No database of a set (in configured order) holds the chunk."""
        return cls(f"none of the databases {names_list(names)} holds a chunk with id {chunk_id}")

    @classmethod
    def document(cls, document_id: str, names: Sequence[str | None]) -> NotFoundError:
        """None of the databases asked (one, or a set in configured order) holds the document."""
        if len(names) == 1:
            return cls(f"{database_label(names[0])} holds no document with id {document_id}")
        return cls(f"none of the databases {names_list(names)} holds a document with id {document_id}")


class NoPageLayoutError(QueryError):
    """A chunk with nothing to draw: no page boxes, or no stored page images (docs/client.md#pictures-and-pages)."""

    @classmethod
    def no_boxes(cls, chunk_id: str, name: str | None) -> NoPageLayoutError:
        return cls(
            f"chunk {chunk_id} in {database_label(name)} has no page layout: its document has no pages "
            "(markdown, text, HTML…) or was stored before the database kept page layout"
        )

    @classmethod
    def no_images(
        cls, chunk_id: str, name: str | None, pages: Iterable[int], *, kind: str | None = None
    ) -> NoPageLayoutError:
        """No stored image of the chunk's pages. ``kind`` names the document's format when it is not a
        PDF: only PDF pages are stored as images (docs/ingester.md#structure-pictures-and-page-images)."""
        shown = ", ".join(str(page) for page in pages)
        where = f"chunk {chunk_id} in {database_label(name)} lies on page(s) {shown}"
        if kind is not None:
            return cls.hinted(
                f"{where} of a {kind} document, and page images are stored for PDFs only: there is no "
                "page image to draw on",
                Hint(
                    "find-boxes", "(its boxes are in the search results and the document's items)", joiner=" "
                ),
            )
        return cls.hinted(
            f"{where} of a PDF, but no page image is stored for them: processing.page_images was off "
            "when the document was ingested, or it was stored before the database kept page images",
            Hint(
                "reprocess",
                "(with it on, reprocessing the database stores them)",
                {"database": name},
                joiner=" ",
            ),
        )
