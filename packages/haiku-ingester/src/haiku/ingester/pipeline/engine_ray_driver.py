"""The ingester's Ray driver, a child process: ``python -m haiku.ingester.pipeline.engine_ray_driver``.

The ingester talks to the cluster through this process instead of importing
Ray itself: Ray stays out of the daemon's memory and start-up, and a cluster
that goes away takes this process with it (Ray ends a driver that lost its
cluster), never the daemon, which starts another once the cluster is back.

Frames (``protocol``) on stdin and stdout, many requests in flight at once:
first the settings, answered ``{"ready": True}`` or ``{"ok": False, "kind":
"unavailable", "message"}``; then ``{"id", "op": "convert", "name", "format",
"data", "timeout_s"}``, ``{"id", "op": "convert_object", "name", "format",
"ref", "max_file_size", "known_hash", "timeout_s"}`` (the worker reads the
object) and ``{"id", "op": "embed", "texts"}``, each answered with its ``id``:
``{"ok": True, "document" | "vectors"}`` (with ``"hash"`` for an object, and
``"placement"``, where the actor embeds, with vectors), or
``{"ok": False, "kind", "message"}`` where kind is ``conversion``, ``crashed``,
``timeout``, ``embedding`` (the file's or the model's fault), ``read`` (an
object could not be read: retried) or ``unavailable`` (the cluster's).
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import sys
import threading
import time
from typing import Any

_WATCH_INTERVAL_S = 1.0
_WATCH_MISSES = 3  # the cluster's head refused this many checks in a row: it is gone


def _gcs_reachable(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except (OSError, ValueError):
        return False


def _watch_head(address: str) -> None:
    """Exit when the head stops answering: the ingester then sees the cluster gone at once."""
    misses = 0
    while True:
        time.sleep(_WATCH_INTERVAL_S)
        misses = 0 if _gcs_reachable(address) else misses + 1
        if misses >= _WATCH_MISSES:
            print(f"the Ray cluster's head at {address} stopped answering", file=sys.stderr, flush=True)
            os._exit(3)


class Driver:
    """Submits the ingester's requests to the cluster and answers each when its result is in."""

    def __init__(self, hello: dict[str, Any], channel: Any) -> None:
        import ray
        from haiku.ingester.pipeline.engine_ray_tasks import EmbedderActor, convert_file, convert_object

        self._ray = ray
        self._channel = channel
        self._write_lock = threading.Lock()
        self._settings = hello["converter"]
        retries = int(hello["max_task_retries"])
        self._convert = convert_file.options(max_retries=retries, retry_exceptions=False)
        self._convert_object = convert_object.options(max_retries=retries, retry_exceptions=False)
        self._embedder = EmbedderActor.options(
            num_cpus=float(hello["cpus_per_embedder"]), num_gpus=float(hello["gpus_per_embedder"]),
            max_restarts=-1, max_task_retries=retries,
        )
        self._embeddings = hello.get("embeddings")
        self._embedders = int(hello["embedders"])
        self._actors: list[Any] = []  # made by the first texts to embed: a run with none loads no model
        self._next_actor = itertools.cycle(range(self._embedders))

    def reply(self, request_id: int, answer: dict[str, Any]) -> None:
        from haiku.ingester.pipeline.protocol import write_frame

        with self._write_lock:
            write_frame(self._channel, {"id": request_id, **answer})

    def handle(self, request: dict[str, Any]) -> None:
        if request["op"] == "convert":
            self._submit_convert(
                request, self._convert.remote(self._settings, request["name"], request["format"], request["data"])
            )
        elif request["op"] == "convert_object":
            args = (request["name"], request["format"], request["ref"], request["max_file_size"], request["known_hash"])
            self._submit_convert(request, self._convert_object.remote(self._settings, *args))
        else:
            self._submit_embed(request)

    def _submit_convert(self, request: dict[str, Any], ref: Any) -> None:
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            self._ray.cancel(ref, force=True)

        timer = threading.Timer(float(request["timeout_s"]), stop)
        timer.daemon = True
        timer.start()

        def done(future: Any) -> None:
            timer.cancel()
            self.reply(request["id"], self._convert_answer(request["name"], future, timed_out.is_set()))

        ref.future().add_done_callback(done)

    def _convert_answer(self, name: str, future: Any, timed_out: bool) -> dict[str, Any]:
        exceptions = self._ray.exceptions
        try:
            answer = future.result()
        except exceptions.TaskCancelledError:
            if timed_out:
                return {"ok": False, "kind": "timeout", "message": ""}
            return {"ok": False, "kind": "unavailable", "message": f"{name}: its conversion was cancelled"}
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.OutOfMemoryError) as exc:
            return {"ok": False, "kind": "crashed", "message": type(exc).__name__}
        except exceptions.RayTaskError as exc:
            return {"ok": False, "kind": "conversion", "message": f"{name}: {exc.cause or exc}"}
        except Exception as exc:
            return {"ok": False, "kind": "unavailable", "message": f"{type(exc).__name__}: {exc}"}
        if answer.get("ok"):
            return answer
        kind = {"setup": "unavailable", "read": "read"}.get(answer.get("kind"), "conversion")
        return {"ok": False, "kind": kind, "message": answer.get("message") or f"{name}: conversion failed"}

    def _submit_embed(self, request: dict[str, Any]) -> None:
        exceptions = self._ray.exceptions
        if not self._actors:
            self._actors = [self._embedder.remote(self._embeddings) for _ in range(self._embedders)]
        actor = self._actors[next(self._next_actor)]
        ref = actor.embed.remote(request["texts"])

        def done(future: Any) -> None:
            try:
                answer = {"ok": True, **future.result()}
            except exceptions.RayTaskError as exc:
                answer = {"ok": False, "kind": "embedding", "message": str(exc.cause or exc)}
            except Exception as exc:
                answer = {"ok": False, "kind": "unavailable", "message": f"{type(exc).__name__}: {exc}"}
            self.reply(request["id"], answer)

        ref.future().add_done_callback(done)


def _connect(hello: dict[str, Any]) -> str:
    """Join the cluster; returns the head's address to watch ("" for a Ray client)."""
    import ray

    address = hello["address"]
    if not address.startswith("ray://") and address != "auto" and not _gcs_reachable(address):
        raise ConnectionError(f"nothing answers at {address}")
    options: dict[str, Any] = {"address": address, "log_to_driver": False, "logging_level": logging.WARNING}
    if hello.get("node_ip_address"):
        options["_node_ip_address"] = hello["node_ip_address"]
    ray.init(**options)
    if address.startswith("ray://"):
        return ""
    return ray.get_runtime_context().gcs_address


def main() -> int:
    from haiku.ingester.pipeline.protocol import read_frame, write_frame
    from haiku.ingester.pipeline.worker import die_with_parent

    die_with_parent()
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # Ray's own output goes to the log
    requests = sys.stdin.buffer
    hello = read_frame(requests)
    if hello is None:
        return 0
    try:
        head = _connect(hello)
        driver = Driver(hello, channel)
    except Exception as exc:
        write_frame(channel, {"ok": False, "kind": "unavailable", "message": f"{type(exc).__name__}: {exc}"})
        return 1
    if head:
        threading.Thread(target=_watch_head, args=(head,), daemon=True, name="watch-head").start()
    write_frame(channel, {"ready": True, "pid": os.getpid()})
    while True:
        request = read_frame(requests)
        if request is None:
            return 0
        driver.handle(request)


if __name__ == "__main__":
    sys.exit(main())
