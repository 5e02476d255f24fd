"""Analysis: a question answered by code the model writes and runs in the sandbox over the
question's documents, keeping every program and what it printed (docs/qa.md, "Analyze")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haiku.rag.capability.instructions import multiple_collections
from haiku.rag.capability.run import Run, code_argument
from haiku.rag.client import Program
from haiku.rag.llm.loop import Tool

BASE = """\
You answer questions about a collection of documents by writing Python and running it with \
the `execute_code` tool, in an isolated sandbox without network access.

Every document is a folder `/documents/{id}/` holding `metadata.json` (id, uri, title, \
metadata, created_at, updated_at), `content.txt` (the whole text) and `chunks.jsonl` (one JSON \
chunk per line: id, order, content, headings, page_numbers). The helpers `list_documents()` and \
`search(query, limit=10)` return dicts that name each document's or hit's `source`. Print what \
you want to see; the value of the last expression is shown too.

1. Run code that computes the answer from the documents. Read its output; when it fails or \
shows something unexpected, fix the code and run it again.
2. Base the answer only on what your programs printed. Never guess what code would print.
3. Then give the final answer: concise, in markdown, with the figures your programs produced."""


def analysis_instructions(collections: Sequence[str | None]) -> str:
    return BASE + (multiple_collections(collections) if len(collections) > 1 else "")


class AnalysisRun:
    """One analysis: the model's only tool is execute_code, and every program it runs is kept."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.programs: list[Program] = []

    def instructions(self) -> str:
        return analysis_instructions(self.run.collections)

    def tools(self) -> list[Tool]:
        return [self.run.code_tool(self.execute_code)]

    async def execute_code(self, args: dict[str, Any]) -> str:
        # The selection was checked before the first request, so what the sandbox raises here
        # (it cannot isolate code on this machine) ends the analysis: there is no other tool.
        code = code_argument(args)
        result = await self.run.run_code(code)
        self.programs.append(Program(code=code, output=result.output, error=result.error))
        return result.render()
