"""The screens of haiku-rag (Textual apps): they sit above question answering and beside the
MCP server, and use the client and the capability like any Python caller (docs/design.md)."""
