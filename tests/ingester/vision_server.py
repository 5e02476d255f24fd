"""A scripted stand-in for an OpenAI-compatible vision endpoint, on 127.0.0.1.

The one mock in the picture-description tests, because no vision model can
run here: a real HTTP server answering ``POST /v1/chat/completions`` whose
description of a picture is computed from the picture itself (its size and
the colour of its first pixel), so a test knows what each picture should be
described as. It records every request and how many were in flight at once;
``fail`` and ``hang`` name colours it answers with HTTP 500, or not at all
within a test's timeout.
"""

from __future__ import annotations

import base64
import io
import threading
import time
from typing import Any

from support import LoopbackServer, json_handler

DATA_URL = "data:image/png;base64,"


def colour_of(png: bytes) -> str:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    red, green, blue = image.getpixel((0, 0))
    return f"#{red:02x}{green:02x}{blue:02x}"


def description_of(png: bytes) -> str:
    """What the server says of ``png``: deterministic, so a test can expect it."""
    from PIL import Image

    width, height = Image.open(io.BytesIO(png)).size
    return f"A {width} by {height} picture filled with colour {colour_of(png)}."


class VisionServer:
    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.delay_s = delay_s
        self.fail: set[str] = set()
        self.hang: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._http = LoopbackServer(
            json_handler(lambda path, body, headers: self._answer(path, body, headers.get("Authorization")))
        )

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def reset(self) -> VisionServer:
        """Forget the requests; a request still hanging is answered first (and not counted)."""
        self._release.set()
        deadline = time.monotonic() + 10
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        self._release = threading.Event()
        with self._lock:
            self.requests = []
            self.fail, self.hang = set(), set()
            self.max_in_flight = 0
        return self

    def images(self) -> list[bytes]:
        """The PNG of every request received, in order."""
        out = []
        for body in self.requests:
            for part in body["messages"][0]["content"]:
                if part["type"] == "image_url":
                    out.append(base64.b64decode(part["image_url"]["url"][len(DATA_URL):]))
        return out

    def _answer(self, path: str, body: dict[str, Any], authorization: str | None) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append({**body, "authorization": authorization})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if path.rstrip("/") != "/v1/chat/completions":
                return 404, {"error": {"message": f"no route {path}"}}
            url = next(p["image_url"]["url"] for p in body["messages"][0]["content"] if p["type"] == "image_url")
            png = base64.b64decode(url[len(DATA_URL):])
            colour = colour_of(png)
            if colour in self.hang:
                self._release.wait(timeout=30)
                return 500, {"error": {"message": "released"}}
            if self.delay_s:
                time.sleep(self.delay_s)
            if colour in self.fail:
                return 500, {"error": {"message": "the model crashed"}}
            message = {"role": "assistant", "content": description_of(png)}
            return 200, {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
        finally:
            with self._lock:
                self.in_flight -= 1

    def close(self) -> None:
        self._release.set()
        self._http.close()
