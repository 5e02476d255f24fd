"""The screens of `haiku-rag`: Textual applications over the client (docs/cli.md).

Each application takes a client and its scope and nothing else. Textual is
imported only by the commands that start one, never by `search`, `list` or
the other plain commands.
"""
