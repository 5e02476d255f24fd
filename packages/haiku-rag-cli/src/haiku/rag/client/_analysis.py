"""What ``haiku.rag.qa.analyze`` returns: the answer and every program the model ran for it (docs/qa.md, "Analyze").

Plain values, so the client can name its return type without importing the
question-answering layer that fills them in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Program:
    """One program run in the sandbox, and what it gave back."""

    code: str
    output: str
    """stdout, then the last expression's value (capped at sandbox.max_output_chars)."""
    error: str | None = None
    """The traceback when the program raised, or why it was stopped."""


@dataclass(frozen=True)
class Analysis:
    question: str
    answer: str
    programs: list[Program] = field(default_factory=list)
    """In the order they ran."""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
