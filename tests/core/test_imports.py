"""Importing haiku.core loads no model library (DESIGN: CLIs stay fast; models load on first use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import haiku.core

HEAVY = ("torch", "sentence_transformers", "docling")
CORE_MODULES = [
    "haiku.core",
    "haiku.core.config",
    "haiku.core.scope",
    "haiku.core.errors",
    "haiku.core.models",
    "haiku.core.embedders",
]


def _heavy_modules_after_importing(modules: list[str]) -> list[str]:
    """Import ``modules`` in a fresh interpreter; return the heavy modules it loaded."""
    code = (
        f"import {', '.join(modules)}; import sys; "
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.strip().split(",") if m]


def test_importing_haiku_core_loads_no_torch_sentence_transformers_or_docling():
    assert _heavy_modules_after_importing(CORE_MODULES) == []


def test_importing_the_store_loads_no_torch_sentence_transformers_or_docling():
    store = Path(haiku.core.__file__).parent / "store" / "__init__.py"
    if not store.is_file():
        pytest.skip("haiku.core.store is not written yet")
    assert _heavy_modules_after_importing([*CORE_MODULES, "haiku.core.store"]) == []
