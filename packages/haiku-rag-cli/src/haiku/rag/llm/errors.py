"""Errors of question answering. Each message names the config key to look at."""

from __future__ import annotations

from haiku.core.errors import HaikuError


class QAError(HaikuError, RuntimeError):
    """Base of the question-answering errors; the CLI prints them as ``Error: …``."""


class ModelUnavailableError(QAError):
    """The chat endpoint at ``qa.model.base_url`` could not be reached."""


class ModelResponseError(QAError):
    """The chat endpoint answered with an error or with something that is not a chat completion."""


class RequestLimitError(QAError):
    """The model used ``qa.request_limit`` requests without giving a final answer."""
