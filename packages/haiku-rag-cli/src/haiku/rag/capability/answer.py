"""What a question returns: the answer, its citations, and how grounded it is (docs/qa.md).

An answer is grounded when the model cited the chunks it rests on. One that
cites nothing is ungrounded, and says why: the model never looked at the
documents (no search, no code over them), it looked and cited nothing, or it
declared the answer ungrounded itself (``cite([])``).
"""

from __future__ import annotations

from typing import Literal

from haiku.core.models import Citation

Grounding = Literal["cited", "not-searched", "not-cited", "declared-ungrounded"]

_NOTES: dict[Grounding, str] = {
    "not-searched": "the model answered without searching the documents or citing them",
    "not-cited": "the model searched the documents but cited none of them",
    "declared-ungrounded": "the model declared the answer not grounded in the documents",
}


def grounding_of(*, cited: bool, consulted: bool, declared_ungrounded: bool) -> Grounding:
    """How grounded an answer is, from what its run did."""
    if cited:
        return "cited"
    if declared_ungrounded:
        return "declared-ungrounded"
    return "not-cited" if consulted else "not-searched"


class Answer(tuple[str, list[Citation]]):
    """``answer, citations = await ask(client, ...)`` unpacks it; ``grounding`` says how
    the answer rests on the documents, ``grounded`` whether it cites any."""

    grounding: Grounding

    def __new__(cls, text: str, citations: list[Citation], grounding: Grounding) -> Answer:
        answer = super().__new__(cls, (text, citations))
        answer.grounding = grounding
        return answer

    @property
    def text(self) -> str:
        return self[0]

    @property
    def citations(self) -> list[Citation]:
        return self[1]

    @property
    def grounded(self) -> bool:
        return self.grounding == "cited"

    @property
    def note(self) -> str | None:
        """Why the answer is ungrounded, as a sentence; None when it cites."""
        return _NOTES.get(self.grounding)
