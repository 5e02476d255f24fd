"""The ``haiku-rag`` MCP server: one shared read-only client, eight tools.

``sources`` restricts a call to some databases ([] reads none); ``source``
names the database holding a document, and without it every covered database
is asked. Failures a caller can act on (an unknown name, a missing document,
a shared document id in the sandbox) come back as tool errors carrying the
message; the SDK would otherwise hide them behind "Error executing tool".
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import TextContent

from haiku.core.config import AppConfig, load_config
from haiku.core.errors import HaikuError, names_list
from haiku.core.models import Document
from haiku.core.scope import DatabaseScope
from haiku.rag.mcp.outline import outline
from haiku.rag.mcp.results import decode_image, results_text

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG

T = TypeVar("T")
SERVER_NAME = "haiku-rag"


def _instructions(names: tuple[str | None, ...]) -> str:
    text = (
        "Search and read the documents of haiku-rag. search_documents finds passages (each shows its "
        "Chunk ID and Document ID); search_documents_by_image finds the chunks holding pictures like an "
        "image (with a multimodal embedder); get_document_outline and get_document_section read a document by "
        "section; get_result_pictures shows the pictures a result's chunk holds; execute_code runs "
        "Python in an isolated sandbox over /documents/{id}/."
    )
    if len(names) > 1:
        text += (
            f"\n\nCollections: {names_list(names)}. Each result names its collection on a `Collection:` "
            "line. Pass sources=[...] to search or list some of them, and source=NAME to read a "
            "document from the collection that holds it."
        )
    return text


class _Holder:
    """The server's one client: lent by the caller, or opened by the server's lifespan."""

    def __init__(self, client: HaikuRAG | None) -> None:
        self.client = client

    def get(self) -> HaikuRAG:
        if self.client is None:
            raise ToolError("the haiku-rag server has no open database client")
        return self.client


async def _guard(work: Awaitable[T]) -> T:
    from haiku.rag.llm.errors import QAError
    from haiku.rag.sandbox.errors import SandboxUnavailableError

    try:
        return await work
    except ToolError:
        raise
    except (KeyError, ValueError, HaikuError, QAError, SandboxUnavailableError, OSError) as exc:
        raise ToolError(str(exc)) from None


def _missing(document_id: str, source: str | None) -> ToolError:
    where = f" in database {source}" if source is not None else ""
    return ToolError(f"No document with id {document_id}{where}.")


def create_mcp_server(
    db_path: str | Path | None = None,
    config: AppConfig | None = None,
    scope: DatabaseScope | None = None,
    *,
    client: HaikuRAG | None = None,
) -> MCPServer:
    """The server over ``client`` (an open client, never closed here), else over ``scope``,
    ``db_path`` or the configured set, opened when the server starts."""
    if client is not None:
        config = client.config
        names = tuple(client.scope.names)
    else:
        config = config if config is not None else load_config()
        if scope is None:
            scope = DatabaseScope.resolve(config, database_path=db_path)
        names = scope.names
    holder = _Holder(client)
    multi = len(names) > 1

    lifespan: Callable[[MCPServer], contextlib.AbstractAsyncContextManager[None]] | None = None
    if client is None:
        assert scope is not None
        opened_scope, opened_config = scope, config

        @contextlib.asynccontextmanager
        async def lifespan(_: MCPServer) -> AsyncIterator[None]:
            from haiku.rag.client import HaikuRAG

            # One database opens on enter, so an unopenable one fails the start.
            async with HaikuRAG.from_scope(opened_scope, opened_config, read_only=True) as opened:
                holder.client = opened
                try:
                    yield None
                finally:
                    holder.client = None

    server: MCPServer = MCPServer(
        SERVER_NAME, instructions=_instructions(names), lifespan=lifespan, log_level="WARNING"
    )

    @server.tool()
    async def search_documents(
        query: str, limit: int | None = None, filter: str | None = None, sources: list[str] | None = None
    ) -> str:
        """Search the documents (hybrid vector + full-text). `filter` is a SQL WHERE over document fields
        (id, uri, title, metadata, created_at, updated_at); `sources` restricts the search to those
        collections ([] searches none)."""
        rag = holder.get()
        results = await _guard(rag.search(query, limit=limit, filter=filter, sources=sources))
        return results_text(results, include_collection=multi)

    @server.tool()
    async def search_documents_by_image(
        image: str, limit: int | None = None, sources: list[str] | None = None
    ) -> str:
        """Search the documents' pictures with an image: `image` is base64 PNG, JPEG, GIF or WebP (or a
        data: URL). Needs a multimodal embedder; each result is the chunk holding a matching picture
        (its `Picture:` line). `sources` restricts the search to those collections ([] searches none)."""
        rag = holder.get()
        results = await _guard(rag.search_by_image(decode_image(image), limit=limit, sources=sources))
        return results_text(results, include_collection=multi)

    @server.tool()
    async def list_documents(
        limit: int | None = None,
        offset: int | None = None,
        filter: str | None = None,
        sources: list[str] | None = None,
    ) -> dict[str, Any]:
        """List documents (without content), interleaving collections; each names its `source`."""
        rag = holder.get()
        documents = await _guard(rag.list_documents(limit=limit, offset=offset, filter=filter, sources=sources))
        return {"documents": [d.as_json(content=False) for d in documents]}

    @server.tool()
    async def get_document(document_id: str, source: str | None = None) -> dict[str, Any]:
        """A document with its content; `source` names the collection holding it."""
        rag = holder.get()
        document = await _guard(rag.get_document_by_id(document_id, source=source))
        if document is None:
            raise _missing(document_id, source)
        return document.as_json()

    async def _sections(document_id: str, source: str | None) -> tuple[Document, list[Any]]:
        rag = holder.get()
        document = await _guard(rag.get_document_by_id(document_id, source=source))
        if document is None:
            raise _missing(document_id, source)
        # The chunks come from the database the document came from, even without `source`.
        holder_name = document.source if document.source is not None else source
        chunks = await _guard(rag.get_chunks(document_id, source=holder_name))
        return document, outline(chunks)

    @server.tool()
    async def get_document_outline(document_id: str, source: str | None = None) -> dict[str, Any]:
        """The document's sections (from its headings), each with a section_id for get_document_section."""
        document, sections = await _sections(document_id, source)
        return {
            "document_id": document.id,
            "title": document.title,
            "uri": document.uri,
            "source": document.source,
            "sections": [s.summary() for s in sections],
        }

    @server.tool()
    async def get_document_section(document_id: str, section_id: str, source: str | None = None) -> str:
        """The chunks under one heading of a document (see get_document_outline for section ids)."""
        _, sections = await _sections(document_id, source)
        wanted = str(section_id).strip()
        for section in sections:
            if section.section_id == wanted:
                return section.text()
        raise ToolError(
            f"No section {wanted} in document {document_id}; get_document_outline lists its "
            f"{len(sections)} section(s)."
        )

    @server.tool()
    async def get_result_pictures(chunk_id: str, source: str | None = None) -> list[TextContent | Image]:
        """The pictures a search result's chunk holds (or whose caption it holds): each as a label
        (with its `Collection:`) and an image. `source` names the collection the result came from."""
        from haiku.rag.mcp.pictures import result_pictures

        rag = holder.get()
        return await _guard(result_pictures(rag, chunk_id, source, include_collection=multi))

    @server.tool()
    async def execute_code(code: str, filter: str | None = None, sources: list[str] | None = None) -> str:
        """Run Python in an isolated sandbox (no network, read-only files) over /documents/{id}/
        (metadata.json, content.txt, chunks.jsonl) of the selected collections; helpers
        search(query, limit=10) and list_documents(). Returns stdout and the last expression's value."""
        from haiku.rag.sandbox import execute_code as run_code

        rag = holder.get()
        result = await _guard(run_code(rag, code, sources=sources, filter=filter))
        return result.render()

    return server


async def serve(
    client: HaikuRAG, *, stdio: bool, host: str = "127.0.0.1", port: int = 8001
) -> None:
    """Serve an open client until the transport ends (stdin closes) or the process is stopped."""
    server = create_mcp_server(client=client)
    if stdio:
        await server.run_stdio_async()
    else:
        await server.run_streamable_http_async(host=host, port=port)


def exposure_warning(host: str) -> str | None:
    """What to warn when ``host`` is reachable beyond this machine; None for a loopback address.

    The server has no authentication: bound to any other address, it serves every
    document of its databases to whoever can reach that address.
    """
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host or None, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        addresses = {info[4][0] for info in infos}
    except OSError:
        addresses = set()
    loopback = bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)
    if loopback:
        return None
    return (
        f"--host {host} is not a loopback address: the MCP server has no authentication and serves every "
        "document of its databases to anyone who can reach it; bind 127.0.0.1 (the default) unless a proxy "
        "in front of it authenticates"
    )
