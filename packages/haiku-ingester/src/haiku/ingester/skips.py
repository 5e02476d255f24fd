"""Why a file of a source is skipped, and how many were (docs/ingester.md, "Skipped files").

The reasons are one table, ``SkipReason``: its members are the keys every
report uses (``run-batch`` and ``--dry-run``, ``status``, ``serve``'s log and
their ``--json``), so a reason added here shows up everywhere at once. A skipped
file is never a failure: it is counted per source, by reason, and never goes
dead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import PurePath
from typing import Any


class SkipReason(StrEnum):
    """A reason to skip a file: its value is its key in every report; ``text`` the words for it."""

    UNSUPPORTED_TYPE = "unsupported_type"
    TOO_LARGE = "too_large"
    EXCLUDED = "excluded"
    EMPTY = "empty"
    NOT_TEXT = "not_text"

    @property
    def text(self) -> str:
        return _TEXT[self]


# The words each reason reads as in a line of text (beside its key above: a new reason adds both).
_TEXT: dict[SkipReason, str] = {
    SkipReason.UNSUPPORTED_TYPE: "unsupported type",
    SkipReason.TOO_LARGE: "over max_file_size",
    SkipReason.EXCLUDED: "excluded by a pattern",
    SkipReason.EMPTY: "empty",
    SkipReason.NOT_TEXT: "not text",
}


NO_EXTENSION = "(none)"
SHOWN_EXTENSIONS = 8  # in a line of text; ``as_json`` has them all


def extension_of(name: str) -> str:
    """The lower-cased extension a report names (``(none)`` for a file without one)."""
    return PurePath(name).suffix.lower() or NO_EXTENSION


class SkipTally:
    """How many files were skipped, by reason, and the extensions of those of an unsupported type."""

    def __init__(self) -> None:
        self.counts: Counter[SkipReason] = Counter()
        self.extensions: Counter[str] = Counter()

    def add(self, reason: SkipReason, name: str) -> None:
        self.counts[reason] += 1
        if reason is SkipReason.UNSUPPORTED_TYPE:
            self.extensions[extension_of(name)] += 1

    def merge(self, other: SkipTally) -> None:
        self.counts.update(other.counts)
        self.extensions.update(other.extensions)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def as_json(self) -> dict[str, Any]:
        """``{reason: {"files": N}}`` for each reason with files; ``unsupported_type`` adds ``extensions``."""
        out: dict[str, Any] = {}
        for reason in SkipReason:
            if self.counts[reason]:
                entry: dict[str, Any] = {"files": self.counts[reason]}
                if reason is SkipReason.UNSUPPORTED_TYPE:
                    entry["extensions"] = dict(sorted(self.extensions.items(), key=lambda kv: (-kv[1], kv[0])))
                out[reason.value] = entry
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> SkipTally:
        tally = cls()
        for key, entry in (data or {}).items():
            try:
                reason = SkipReason(key)
            except ValueError:
                continue  # a reason a newer release wrote: left out rather than misnamed
            tally.counts[reason] += int(entry.get("files", 0))
            if reason is SkipReason.UNSUPPORTED_TYPE:
                tally.extensions.update({ext: int(n) for ext, n in (entry.get("extensions") or {}).items()})
        return tally

    @classmethod
    def combined(cls, tallies: Iterable[SkipTally]) -> SkipTally:
        total = cls()
        for tally in tallies:
            total.merge(tally)
        return total

    def describe(self) -> str:
        """``3 skipped: 2 unsupported type (.gz 1, (none) 1), 1 empty`` (``0 skipped`` when none)."""
        parts = []
        for reason in SkipReason:
            n = self.counts[reason]
            if not n:
                continue
            part = f"{n} {reason.text}"
            if reason is SkipReason.UNSUPPORTED_TYPE and self.extensions:
                shown = [f"{ext} {k}" for ext, k in self.extensions.most_common(SHOWN_EXTENSIONS)]
                others = len(self.extensions) - len(shown)
                part += " (" + ", ".join(shown) + (f", {others} other extension(s)" if others > 0 else "") + ")"
            parts.append(part)
        return f"{self.total} skipped" + (": " + ", ".join(parts) if parts else "")
