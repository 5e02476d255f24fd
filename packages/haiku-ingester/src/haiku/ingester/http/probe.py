"""Does a running daemon's endpoint answer? Asked by ``haiku-ingester status`` (docs/operations.md)."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from haiku.core.config.ingester_http import IngesterHttpConfig

PROBE_TIMEOUT_S = 2.0


def probe_address(settings: IngesterHttpConfig) -> tuple[str, int] | None:
    """Where to ask: a wildcard host is asked on loopback; port 0 (chosen at start) cannot be asked."""
    if settings.port == 0:
        return None
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(settings.host, settings.host)
    return host, settings.port


def probe_endpoint(settings: IngesterHttpConfig) -> dict[str, Any] | None:
    """``{"address", "answers", "detail"}`` when ``ingester.http`` is enabled, else ``None``.

    Asks ``/health/live``, which needs no token.
    """
    if not settings.enabled:
        return None
    address = probe_address(settings)
    if address is None:
        return {"address": f"{settings.host}:0", "answers": None, "detail": "port 0 is chosen at start; see the log"}
    host, port = address
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/health/live"
    entry: dict[str, Any] = {"address": f"{shown}:{port}", "answers": False, "detail": None}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the daemon, never a proxy
    try:
        with opener.open(url, timeout=PROBE_TIMEOUT_S) as response:
            entry["answers"] = response.status == 200
    except urllib.error.HTTPError as exc:
        entry["detail"] = f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        entry["detail"] = str(getattr(exc, "reason", exc))
    return entry
