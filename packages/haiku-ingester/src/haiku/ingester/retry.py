"""Which failures are worth retrying, and how long to wait (docs/ingester.md)."""

from __future__ import annotations

import random

from haiku.core.config import RetryConfig
from haiku.ingester.errors import PermanentJobError


def backoff_delay(policy: RetryConfig, attempt: int, rng: random.Random | None = None) -> float:
    """``min(base · 2^(attempt−1), max) · (1 ± jitter)`` for the attempt that just failed (1-based)."""
    base = min(policy.base_delay_s * (2 ** max(attempt - 1, 0)), policy.max_delay_s)
    spread = (rng or random).uniform(-policy.jitter, policy.jitter)
    return max(base * (1 + spread), 0.0)


def is_permanent(error: BaseException) -> bool:
    """Permanent: the file itself is the problem, and retrying reads the same file.

    A text that cannot be encoded or decoded (``UnicodeError``) is permanent too:
    the same bytes fail the same way on every try. Everything else (I/O,
    embedder, network, a locked database, the unexpected) is transient and
    retried until ``max_attempts``.
    """
    return isinstance(error, PermanentJobError | UnicodeError)


def retry_delay(policy: RetryConfig, attempt: int, error: BaseException) -> float | None:
    """Seconds until the next attempt, or None when the job should go dead now."""
    if is_permanent(error) or attempt >= policy.max_attempts:
        return None
    return backoff_delay(policy, attempt)


def describe(error: BaseException) -> str:
    """The message a dead job keeps: the type for unexpected errors, the text always."""
    text = str(error) or error.__class__.__name__
    if isinstance(error, PermanentJobError):
        return text
    return f"{error.__class__.__name__}: {text}"
