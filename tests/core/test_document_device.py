"""Where documents are embedded: embeddings.document_device and document_precision (docs/configuration.md, "Devices").

This machine has no GPU: the GPU itself is measured by bench/gpu_embed.py on a
lent one. Here the rules around it run for real on the CPU: the cheap probe,
the errors, reduced precision, batch and pass sizing, tokenizing ahead on
threads, and halving a pass the allocator refused (that refusal is raised by
a thin wrapper around the real model: no GPU here can run out of memory).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from haiku.core.config import config_from_dict
from haiku.core.embedders import EmbeddingError, get_embedder, local_model_path
from haiku.core.embedders import device as devices
from haiku.core.embedders.batching import (
    ACCELERATOR_BATCH_TEXTS,
    ACCELERATOR_PASS_TEXTS,
    CPU_FORWARD_TOKEN_BUDGET,
    document_batch_size,
    forward_token_budget,
    pipeline_step,
)
from haiku.core.embedders.lean import LeanSentenceEncoder, plain_layout
from haiku.core.embedders.placement import DocumentPlacement
from haiku.core.embedders.tokenizing import AheadTokenizer, tokenizer_threads
from haiku.core.errors import InvalidConfigError

pytestmark = pytest.mark.slow

GPU_HERE = devices.gpu_device_nodes() and devices.torch_gpu_build() is not None
TEXTS = [f"note {i} on the stars of the southern sky, seen from a boat at night" for i in range(48)] + [
    "", "  Mitochondria produce ATP. ", "The seasons follow the tilt of the Earth's axis " * 30,
]


def _config(tmp_path: Path, **embeddings):
    return config_from_dict({"storage": {"data_dir": str(tmp_path / "data")}, "embeddings": embeddings})


@pytest.fixture(scope="module")
def lean_parts():
    from transformers import AutoModel, AutoTokenizer

    path = local_model_path()
    return AutoModel.from_pretrained(path, local_files_only=True), AutoTokenizer.from_pretrained(path), plain_layout(path)


@pytest.mark.skipif(GPU_HERE, reason="this machine has a GPU: auto takes it")
def test_auto_without_a_gpu_embeds_on_the_cpu_and_never_imports_torch_to_find_out(tmp_path):
    code = (
        "import sys; from haiku.core.config import AppConfig; from haiku.core.embedders import get_embedder\n"
        "e = get_embedder(AppConfig()); print(e.batch_size, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["64", "False"]


def test_the_probe_takes_a_gpu_from_its_device_nodes_and_a_cuda_build_of_torch(tmp_path, monkeypatch):
    version = tmp_path / "version.py"
    version.write_text("cuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n")
    assert devices.torch_gpu_build(version) == "cuda 12.4"
    version.write_text("cuda: Optional[str] = None\nhip: Optional[str] = None\n")
    assert devices.torch_gpu_build(version) is None

    monkeypatch.setattr(devices, "DEV", tmp_path)
    monkeypatch.setattr(devices, "torch_gpu_build", lambda version_file=None: "cuda 12.4")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert devices.probable_device("auto") == "cpu"  # no device node
    (tmp_path / "nvidia0").touch()
    assert devices.probable_device("auto") == "cuda:0"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # as Ray sets it for a worker that reserved no GPU
    assert devices.probable_device("auto") == "cpu"
    assert devices.probable_device("cuda") == "cuda:0" and devices.probable_device("cuda:1") == "cuda:1"


@pytest.mark.skipif(GPU_HERE, reason="this machine has a GPU")
def test_auto_falls_back_to_the_cpu_when_torch_cannot_use_the_gpu_it_seemed_to_have():
    device, why = devices.confirm_device("auto", "cuda:0")
    assert device == "cpu" and "cannot use a CUDA device" in why


@pytest.mark.skipif(GPU_HERE, reason="this machine has a GPU")
def test_a_gpu_named_on_a_machine_without_one_is_an_error_naming_the_key(tmp_path):
    embedder = get_embedder(_config(tmp_path, document_device="cuda"))
    assert embedder.batch_size == ACCELERATOR_BATCH_TEXTS  # sized from the setting, before torch is asked
    with pytest.raises(EmbeddingError, match=r"embeddings\.document_device is cuda, but torch"):
        embedder.encode(["a note"])  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("embeddings", "keys"),
    [
        ({"document_runtime": "onnx", "document_device": "cuda:0"}, ("document_runtime", "document_device")),
        ({"document_runtime": "onnx", "document_precision": "bf16"}, ("document_runtime", "document_precision")),
        ({"document_device": "gpu"}, ("document_device",)),
    ],
)
def test_a_device_or_precision_the_encoder_cannot_honour_is_a_configuration_error(tmp_path, embeddings, keys):
    with pytest.raises(InvalidConfigError) as error:
        _config(tmp_path, **embeddings)
    assert all(key in str(error.value) for key in keys)


def test_onnx_asked_for_by_name_keeps_documents_on_the_cpu():
    placement = DocumentPlacement("auto", "auto", "onnx")
    assert placement.probable_device == "cpu" and placement.decide() == ("cpu", "fp32")


def test_batches_and_passes_are_sized_for_the_device():
    assert document_batch_size(64, "cpu") == 64 and pipeline_step(64, "cpu") == 64
    assert document_batch_size(64, "cuda:0") == ACCELERATOR_BATCH_TEXTS == 4096
    assert document_batch_size(8192, "cuda:0") == 8192  # a larger configured batch is kept
    assert pipeline_step(4096, "cuda:0") == ACCELERATOR_PASS_TEXTS == 1024
    assert forward_token_budget("cpu") == CPU_FORWARD_TOKEN_BUDGET
    assert forward_token_budget("cuda:0") == 1024 * 256
    assert DocumentPlacement("cuda:0", "auto", "auto").batch_size(64) == 4096
    assert devices.resolve_precision("auto", "cuda:0") == "fp16" and devices.resolve_precision("auto", "cpu") == "fp32"


def test_a_worker_given_gpus_by_its_scheduler_embeds_on_its_first_visible_one():
    assert devices.assigned_device("cuda:3", [3]) == "cuda:0"
    assert devices.assigned_device("auto", ["2"]) == "cuda:0"
    assert devices.assigned_device("cpu", [0]) == "cpu"
    assert devices.assigned_device("auto", []) == "auto"


def test_bf16_on_the_cpu_gives_vectors_within_0_999_cosine_of_fp32(tmp_path):
    reduced = get_embedder(_config(tmp_path, document_device="cpu", document_precision="bf16"))
    full = get_embedder(_config(tmp_path, document_device="cpu"))
    ours = np.asarray(reduced.encode(TEXTS))  # type: ignore[attr-defined]
    theirs = np.asarray(full.encode(TEXTS))  # type: ignore[attr-defined]
    assert reduced.describe_placement() == {"device": "cpu", "precision": "bf16", "runtime": "torch"}  # type: ignore[attr-defined]
    assert reduced.identity == full.identity  # the database's embedder identity does not change
    assert (ours * theirs).sum(axis=1).min() >= 0.999


def test_tokenizing_ahead_gives_the_features_of_the_models_own_tokenizer(lean_parts):
    _, tokenizer, _ = lean_parts
    ahead = AheadTokenizer(tokenizer, 256, threads=3)
    [(_, features)] = list(ahead.ahead([list(range(len(TEXTS)))], TEXTS))
    reference = tokenizer(TEXTS, padding=True, truncation="longest_first", max_length=256, return_tensors="np")
    assert list(features) == ["input_ids", "token_type_ids", "attention_mask"]
    assert all(np.array_equal(features[name], reference[name]) for name in features)
    # The shards go to a pool of three; on a busy machine one thread may take them all in one pass,
    # so the pool is given a few passes to show it tokenizes on more than one.
    for _ in range(20):
        if len(ahead.threads_used) > 1:
            break
        list(ahead.ahead([list(range(len(TEXTS)))], TEXTS))
    assert len(ahead.threads_used) > 1


class _SlowShards(AheadTokenizer):
    """Tokenizes as the real one does, slowly, and says when."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spans: list[tuple[float, float]] = []

    def shard(self, texts):
        started = time.monotonic()
        time.sleep(0.2)
        result = super().shard(texts)
        self.spans.append((started, time.monotonic()))
        return result


def test_the_next_batches_are_tokenized_while_the_model_runs_the_current_one(lean_parts):
    _, tokenizer, _ = lean_parts
    ahead = _SlowShards(tokenizer, 256, threads=1)
    model_spans = []
    order = list(range(len(TEXTS)))
    for _ in ahead.ahead([order[i : i + 8] for i in range(0, 40, 8)], TEXTS):
        started = time.monotonic()
        time.sleep(0.2)  # the device working on this batch
        model_spans.append((started, time.monotonic()))
    overlapping = [t for t in ahead.spans if any(t[0] < m[1] and m[0] < t[1] for m in model_spans)]
    assert len(ahead.spans) == 5 and len(overlapping) >= 3


def test_tokenizer_threads_follow_the_tokenizers_own_parallelism(monkeypatch):
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    assert tokenizer_threads("cpu") == 1 and tokenizer_threads("cuda:0") == 1  # it spreads each call itself
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    assert (tokenizer_threads("cpu") == 1 and tokenizer_threads("cuda:0") > 1) or _one_cpu()


def _one_cpu() -> bool:
    from haiku.core.embedders.tokenizing import available_cpus

    return available_cpus() == 1


class _RefusesLargePasses:
    """The real model, behind an allocator that refuses passes of more than ``limit`` padded tokens."""

    def __init__(self, model, limit: int) -> None:
        self.model, self.limit, self.passes = model, limit, []

    def eval(self):
        return self

    def to(self, **_):
        return self

    @property
    def config(self):
        return self.model.config

    def __call__(self, **features):
        import torch

        rows, width = features["input_ids"].shape
        self.passes.append((rows, width))
        if rows * width > self.limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate a pass of {rows}x{width}")
        return self.model(**features)


def test_a_pass_the_allocator_refuses_is_halved_and_gives_the_same_vectors(lean_parts):
    model, tokenizer, layout = lean_parts
    plain = LeanSentenceEncoder(model, tokenizer, layout).encode(TEXTS[:48], 64)
    refusing = _RefusesLargePasses(model, limit=400)
    encoder = LeanSentenceEncoder(refusing, tokenizer, layout)
    vectors = encoder.encode(TEXTS[:48], 64)
    assert encoder.halvings >= 2 and encoder.forward_budget <= 400
    assert all(rows * width <= 400 for rows, width in refusing.passes[encoder.halvings :])
    assert np.abs(np.asarray(vectors) - np.asarray(plain)).max() < 1e-5


def test_one_text_the_allocator_still_refuses_is_an_embedding_error(lean_parts):
    model, tokenizer, layout = lean_parts
    encoder = LeanSentenceEncoder(_RefusesLargePasses(model, limit=10), tokenizer, layout)
    with pytest.raises(EmbeddingError, match="ran out of memory embedding one text"):
        encoder.encode([TEXTS[-1]], 64)


def test_status_shows_where_the_running_ingester_embeds_documents(tmp_path):
    from haiku.ingester.owner import OwnerRecord, read_owner
    from haiku.ingester.status import render_status

    queue = tmp_path / "queue.sqlite"
    owner = OwnerRecord.take(queue, "serve")
    assert owner is not None
    try:
        assert read_owner(queue)["encoder"] is None
        owner.note(encoder={"device": "cuda:0", "precision": "fp16", "runtime": "torch"})
        running = read_owner(queue)
        assert running["encoder"] == {"device": "cuda:0", "precision": "fp16", "runtime": "torch"}
        text = render_status({"queue": str(queue), "queue_exists": False, "running": running, "databases": []})
        assert "embedding documents on cuda:0 (fp16, torch)" in text
        assert json.loads(json.dumps(running))["command"] == "serve"
    finally:
        owner.release()


def test_the_encoder_modules_import_nothing_but_torch_transformers_and_tokenizers():
    # bench/gpu_embed.py runs them on a GPU machine that has only those (docs/benchmarks.md).
    code = (
        "import sys; import haiku.core.embedders.lean, haiku.core.embedders.device, haiku.core.embedders.tokenizing\n"
        "print(sorted(m for m in ('pydantic', 'structlog', 'lancedb', 'pyarrow', 'docling', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_an_encoder_tokenizes_on_its_own_threads_not_the_callers(lean_parts):
    model, tokenizer, layout = lean_parts
    encoder = LeanSentenceEncoder(model, tokenizer, layout, tokenizer_threads=2)
    caller = threading.get_ident()
    encoder.encode(TEXTS[:20], 8)
    assert caller not in encoder.tokenizer.threads_used and len(encoder.tokenizer.threads_used) >= 1
