"""Make a model's ONNX export in a child process, so the caller never imports torch.

The export (``onnx_query.export_query_model``) needs torch, transformers and
onnx: ~500 MiB that a process keeps once imported. The ingester daemon, which
embeds with ONNX Runtime, and a search, which embeds one query, must not pay
that, even the first time, with no export cached. So they run
``python -m haiku.core.embedders.onnx_export CACHE_DIR NAME MODEL_PATH``, which
makes (or finds another process's) export and prints its folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Loading torch and the model, tracing, optimising and probing takes 15-20 s on
# two loaded cores; a child that takes far longer is stuck.
EXPORT_TIMEOUT_S = 600


def export_in_child(cache_dir: Path, name: str, model_path: str | Path) -> Path:
    """The folder of the model's export, made by a child process; ``RuntimeError`` when it fails."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(cache_dir), name, str(model_path)],
            capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S, check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"the ONNX export did not finish in {EXPORT_TIMEOUT_S} s") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise RuntimeError(f"the ONNX export failed: {reason}")
    return Path(lines[-1])


def main(argv: list[str]) -> int:
    from haiku.core.embedders.lean import plain_layout
    from haiku.core.embedders.onnx_query import export_query_model

    cache_dir, name, model_path = argv
    layout = plain_layout(model_path)
    if layout is None:
        print(f"{name} is not a plain transformer-and-pooling model", file=sys.stderr)
        return 2
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # the parent's stderr is a log, not a terminal
    except ImportError:
        pass
    try:
        folder = export_query_model(Path(cache_dir), name, model_path, layout)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
