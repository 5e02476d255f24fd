"""Credentials in URLs never leave the process: one rule for everything printed or logged.

``mask_urls`` replaces the user information of any URL in a text
(``http://USER:PASSWORD@host`` → ``http://***@host``) and the value of every
credential-like query parameter (``?token=…``, ``api_key=…``, ``X-Amz-Signature=…``)
with ``***``. The CLIs pass every ``Error:`` line, every printed setting and
every log event through it (``mask_log_event`` is the structlog processor).
"""

from __future__ import annotations

import re
from typing import Any

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@?#]+@")
_SECRET_WORDS = r"token|key|secret|password|passwd|pwd|credential|signature|sig|session|auth"
_SECRET_PARAM = re.compile(
    rf"(?P<name>[?&;][^=&\s#]*?(?:{_SECRET_WORDS})[^=&\s#]*)=(?P<value>[^&\s#'\"]*)", re.IGNORECASE
)


def mask_urls(text: str) -> str:
    """The text with every URL's user information and credential-like query values masked."""
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['name']}={MASK}" if m["value"] else m[0], text)


def mask_nested(node: Any) -> Any:
    """``mask_urls`` over every string of a structure of dicts and lists."""
    if isinstance(node, str):
        return mask_urls(node)
    if isinstance(node, dict):
        return {key: mask_nested(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [mask_nested(item) for item in node]
    return node


def mask_log_event(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
    """A structlog processor: ``mask_urls`` over the event's string values."""
    return {key: mask_urls(value) if isinstance(value, str) else value for key, value in event.items()}
