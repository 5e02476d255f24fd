"""The MCP server (docs/mcp.md): read-only tools over the configured databases.

    server = create_mcp_server(config=config)           # the configured set
    server = create_mcp_server(config=config, client=c) # an open client, reused

``haiku-rag mcp`` serves it over streamable HTTP (127.0.0.1:8001/mcp) or,
with ``--stdio``, over standard input and output.
"""

from haiku.rag.mcp.server import create_mcp_server, exposure_warning, serve

__all__ = ["create_mcp_server", "exposure_warning", "serve"]
