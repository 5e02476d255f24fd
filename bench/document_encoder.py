"""Memory and CPU of the ONNX document encoder under its session options.

    python bench/document_encoder.py [--texts 192] [--tokens 256]

ONNX Runtime keeps, by default, a memory arena as large as the largest forward
pass it ran: a daemon that embedded one batch of long texts holds that memory
until it exits. This embeds ``--texts`` texts of ``--tokens`` tokens (in the
ingester's batches of 64) once per setting, each in a process of its own, and
reports the process's RSS after loading, its peak (VmHWM), its RSS after the
batch, and the CPU seconds of the batch, for the arena on and off and for a few
forward token budgets, and the same for the torch encoder. Memory figures
hold under load; CPU seconds are per process (user + system), not wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETTINGS = [
    ("onnx", True, 4096), ("onnx", False, 4096), ("onnx", True, 1024), ("onnx", False, 1024),
    ("onnx", False, 512), ("torch", None, 4096),
]


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(runtime: str, arena: bool | None, budget: int, texts: int, tokens: int) -> dict[str, float]:
    """In this process: load one encoder, embed the texts once, report memory and CPU seconds."""
    from haiku.core.config import config_from_dict
    from haiku.core.embedders import batching, get_embedder, onnx_documents

    if runtime == "onnx":
        onnx_documents.FORWARD_TOKEN_BUDGET = budget
        onnx_documents.MEMORY_ARENA = bool(arena)
    else:
        batching.CPU_FORWARD_TOKEN_BUDGET = budget
    embedder = get_embedder(config_from_dict({"embeddings": {"document_runtime": runtime}}))
    embedder.prepare_document_encoder()  # type: ignore[attr-defined]
    # "word" is one token: the special tokens make each text ``tokens`` long.
    batch = [f"text {i} " + "word " * (tokens - 4) for i in range(texts)]
    loaded = _status_mib("VmRSS")
    before = os.times()
    embedder.encode(batch)  # type: ignore[attr-defined]
    after = os.times()
    return {
        "loaded_rss_mib": round(loaded),
        "peak_rss_mib": round(_status_mib("VmHWM")),
        "after_rss_mib": round(_status_mib("VmRSS")),
        "cpu_s": round(after.user + after.system - before.user - before.system, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=192)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--one", nargs=3, metavar=("RUNTIME", "ARENA", "BUDGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        runtime, arena, budget = args.one
        print(json.dumps(measure(runtime, arena == "True", int(budget), args.texts, args.tokens)))
        return
    print(f"{args.texts} texts of {args.tokens} tokens, load average {os.getloadavg()[0]:.2f}")
    for runtime, arena, budget in SETTINGS:
        done = subprocess.run(
            [sys.executable, __file__, "--texts", str(args.texts), "--tokens", str(args.tokens),
             "--one", runtime, str(arena), str(budget)],
            capture_output=True, text=True, check=True, cwd=REPO,
        )
        arena_text = "" if arena is None else f" arena {'on' if arena else 'off'}"
        print(f"{runtime}{arena_text} budget {budget}: {done.stdout.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
