"""The systemd unit gives a stop the time it can take (docs/ingester.md, "serve under systemd")."""

from __future__ import annotations

import re

from haiku.core.config import AppConfig
from haiku.core.store import maintenance

ONE_STEP_S = 5.0  # what one maintenance step may take at a million chunks, its target (docs/ingester.md)


def test_the_units_stop_timeout_covers_the_grace_and_the_bounded_maintenance_on_stop(repo_root):
    unit = (repo_root / "configs" / "haiku-ingester.service").read_text()
    (timeout,) = re.findall(r"^TimeoutStopSec=(\d+)s$", unit, re.MULTILINE)
    grace = AppConfig().ingester.workers.shutdown_grace_s
    maintenance_on_stop = maintenance.CLOSE_LOCK_TIMEOUT_S + maintenance.CLOSE_MAINTENANCE_BUDGET_S + ONE_STEP_S
    assert int(timeout) >= grace + maintenance_on_stop
