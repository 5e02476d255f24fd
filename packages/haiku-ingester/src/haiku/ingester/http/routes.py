"""What the daemon's endpoint answers (docs/operations.md, "Endpoints").

``/health/live``: 200 while the event loop answers. ``/health/ready``: 200
when every configured database is open and writable and the workers are up,
else 503 naming what is not, by database name. ``/metrics``: the Prometheus
text format. ``/status``: ``haiku-ingester status --json`` plus uptime and the
configuration's digest.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from haiku.core.config import AppConfig
from haiku.ingester.app import IngesterApp
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.metrics_sample import sample_state
from haiku.ingester.readiness import check_readiness

_SECRET_WORDS = ("key", "secret", "token", "password", "credential")


def _without_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_secrets(v) for k, v in value.items() if not any(w in k.lower() for w in _SECRET_WORDS)}
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


def config_digest(config: AppConfig) -> str:
    """A digest of the running configuration, so scripts can tell two of them apart; secrets left out."""
    dumped = json.dumps(_without_secrets(config.model_dump(mode="json")), sort_keys=True)
    return "sha256:" + hashlib.sha256(dumped.encode()).hexdigest()


@dataclass
class DaemonView:
    """What the endpoint reads of the running daemon."""

    app: IngesterApp
    metrics: IngesterMetrics
    workers_problem: Callable[[], str | None]  # None while the workers are up
    started_at: float


def routes(view: DaemonView) -> list[web.RouteDef]:
    async def live(_: web.Request) -> web.Response:
        return web.json_response({"live": True})

    async def ready(_: web.Request) -> web.Response:
        readiness = await check_readiness(view.app, view.workers_problem())
        return web.json_response(readiness.as_json(), status=200 if readiness.ready else 503)

    async def metrics(_: web.Request) -> web.Response:
        readiness = await check_readiness(view.app, view.workers_problem())
        await sample_state(view.app, view.metrics, readiness)
        body = view.metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def status(_: web.Request) -> web.Response:
        from haiku.ingester.status import collect_status

        config = view.app.config
        report = await asyncio.to_thread(collect_status, config, probe=False)  # reads the queue file, off the loop
        report["uptime_s"] = round(time.time() - view.started_at, 1)
        report["config_digest"] = config_digest(config)
        return web.json_response(report)

    return [
        web.get("/health/live", live, allow_head=True),
        web.get("/health/ready", ready, allow_head=True),
        web.get("/metrics", metrics),
        web.get("/status", status),
    ]
