"""Loggers that import structlog only when they log at a shown level (haiku.core.logs).

Each check runs in a fresh interpreter, where structlog is not yet imported.
"""

from __future__ import annotations

import subprocess
import sys

PRELUDE = (
    "import logging, sys\n"
    "from haiku.core.logs import before_structlog, get_logger, set_minimum_level\n"
    "set_minimum_level(logging.WARNING)\n"
    "before_structlog(lambda: print('SETUP', file=sys.stderr))\n"
    "log = get_logger('haiku.test')\n"
)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_calls_below_the_minimum_level_import_nothing():
    done = _run("log.debug('quiet', x=1); log.info('quiet'); print('structlog' in sys.modules)")
    assert done.stdout.split() == ["False"]
    assert "SETUP" not in done.stderr


def test_a_shown_call_configures_structlog_once_and_logs():
    done = _run("log.warning('first', n=1); log.error('second'); print('structlog' in sys.modules)")
    assert done.stdout.split()[-1] == "True"
    assert done.stderr.count("SETUP") == 1
    assert "first" in done.stdout + done.stderr and "second" in done.stdout + done.stderr
