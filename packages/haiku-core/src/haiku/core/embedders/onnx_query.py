"""A torch-free query encoder: the local model exported once to ONNX.

Embedding one search query with torch means importing torch and transformers
and loading the model: 3-10 s of a command-line search that otherwise takes
well under a second. The same network run by ONNX Runtime, with the model's own
``tokenizer.json`` read by the ``tokenizers`` library, answers in a fraction of
that, and its vectors match the torch ones to about 1e-7 (a mean-pooled,
normalised all-MiniLM-L6-v2 query). The recorded embedder identity does not
change: databases embedded with torch are searched with the ONNX query vectors
as they are.

The export runs once per model (``export_query_model``, run in a child
process by ``haiku.core.embedders.onnx_export`` when ``haiku-rag
download-models``, the ingester's start or the first query needs it; the
document encoder, ``onnx_documents``, runs the same export) and is cached in
``embeddings.model_cache_dir`` (default ``~/.cache/haiku.rag/models``), keyed by
the model's name and its files; it is checked against the torch encoder before
it is kept, and on every load against what it recorded of itself
(``haiku.core.embedders.onnx_manifest``): a damaged export is made again.
Only plain layouts (see ``haiku.core.embedders.lean``) are exported;
anything else, or any failure, keeps the torch encoder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haiku.core.embedders.batching import model_texts
from haiku.core.embedders.onnx_manifest import (
    MANIFEST_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    DamagedExportError,
    file_records,
    read_manifest,
    verified_manifest,
    write_manifest,
)
from haiku.core.embedders.onnx_session import export_session, export_tokenizer, unit_vectors

__all__ = [
    "EXPORT_FORMAT",
    "MANIFEST_FILE",
    "MIN_PROBE_COSINE",
    "DamagedExportError",
    "OnnxQueryEncoder",
    "cache_key",
    "export_query_model",
    "exported_model_dir",
    "open_export",
    "remove_export",
]

# Changing how the export is made changes every cache key. 3: the manifest names its source,
# and the graph is stored already optimised. 4: the manifest records each file's size,
# modification time and checksum.
EXPORT_FORMAT = 4
# The export is kept only when every probe vector agrees with torch this closely.
MIN_PROBE_COSINE = 0.9999
_PROBES = (
    "What causes the seasons on Earth?",
    "mitochondria produce ATP through oxidative phosphorylation in eukaryotic cells",
    "a",
    "Vaccination schedules for children under five years old, with boosters at 4-6 years and the evidence "
    "behind each recommendation, as published by national health agencies and reviewed annually. " * 6,
)


def onnx_runtime_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("tokenizers") is not None


def cache_key(name: str, model_path: str | Path) -> str:
    """Which export serves this model: its name, and each file's name, size and modification time."""
    root = Path(model_path)
    digest = hashlib.sha256(f"{EXPORT_FORMAT}\0{name}\0{root.resolve()}".encode())
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        stat = file.stat()
        digest.update(f"\0{file.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in name.split("/")[-1])[:48]
    return f"{slug}-{digest.hexdigest()[:16]}"


def exported_model_dir(cache_dir: Path, name: str, model_path: str | Path) -> Path | None:
    """The finished export for this model, if there is one."""
    folder = cache_dir / "onnx" / cache_key(name, model_path)
    if all((folder / name).is_file() for name in (MODEL_FILE, WEIGHTS_FILE, MANIFEST_FILE)):
        return folder
    return None


def open_export(folder: Path, layout: dict[str, Any]) -> OnnxQueryEncoder:
    """The encoder of a finished export, once it is checked to be what was exported for a model of ``layout``.

    Raises ``DamagedExportError`` when it is not (``haiku.core.embedders.onnx_manifest``).
    """
    return OnnxQueryEncoder(folder, verified_manifest(folder, layout))


def remove_export(folder: Path) -> None:
    """Remove an export (a damaged one: the next query makes it again)."""
    shutil.rmtree(folder, ignore_errors=True)


class OnnxQueryEncoder:
    """Runs an exported plain model: tokenize, ONNX forward pass, pool, normalise."""

    def __init__(self, folder: Path, manifest: dict[str, Any] | None = None) -> None:
        if manifest is None:
            manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        self._pooling: str = manifest["pooling"]
        self._lowercase: bool = manifest["do_lower_case"]
        self._inputs: list[str] = manifest["inputs"]
        self.dimension: int = manifest["dimension"]
        self._tokenizer = export_tokenizer(folder, manifest)
        self._session = export_session(folder, manifest, _one_query_at_a_time)

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one text per forward pass (queries come one at a time)."""
        import numpy as np

        out: list[list[float]] = []
        for cleaned in model_texts(texts, self._lowercase):
            encoding = self._tokenizer.encode(cleaned)
            feeds = {
                "input_ids": np.asarray([encoding.ids], dtype=np.int64),
                "attention_mask": np.asarray([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
            }
            (tokens,) = self._session.run(None, {name: feeds[name] for name in self._inputs})
            out.append(unit_vectors(tokens, feeds["attention_mask"], self._pooling)[0].tolist())
        return out


def _one_query_at_a_time(options: Any) -> None:
    # A query is one short sequence: one thread runs it in ~10 ms, and neither a
    # thread pool nor re-packed weights (each ~50-100 ms at session start on 2 cores)
    # pays off in a process that embeds one text (docs/benchmarks.md, "Command-line
    # latency"). Outputs differ from the packed kernels by ~1e-6.
    options.intra_op_num_threads = 1
    options.add_session_config_entry("session.disable_prepacking", "1")


def export_query_model(cache_dir: Path, name: str, model_path: str | Path, layout: dict[str, Any]) -> Path:
    """Export the plain model at ``model_path`` to ONNX, check it against torch, and keep it.

    Needs torch, transformers and onnx (``haiku-core[local]``). Written to a
    temporary folder and renamed into place, so a crash leaves no half export
    and two processes exporting at once both end with a whole one.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    from haiku.core.embedders.lean import LeanSentenceEncoder

    target = cache_dir / "onnx" / cache_key(name, model_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
        model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
        inputs = [n for n in tokenizer.model_input_names if n in ("input_ids", "attention_mask", "token_type_ids")]
        sample = tokenizer(["a query", "a longer second query text"], padding=True, return_tensors="pt")

        class _Positional(torch.nn.Module):
            """The exporter passes inputs by position; the model wants them by name."""

            def __init__(self, inner: torch.nn.Module) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *args: torch.Tensor) -> torch.Tensor:
                return self.inner(**dict(zip(inputs, args, strict=True)), return_dict=False)[0]

        axes = {n: {0: "batch", 1: "sequence"} for n in inputs}
        axes["token_embeddings"] = {0: "batch", 1: "sequence"}
        # The tracer's notes (constant shapes, index operators) are about graphs this model does not build.
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Positional(model),
                tuple(sample[n] for n in inputs),
                str(work / MODEL_FILE),
                input_names=inputs,
                output_names=["token_embeddings"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        _weights_beside_graph(work / MODEL_FILE)
        optimized_by = _optimize_graph(work)
        shutil.copyfile(Path(model_path) / TOKENIZER_FILE, work / TOKENIZER_FILE)
        max_length = min(layout["max_seq_length"] or tokenizer.model_max_length, tokenizer.model_max_length)
        manifest = {
            "model": name,
            "source": str(Path(model_path).resolve()),
            "export_format": EXPORT_FORMAT,
            "optimized_by": optimized_by,
            "pooling": layout["pooling"],
            "do_lower_case": layout["do_lower_case"],
            "max_length": int(max_length),
            "inputs": inputs,
            "dimension": int(layout["dimension"] or model.config.hidden_size),
            "files": file_records(work),
        }
        write_manifest(work, manifest)
        worst = _probe(OnnxQueryEncoder(work), LeanSentenceEncoder.load(str(model_path), layout))
        if worst < MIN_PROBE_COSINE:
            raise RuntimeError(f"the ONNX export disagrees with torch (cosine {worst:.6f} < {MIN_PROBE_COSINE})")
        manifest["probe_min_cosine"] = worst
        write_manifest(work, manifest)
        try:
            os.replace(work, target)
        except OSError:
            if exported_model_dir(cache_dir, name, model_path) is None:  # not another process's finished export
                raise
        _drop_stale_exports(target)
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _drop_stale_exports(kept: Path) -> None:
    """Remove the exports no one will read again, once ``kept`` is in place.

    Those of an older ``EXPORT_FORMAT``; those of the same model files before
    they changed (same source, another key); and those whose source folder is
    gone (a deleted virtual environment or checkout). Each is ~90 MB.
    """
    source = read_manifest(kept).get("source")
    for export in kept.parent.iterdir():
        if export == kept or export.name.startswith("."):
            continue  # another process's unfinished export is its own business
        manifest = read_manifest(export)
        if not manifest:
            continue  # not an export: left alone
        try:
            older = int(manifest.get("export_format", 0)) < EXPORT_FORMAT
        except (TypeError, ValueError):
            continue
        origin = manifest.get("source")
        superseded = origin is not None and origin == source
        orphaned = isinstance(origin, str) and not Path(origin).exists()
        if older or superseded or orphaned:
            shutil.rmtree(export, ignore_errors=True)


def _weights_beside_graph(path: Path) -> None:
    import onnx

    model = onnx.load(str(path))
    onnx.save_model(
        model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location=WEIGHTS_FILE,
        size_threshold=1024,
    )


def _optimize_graph(folder: Path) -> str:
    """Store the graph as ONNX Runtime optimises it, so a query session need not; returns its version.

    The "extended" level (operator fusions) and not "all", whose layout changes
    may depend on the processor; the result is tied to this ONNX Runtime's
    version, which the manifest records (another version optimises again).
    """
    import onnxruntime

    optimized = folder / "optimized"
    optimized.mkdir()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(optimized / MODEL_FILE)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS_FILE)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    onnxruntime.InferenceSession(str(folder / MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"])
    for name in (MODEL_FILE, WEIGHTS_FILE):
        os.replace(optimized / name, folder / name)
    optimized.rmdir()
    return str(onnxruntime.__version__)


def _probe(onnx: OnnxQueryEncoder, torch_encoder: Any) -> float:
    """The lowest cosine between the two encoders' vectors of the probe texts."""
    import numpy as np

    ours = np.asarray(onnx.encode(_PROBES), dtype=np.float64)
    theirs = np.asarray(torch_encoder.encode(list(_PROBES), 8), dtype=np.float64)
    return float(min((ours * theirs).sum(axis=1)))
