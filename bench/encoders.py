"""Document embedding throughput: the ingester's torch encoder against the ONNX export.

    python bench/encoders.py [--scifact PATH] [--texts N] [--rounds R]

The ONNX query encoder (haiku.core.embedders.onnx_query) makes a search
process start fast; whether the ingester should embed documents with it too
is a question of throughput on document-sized texts. This runs both over the
same SciFact abstracts (the first ``--texts``, truncated to 256 tokens as the
ingester embeds them), in batches of 64 sorted by length as the ingester
batches, alternating the two encoders ``--rounds`` times in one process so
that load falls on both alike, and reports texts per second and the ratio.
The two encoders' vectors are compared too (largest absolute difference).
Results: ``bench/results/encoders.json`` and stdout. Takes ``/tmp/haiku_bench.lock``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.beir import load_beir  # noqa: E402

RESULTS = REPO / "bench" / "results" / "encoders.json"
BATCH = 64


def onnx_batches(folder: Path, texts: list[str]):
    """The exported model run on padded batches (the query encoder runs one text at a time)."""
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    manifest = json.loads((folder / "manifest.json").read_text())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=manifest["max_length"])
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def encode() -> list[list[float]]:
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            encodings = tokenizer.encode_batch([texts[i].strip() for i in rows])
            feeds = {
                "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
            }
            (tokens,) = session.run(None, {name: feeds[name] for name in manifest["inputs"]})
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            pooled = (tokens * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
            for row, vector in zip(rows, pooled.tolist(), strict=True):
                out[row] = vector
        return out

    return encode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import numpy as np

    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder, local_model_path
    from haiku.core.embedders.onnx_query import exported_model_dir

    config = AppConfig()
    embedder = get_embedder(config)
    embedder.prepare_query_encoder()  # type: ignore[attr-defined]
    folder = exported_model_dir(config.model_cache_dir, config.embeddings.model.name, local_model_path())
    if folder is None:
        raise SystemExit("no ONNX export: run `haiku-rag download-models` first")
    texts = [doc.full_text for doc in load_beir(args.scifact).corpus[: args.texts]]
    torch_encode = lambda: embedder.encode(texts)  # type: ignore[attr-defined]  # noqa: E731
    onnx_encode = onnx_batches(folder, texts)
    torch_encode(), onnx_encode()  # warm both: first calls allocate
    rates: dict[str, list[float]] = {"torch": [], "onnx": []}
    with open("/tmp/haiku_bench.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        load_start = os.getloadavg()[0]
        for _ in range(args.rounds):
            for name, encode in (("torch", torch_encode), ("onnx", onnx_encode)):
                started = time.perf_counter()
                vectors = encode()
                rates[name].append(len(texts) / (time.perf_counter() - started))
        load_end = os.getloadavg()[0]
    difference = float(np.abs(np.asarray(torch_encode()) - np.asarray(onnx_encode())).max())
    result = {
        "texts": len(texts),
        "batch": BATCH,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "load": [round(load_start, 1), round(load_end, 1)],
        "texts_per_s": {name: round(statistics.median(values), 2) for name, values in rates.items()},
        "onnx_over_torch": round(statistics.median(rates["onnx"]) / statistics.median(rates["torch"]), 3),
        "max_abs_difference": difference,
        "dimension": len(vectors[0]),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
