"""A scripted stand-in for a multimodal embedding endpoint (vLLM's OpenAI-compatible ``/v1/embeddings``), on 127.0.0.1.

The one mock of the image-query tests, because no multimodal embedding model
can run here: a real HTTP server answering ``POST /v1/embeddings`` in both of
the shapes vLLM takes, ``input`` (texts) and chat-style ``messages`` (an
``image_url`` data URL, and optionally text). Its vectors are deterministic
unit vectors of ``DIM`` dimensions: a text's is seeded by the text, an image's
by the colour of its first pixel (decoded from the PNG, JPEG… sent), so a
picture re-encoded by the converter still maps to the vector of the file it
came from. It records every request.
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
from typing import Any

import numpy as np

from support import LoopbackServer, json_handler

DIM = 16
MODEL = "scripted-multimodal"


def _unit(seed: str) -> list[float]:
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    vector = rng.standard_normal(DIM)
    return (vector / np.linalg.norm(vector)).astype("float32").tolist()


def text_vector(text: str) -> list[float]:
    return _unit(f"text:{text}")


def image_colour(data: bytes) -> str:
    from PIL import Image

    red, green, blue = Image.open(io.BytesIO(data)).convert("RGB").getpixel((0, 0))
    return f"#{red:02x}{green:02x}{blue:02x}"


def image_vector(data: bytes) -> list[float]:
    return _unit(f"image:{image_colour(data)}")


class MultimodalServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._http = LoopbackServer(json_handler(self._record_and_answer))

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def _record_and_answer(self, path: str, body: dict[str, Any], headers: Any) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
        return self._answer(path, body)

    def image_requests(self) -> list[dict[str, Any]]:
        return [body for body in self.requests if "messages" in body]

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.rstrip("/") != "/v1/embeddings":
            return 404, {"error": {"message": f"no route {path}"}}
        if "input" in body:
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = [text_vector(text) for text in texts]
        else:
            parts = body["messages"][0]["content"]
            urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
            if not urls:
                vectors = [text_vector(" ".join(p["text"] for p in parts if p["type"] == "text"))]
            else:
                try:
                    vectors = [image_vector(base64.b64decode(urls[0].partition(",")[2]))]
                except Exception as exc:  # an image the server cannot decode: vLLM answers 400
                    return 400, {"error": {"message": f"cannot decode image: {exc}"}}
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        return 200, {"object": "list", "data": data, "model": body.get("model")}

    def close(self) -> None:
        self._http.close()


def multimodal_embeddings(base_url: str) -> dict[str, Any]:
    """The ``embeddings`` section naming the scripted endpoint."""
    return {"model": {"provider": "openai-multimodal", "name": MODEL, "vector_dim": DIM, "base_url": base_url}}
