"""What runs on the Ray cluster's workers (docs/scale-out.md): one task, one actor.

``convert_file`` converts and chunks one file in a Ray worker process, which
keeps its converter for the files it converts next. ``EmbedderActor`` loads the
embedding model once and embeds batches of texts. Neither writes anywhere: the
results go back to the ingester, which alone writes its databases.

Imported only where Ray runs (the ingester's Ray driver process and the
cluster's workers); the nodes need haiku-ingester installed, at the ingester's
version.
"""

from __future__ import annotations

import sys
from typing import Any

import ray

_converters: dict[tuple, Any] = {}


def _converter(settings: dict[str, Any]) -> Any:
    from haiku.ingester.pipeline.worker import build_converter

    key = tuple(sorted((name, repr(value)) for name, value in settings.items()))
    converter = _converters.get(key)
    if converter is None:
        converter = _converters[key] = build_converter(settings)
    return converter


@ray.remote(num_cpus=1)
def convert_file(settings: dict[str, Any], name: str, fmt: str, data: bytes) -> dict[str, Any]:
    """The local worker's reply for one file: the document, or why the file failed."""
    from haiku.ingester.pipeline.worker import convert_reply

    try:
        converter = _converter(settings)
    except Exception as exc:
        return {"ok": False, "kind": "setup", "message": f"a conversion worker could not start: {exc}"}
    return convert_reply(converter, name, fmt, data)


@ray.remote
class EmbedderActor:
    """The configured local embedding model, loaded once in this actor."""

    def __init__(self, embeddings: dict[str, Any]) -> None:
        from haiku.core.config import AppConfig
        from haiku.core.embedders import get_embedder
        from haiku.core.embedders.device import assigned_device
        from haiku.ingester.pipeline.worker import let_torch_in

        if "torch" in sys.modules and sys.modules["torch"] is None:
            let_torch_in()  # this worker process converted files before
        # The GPUs Ray reserved for this actor (docs/scale-out.md): it sees them as cuda:0, cuda:1, …
        setting = embeddings.get("document_device", "auto")
        embeddings = {**embeddings, "document_device": assigned_device(setting, ray.get_gpu_ids())}
        self._embedder = get_embedder(AppConfig(embeddings=embeddings))
        self._embedder.prepare_document_encoder()
        self._placement = self._embedder.describe_placement()

    def embed(self, texts: list[str]) -> dict[str, Any]:
        """The vectors, and where they were made (the ingester logs it once and ``status`` shows it)."""
        return {"vectors": self._embedder.encode(texts), "placement": self._placement}


@ray.remote(num_cpus=1)
def convert_object(
    settings: dict[str, Any], name: str, fmt: str, ref: dict[str, Any], max_file_size: int, known_hash: str | None
) -> dict[str, Any]:
    """Read an object with this worker's credentials, hash it, and convert it unless the hash is ``known_hash``."""
    from haiku.ingester.errors import PermanentJobError, SkippedFileError
    from haiku.ingester.pipeline.worker import convert_reply
    from haiku.ingester.sources.files import FileFacts, content_hash
    from haiku.ingester.sources.s3 import make_client, object_path, read_object

    uri = ref["uri"]
    facts = FileFacts(path=object_path(uri), format=fmt, content_type="", size=0, revision="")  # type: ignore[arg-type]
    try:
        data = read_object(make_client(ref["options"]), facts, max_file_size=max_file_size)
    except SkippedFileError as exc:  # skipped, not failed: the ingester counts it (haiku.ingester.skips)
        return {"ok": False, "kind": "skipped", "reason": exc.reason.value, "message": str(exc)}
    except PermanentJobError as exc:
        return {"ok": False, "kind": "conversion", "message": str(exc)}
    except Exception as exc:
        return {"ok": False, "kind": "read", "message": f"{uri}: reading it on a Ray worker failed ({exc})"}
    digest = content_hash(data)
    if digest == known_hash:
        return {"ok": True, "hash": digest, "document": None}
    try:
        converter = _converter(settings)
    except Exception as exc:
        return {"ok": False, "kind": "setup", "message": f"a conversion worker could not start: {exc}"}
    return {**convert_reply(converter, name, fmt, data), "hash": digest}
