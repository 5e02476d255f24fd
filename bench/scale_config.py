"""The configuration of the scale benchmark's one database under a root folder (bench/scale.py).

Its own module, so that the benchmark and its child processes
(bench/scale_children.py) both read it without importing each other.
"""

from __future__ import annotations

from pathlib import Path


def config_for(root: Path):
    from haiku.core.config import config_from_dict

    return config_from_dict(
        {
            "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
            "lancedb": {"databases": {"scale": str(root / "scale.lancedb")}},
        }
    )
