"""Texts per second of the document encoder on this machine's device, beside plain PyTorch.

    python bench/gpu_embed.py prepare [--scifact ../shared/data/scifact] [--texts 4096]
    python bench/gpu_embed.py run [--assets bench/.cache/gpu_embed] [--json OUT]

``prepare`` (here, where haiku is installed) writes into ``--assets`` what a
GPU machine needs and may lack: the model's config and tokenizer (not its
87 MB of weights), SciFact abstracts, and reference vectors of the first
1,000 of them computed in fp32 on the CPU by a model of the same architecture
whose weights are drawn from a fixed seed per parameter (``seeded_weights``:
the same numbers whatever the torch or transformers version).

``run`` needs only torch, transformers, tokenizers and numpy, with
``packages/haiku-core/src`` on ``PYTHONPATH``. It builds the same seeded model,
checks the project's encoder against the reference vectors (cosine), and
times, on the current device (CUDA when there is one, else the CPU):

- plain PyTorch: the model in fp16 (fp32 on a CPU), 1,024-text passes in the
  texts' order, tokenized by transformers' tokenizer in the same thread;
- the project's document encoder (``haiku.core.embedders.lean``) as the
  ingester runs it: the device's batch size and precision
  (``batching.document_batch_size``, ``device.resolve_precision``), texts
  tokenized ahead on ``placement.ACCELERATOR_TOKENIZER_THREADS`` threads;
- a few variants of the latter (threads, batch size, fp32), and the CPU figure.

Throughput depends on the model's shape, not its weights, so the seeded
weights time the same as the real ones. Results go to stdout (a table last)
and, with ``--json``, to a file.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import shutil
import statistics
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "packages" / "haiku-core" / "src"))
DEFAULT_ASSETS = REPO / "bench" / ".cache" / "gpu_embed"
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")
REFERENCE_TEXTS = 1000
PLAIN_PASS_TEXTS = 1024


def seeded_weights(model) -> None:
    """Every parameter drawn from a generator seeded by its name: N(0, 0.02), LayerNorm weights 1."""
    import numpy as np
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm.weight" in name:
                values = np.ones(tuple(parameter.shape), dtype=np.float32)
            else:
                rng = np.random.default_rng(zlib.crc32(name.encode()))
                values = (rng.standard_normal(tuple(parameter.shape)) * 0.02).astype(np.float32)
            parameter.copy_(torch.from_numpy(values))


def build(assets: Path):
    """(seeded model, tokenizer, layout) from the assets."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(str(assets), local_files_only=True)
    model = AutoModel.from_config(config)
    seeded_weights(model)
    tokenizer = AutoTokenizer.from_pretrained(str(assets), local_files_only=True)
    layout = json.loads((assets / "layout.json").read_text())
    return model.eval(), tokenizer, layout


def load_texts(assets: Path) -> list[str]:
    with gzip.open(assets / "texts.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def prepare(args: argparse.Namespace) -> None:
    import numpy as np

    from haiku.core.embedders import local_model_path
    from haiku.core.embedders.lean import LeanSentenceEncoder, plain_layout

    source = Path(local_model_path())
    assets = Path(args.assets)
    assets.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        shutil.copy(source / name, assets / name)
    layout = plain_layout(source)
    (assets / "layout.json").write_text(json.dumps(layout))
    texts = []
    with open(Path(args.scifact) / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            texts.append(f"{row.get('title', '')} {row.get('text', '')}".strip())
            if len(texts) >= args.texts:
                break
    with gzip.open(assets / "texts.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(text) + "\n" for text in texts)
    model, tokenizer, layout = build(assets)
    encoder = LeanSentenceEncoder(model, tokenizer, layout)
    reference = np.asarray(encoder.encode(texts[:REFERENCE_TEXTS], 64), dtype=np.float32)
    np.save(assets / "reference.npy", reference)
    size = sum(p.stat().st_size for p in assets.iterdir())
    print(f"wrote {len(texts)} texts and {len(reference)} reference vectors to {assets} ({size / 1e6:.1f} MB)")


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def plain_torch(model, tokenizer, texts: list[str], device: str, dtype) -> float:
    """Seconds for plain PyTorch: 1,024-text passes in order, tokenized in the same thread."""
    import torch

    model = copy.deepcopy(model).to(device=device, dtype=dtype)
    _sync(device)
    started = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(texts), PLAIN_PASS_TEXTS):
            features = tokenizer(texts[start : start + PLAIN_PASS_TEXTS], padding=True, truncation=True,
                                 max_length=256, return_tensors="pt").to(device)
            tokens = model(**features, return_dict=False)[0]
            mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            torch.nn.functional.normalize(pooled.float(), dim=1).cpu()
    _sync(device)
    return time.perf_counter() - started


def project(model, tokenizer, layout, texts: list[str], device: str, precision: str, threads: int,
            batch_size: int, call_size: int | None = None) -> tuple[float, list[list[float]], int]:
    """(seconds, vectors, threads that tokenized) for the project's encoder on ``device``, on a copy
    of ``model`` (which stays fp32 on the CPU)."""
    from haiku.core.embedders.lean import LeanSentenceEncoder

    encoder = LeanSentenceEncoder(copy.deepcopy(model), tokenizer, layout, device=device, precision=precision,
                                  tokenizer_threads=threads)
    encoder.encode(texts[: min(len(texts), batch_size)], batch_size)  # warm: kernels chosen, pool started
    _sync(device)
    call = call_size or len(texts)
    started = time.perf_counter()
    vectors = [v for start in range(0, len(texts), call) for v in encoder.encode(texts[start : start + call], batch_size)]
    _sync(device)
    seconds = time.perf_counter() - started
    used = len(encoder.tokenizer.threads_used)
    encoder.tokenizer.close()
    return seconds, vectors, used


def tokenize_alone(tokenizer, texts: list[str], threads: int) -> float:
    """Seconds to tokenize ``texts`` in 1,024-text batches on ``threads`` threads, no model."""
    from haiku.core.embedders.tokenizing import AheadTokenizer

    ahead = AheadTokenizer(tokenizer, 256, threads)
    batches = [range(i, min(i + 1024, len(texts))) for i in range(0, len(texts), 1024)]
    list(ahead.ahead(batches[:1], texts))
    started = time.perf_counter()
    for _ in ahead.ahead(batches, texts):
        pass
    seconds = time.perf_counter() - started
    ahead.close()
    return seconds


def oom_check(model, tokenizer, layout, texts, reference, device: str, threads: int) -> dict:
    """The encoder under a memory cap that a 1,024-text pass exceeds: it halves and goes on, same vectors."""
    import torch

    from haiku.core.embedders.lean import LeanSentenceEncoder

    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(min(1.0, 400 * 2**20 / total))
    try:
        encoder = LeanSentenceEncoder(copy.deepcopy(model), tokenizer, layout, device=device, precision="fp16",
                                      tokenizer_threads=threads)
        vectors = encoder.encode(texts, 1024)
        return {"halvings": encoder.halvings, "budget": encoder.forward_budget,
                "min_cosine": min_cosine(vectors, reference)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)


def min_cosine(vectors, reference) -> float:
    import numpy as np

    got = np.asarray(vectors, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)[: len(got)]
    return float(((got * ref).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(ref, axis=1))).min())


def run(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from haiku.core.embedders.batching import document_batch_size, pipeline_step
    from haiku.core.embedders.device import resolve_precision
    from haiku.core.embedders.tokenizing import available_cpus, tokenizer_threads

    assets = Path(args.assets)
    texts = load_texts(assets)[: args.texts]
    reference = np.load(assets / "reference.npy")
    model, tokenizer, layout = build(assets)
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    cpus = available_cpus()
    precision = resolve_precision("auto", device)
    # As the ingester runs it (``placement``, ``batching``): calls of the device's batch size, cut into steps.
    threads = tokenizer_threads(device)
    call = document_batch_size(64, device)
    batch = pipeline_step(call, device)
    result: dict = {
        "device": torch.cuda.get_device_name(0) if device != "cpu" else "cpu", "cpus": cpus,
        "torch": torch.__version__, "texts": len(texts), "precision": precision, "threads": threads,
        "call_size": call, "step": batch, "tokenizers_parallelism": os.environ.get("TOKENIZERS_PARALLELISM"),
        "rows": [],
    }
    from haiku.core.embedders import device as devices

    result["auto_probe"] = {
        "device_nodes": devices.gpu_device_nodes(), "torch_build": devices.torch_gpu_build(),
        "probable": devices.probable_device("auto"),
        "confirmed": devices.confirm_device("auto", devices.probable_device("auto"))[0],
    }
    print("auto device probe:", json.dumps(result["auto_probe"]), flush=True)
    tokens = [len(ids) for ids in tokenizer(texts[:512], truncation=True, max_length=256)["input_ids"]]
    result["mean_tokens_first_512"] = round(statistics.mean(tokens), 1)

    def row(name: str, seconds: float, extra: dict | None = None) -> float:
        rate = len(texts) / seconds
        result["rows"].append({"path": name, "seconds": round(seconds, 3), "texts_per_s": round(rate), **(extra or {})})
        print(f"{name:58s} {rate:9.0f} texts/s  ({seconds:.2f} s)", flush=True)
        return rate

    # Vectors first: the project's encoder on this device against the fp32 CPU reference.
    _, vectors, _ = project(model, tokenizer, layout, texts[:REFERENCE_TEXTS], device, precision, threads, batch)
    result["min_cosine_vs_fp32_cpu"] = min_cosine(vectors, reference)
    print(f"min cosine, {precision} on {device} vs fp32 CPU reference: {result['min_cosine_vs_fp32_cpu']:.6f}")
    if device != "cpu":
        _, vectors32, _ = project(model, tokenizer, layout, texts[:REFERENCE_TEXTS], device, "fp32", threads, batch)
        result["min_cosine_fp32_device_vs_cpu"] = min_cosine(vectors32, reference)
        print(f"min cosine, fp32 on {device} vs fp32 CPU reference: {result['min_cosine_fp32_device_vs_cpu']:.6f}")

    ours = []
    for _ in range(args.repeats):
        seconds, _, used = project(model, tokenizer, layout, texts, device, precision, threads, batch, call)
        ours.append(row(f"project encoder {precision}, calls of {call}, steps of {batch}, {threads} threads",
                        seconds, {"threads_used": used}))
    result["project_texts_per_s"] = round(statistics.median(ours))
    if not args.variants_only:
        plain_dtype = torch.float16 if device != "cpu" else torch.float32
        plain_torch(model, tokenizer, texts[:PLAIN_PASS_TEXTS], device, plain_dtype)  # warm
        plain = [row(f"plain torch {str(plain_dtype)[6:]}, {PLAIN_PASS_TEXTS}-text passes", plain_torch(
            model, tokenizer, texts, device, plain_dtype)) for _ in range(args.repeats)]
        result["plain_texts_per_s"] = round(statistics.median(plain))
        result["ratio"] = round(result["project_texts_per_s"] / result["plain_texts_per_s"], 3)
    if device != "cpu":
        for variant_threads, variant_step, variant_precision, variant_call in (
            *((n, 1024, precision, 4096) for n in (1, 2, 4, 8)),
            *((n, 1024, precision, 1024) for n in (1, 2, 4, 8)),
            *((n, 512, precision, 1024) for n in (1, 4)),
            (threads, 2048, precision, 4096), (threads, 512, precision, 4096),
            (threads, 1024, "fp32", 4096), (threads, 1024, "bf16", 4096),
        ):
            seconds, _, _ = project(model, tokenizer, layout, texts, device, variant_precision, variant_threads,
                                    variant_step, variant_call)
            row(f"  {variant_precision}, calls of {variant_call}, steps of {variant_step}, {variant_threads} threads",
                seconds, {"threads": variant_threads, "step": variant_step, "precision": variant_precision,
                          "call": variant_call})
        for variant_threads in (1, 2, 4, 8):
            row(f"  tokenizing alone, {variant_threads} threads", tokenize_alone(tokenizer, texts, variant_threads))
        result["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    if args.variants_only:
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return
    if device != "cpu":
        result["out_of_memory_check"] = oom_check(model, tokenizer, layout, texts[:REFERENCE_TEXTS], reference,
                                                  device, threads)
        print("out-of-memory check:", json.dumps(result["out_of_memory_check"]), flush=True)
    cpu_texts = texts[: args.cpu_texts]
    seconds, _, _ = project(model, tokenizer, layout, cpu_texts, "cpu", "fp32", 1, 64)
    result["cpu_texts_per_s"] = round(len(cpu_texts) / seconds, 1)
    print(f"{'project encoder on the CPU, fp32, batch 64 (' + str(len(cpu_texts)) + ' texts)':58s} "
          f"{result['cpu_texts_per_s']:9.1f} texts/s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    print()
    print(f"| device | plain fp16, {PLAIN_PASS_TEXTS}-text passes | project encoder | ratio | CPU | min cosine |")
    print("|---|---|---|---|---|---|")
    print(f"| {result['device']} ({cpus} CPUs) | {result['plain_texts_per_s']:,} | {result['project_texts_per_s']:,} "
          f"| {result['ratio']} | {result['cpu_texts_per_s']} | {result['min_cosine_vs_fp32_cpu']:.5f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare")
    prep.add_argument("--scifact", default=str(REPO.parent / "shared" / "data" / "scifact"))
    prep.add_argument("--assets", default=str(DEFAULT_ASSETS))
    prep.add_argument("--texts", type=int, default=4096)
    timing = commands.add_parser("run")
    timing.add_argument("--assets", default=str(DEFAULT_ASSETS))
    timing.add_argument("--texts", type=int, default=4096)
    timing.add_argument("--repeats", type=int, default=3)
    timing.add_argument("--cpu-texts", type=int, default=256)
    timing.add_argument("--json")
    timing.add_argument("--variants-only", action="store_true", help="no plain torch, CPU figure or memory check")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    prepare(args) if args.command == "prepare" else run(args)


if __name__ == "__main__":
    main()
