"""What a query-encoder export recorded of itself, and the check that it still holds.

An export (``haiku.core.embedders.onnx_query``) is a folder of files in the
model cache, where anything may damage it: a disk filling up mid-copy, a
backup restored over it, a hand edit. A damaged one must not run: a graph
whose inputs differ from the manifest's fails every query, a changed pooling
setting changes every query vector (and so every score) without a word, and a
truncated weights file makes each process fall back to torch.

So the export records, in its manifest, each file's size, modification time
and SHA-256, and the settings it was made with. Each load compares the
settings with the model's own (its pooling and lower-casing), and each file's
size and modification time with the record: a few ``stat`` calls, so a
search starts as fast as before. Only a file whose modification time moved
(a copy, a restore, a ``touch``) is hashed again; when the hash still matches,
the record takes the new time, so the next load is cheap again. The loader
then compares the graph's own input names with the manifest's. Whatever fails
raises ``DamagedExportError``; the embedder removes that export and makes it
again (and a new export is checked against torch before it is kept), or uses
torch when it cannot (docs/configuration.md, "The query encoder").
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

MODEL_FILE = "model.onnx"
# The weights sit beside the graph: ONNX Runtime maps such a file instead of
# copying it out of the graph, which opens the session a third faster.
WEIGHTS_FILE = "model.onnx.data"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"
EXPORT_FILES = (MODEL_FILE, WEIGHTS_FILE, TOKENIZER_FILE)
# The inputs an encoder knows how to feed.
KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


class DamagedExportError(Exception):
    """An export that is no longer what was written; the message says what differs.

    An internal signal, outside the error tree on purpose (``haiku.core.errors``): the encoder
    that meets it removes the export and makes it again, so no caller ever sees it.
    """


def read_manifest(export: Path) -> dict[str, Any]:
    """The export's manifest, or ``{}`` when it is missing or not a JSON object."""
    try:
        manifest = json.loads((export / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def write_manifest(export: Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest whole (a temporary file, then a rename)."""
    fd, temporary = tempfile.mkstemp(prefix=".manifest-", dir=export)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(manifest, out, indent=2)
        os.replace(temporary, export / MANIFEST_FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def file_records(export: Path) -> dict[str, dict[str, Any]]:
    """Each export file's size, modification time and SHA-256, as the manifest records them."""
    records = {}
    for name in EXPORT_FILES:
        stat = (export / name).stat()
        records[name] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": _sha256(export / name)}
    return records


def verified_manifest(export: Path, layout: dict[str, Any]) -> dict[str, Any]:
    """The manifest of an export that is still what was written for a model of ``layout``.

    Raises ``DamagedExportError`` otherwise (see the module docstring).
    """
    manifest = read_manifest(export)
    if not manifest:
        raise DamagedExportError(f"its {MANIFEST_FILE} is missing or not a JSON object")
    _check_settings(manifest, layout)
    records = manifest.get("files")
    if not isinstance(records, dict) or any(not isinstance(records.get(name), dict) for name in EXPORT_FILES):
        raise DamagedExportError(f"its {MANIFEST_FILE} records no size and checksum of each file")
    moved = [name for name in EXPORT_FILES if _check_file(export / name, records[name])]
    if moved:  # the same bytes at another time: recorded, so the next load need not hash them
        for name in moved:
            records[name]["mtime_ns"] = (export / name).stat().st_mtime_ns
        try:
            write_manifest(export, manifest)
        except OSError:
            pass  # a read-only cache: each load hashes the moved files again, and still runs
    return manifest


def check_inputs(manifest_inputs: list[str], graph_inputs: list[str]) -> None:
    """The graph takes exactly the inputs the manifest names."""
    if sorted(manifest_inputs) != sorted(graph_inputs):
        raise DamagedExportError(
            f"its graph takes the inputs {', '.join(sorted(graph_inputs))}, "
            f"its manifest names {', '.join(sorted(manifest_inputs))}"
        )


def _check_settings(manifest: dict[str, Any], layout: dict[str, Any]) -> None:
    for key in ("pooling", "do_lower_case"):
        if manifest.get(key) != layout[key]:
            raise DamagedExportError(f"its {key} is {manifest.get(key)!r}, the model's is {layout[key]!r}")
    dimension, max_length = manifest.get("dimension"), manifest.get("max_length")
    if layout["dimension"] is not None and dimension != layout["dimension"]:
        raise DamagedExportError(f"its dimension is {dimension!r}, the model's is {layout['dimension']!r}")
    for key, value in (("dimension", dimension), ("max_length", max_length)):
        if type(value) is not int or value < 1:
            raise DamagedExportError(f"its {key} is {value!r}, not a positive whole number")
    inputs = manifest.get("inputs")
    if not isinstance(inputs, list) or "input_ids" not in inputs or not KNOWN_INPUTS.issuperset(inputs):
        raise DamagedExportError(f"its inputs are {inputs!r}, not among {', '.join(sorted(KNOWN_INPUTS))}")


def _check_file(path: Path, record: dict[str, Any]) -> bool:
    """Whether ``path`` holds the recorded bytes at another modification time; raises if not those bytes."""
    try:
        stat = path.stat()
    except OSError:
        raise DamagedExportError(f"{path.name} is missing") from None
    if stat.st_size != record.get("size"):
        raise DamagedExportError(f"{path.name} is {stat.st_size:,} bytes; the export wrote {record.get('size')!r}")
    if stat.st_mtime_ns == record.get("mtime_ns"):
        return False
    if _sha256(path) != record.get("sha256"):
        raise DamagedExportError(f"{path.name} was changed after the export (its checksum differs)")
    return True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
