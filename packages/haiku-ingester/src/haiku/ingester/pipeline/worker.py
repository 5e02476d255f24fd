"""A conversion worker process: ``python -m haiku.ingester.pipeline.worker``.

It reads request frames on stdin and answers on stdout, one at a time, so the
daemon can time out or lose a worker (docling hanging or crashing on a bad file)
without losing itself. The protocol keeps stdout to itself: anything else that
prints, Python or native code, lands on stderr, which the daemon logs.

Frames: first ``{"tokenizer_dir", "chunk_size", "ocr", "pdf_layout",
"structure", "ocr_slot"}`` (``ocr_slot``: the pool's lock file, see
``haiku.core.convert.ocr_slot``), answered
``{"ready": True}`` (or ``{"ok": False, ...}``); then ``{"name", "format", "data"}``,
answered ``{"ok": True, "document": ConvertedDocument, "pages": True}`` followed by
one frame per page image (a ``PageImage``) and a ``None`` frame, or
``{"ok": False, "kind", "message"}``. Page images travel one per frame, rendered
one at a time, so neither process builds a frame the size of a long PDF's pages.

After a file that ran OCR the worker drops the models and hands the memory
back to the OS; if it still stands more than ``retire_over_mib`` (hello frame;
``RETIRE_OVER_MIB`` by default) over its resting size, that file is its last:
the reply carries ``"retire": True`` and the worker exits after the file's last
frame, between jobs, so the pool starts a fresh one. A scan or an image leaves
40-65 MiB behind, over half of it ONNX Runtime's and OpenCV's code, which the
workers share; a fresh worker after every such file would cost about 1.3
CPU-seconds a file to give that back, so the bound only stops a worker from
creeping up over many scans or keeping what a huge page took. A file without
OCR costs nothing here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import types
from collections.abc import Mapping
from typing import Any

RETIRE_OVER_MIB = 96.0  # how far over its resting RSS a file's OCR may leave a worker that goes on


def die_with_parent() -> None:
    """Linux: SIGKILL this worker when the daemon dies, even by kill -9."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # elsewhere the worker still exits at end of input


_HIDDEN = ("torch", "transformers", "sentence_transformers")
_STUB = "docling.pipeline.asr_transformers"


def _keep_torch_out() -> None:
    """This worker runs no model, so it needs neither torch nor transformers
    (about 200 MB and seconds of start-up). docling imports them only where they
    are optional (hardware probes, VLM options, the Hugging Face tokenizer, which
    the worker replaces with ``tokenizers``), so they are hidden; its speech
    pipeline imports torch unconditionally, so that one module, never used for
    the formats converted here, is stood in for."""
    for name in _HIDDEN:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    stub = types.ModuleType(_STUB)

    class TransformersAsrDecoder:  # never constructed: audio is not an allowed format
        def __init__(self, *args, **kwargs) -> None:
            raise RuntimeError("speech recognition is not available in a haiku conversion worker")

    stub.TransformersAsrDecoder = TransformersAsrDecoder  # type: ignore[attr-defined]
    sys.modules.setdefault(_STUB, stub)


def let_torch_in() -> None:
    """Undo ``_keep_torch_out`` and forget what was imported under it."""
    for name in [*_HIDDEN, _STUB]:
        if sys.modules.get(name) is None or name == _STUB:
            sys.modules.pop(name, None)
    for name in [m for m in sys.modules if m.split(".")[0] in ("docling", "docling_core")]:
        del sys.modules[name]


def build_converter(settings: Mapping[str, Any]):
    """The converter ``settings`` describe (``engine.converter_settings``: the hello frame, a Ray task's)."""
    from haiku.core.convert.converter import Converter
    from haiku.core.convert.structure import StructureOptions

    def build() -> Converter:
        return Converter(
            tokenizer_dir=settings["tokenizer_dir"],
            chunk_size=int(settings["chunk_size"]),
            ocr=settings.get("ocr", "auto"),
            pdf_layout=settings.get("pdf_layout", "auto"),
            structure=StructureOptions(**(settings.get("structure") or {})),
        )

    _keep_torch_out()
    try:
        return build()
    except ImportError:
        # A docling release that needs torch where this one did not: pay for it.
        let_torch_in()
        return build()


def main() -> int:
    from haiku.ingester.pipeline.protocol import read_frame, write_frame

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the daemon, which stops us
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    requests = sys.stdin.buffer

    import logging

    logging.basicConfig(level=logging.ERROR, stream=sys.stderr, format="%(name)s: %(message)s")

    hello = read_frame(requests)
    if hello is None:
        return 0
    try:
        converter = build_converter(hello)
    except Exception as exc:
        write_frame(channel, {"ok": False, "kind": type(exc).__name__, "message": str(exc)})
        return 1
    from haiku.core.convert.ocr_slot import share_slot

    share_slot(hello.get("ocr_slot"))
    # Below the encoder from now on (the imports above ran at full speed):
    # conversion needs a tenth of the CPU the encoder does, and must not take
    # the encoder's cores from it while there is embedding to do.
    with contextlib.suppress(OSError):
        os.nice(10)
    from haiku.core.convert.ocr import release, times_loaded
    from haiku.core.memory import resident_mib

    resting = resident_mib()  # None where /proc cannot tell: the worker is then never replaced
    bound = None if resting is None else resting + float(hello.get("retire_over_mib", RETIRE_OVER_MIB))
    write_frame(channel, {"ready": True, "pid": os.getpid()})
    while True:
        request = read_frame(requests)
        if request is None:
            return 0
        loads = times_loaded()
        reply, pages = converted(converter, request["name"], request["format"], request["data"], stream=True)
        ran_ocr = times_loaded() != loads
        if ran_ocr:
            release()  # what the steps after OCR (layout, chunks, structure) freed goes back too
        now = resident_mib() if ran_ocr and bound is not None else None
        retire = now is not None and bound is not None and now > bound
        write_frame(channel, {**reply, "retire": True} if retire else reply)
        if pages is not None:
            _send_pages(channel, request["name"], pages)
        if retire:
            return 0


def convert_reply(converter, name: str, fmt: str, data: bytes) -> dict:
    """``{"ok": True, "document"}`` (page images inside), or ``{"ok": False, "kind", "message"}``."""
    return converted(converter, name, fmt, data, stream=False)[0]


def converted(converter, name: str, fmt: str, data: bytes, *, stream: bool):
    """The reply for one file, and with ``stream`` the page images to send after it (``None``: none)."""
    pages = None
    try:
        document = converter.convert(name=name, fmt=fmt, data=data, pages=not stream)
        if stream and document.structure is not None:
            pages = _pages_or_none(converter, name, fmt, data)
    except RecursionError:
        return {"ok": False, "kind": "ConversionError", "message": f"{name}: too deeply nested to convert"}, None
    except Exception as exc:
        return {"ok": False, "kind": type(exc).__name__, "message": str(exc)}, None
    return {"ok": True, "document": document, "pages": pages is not None}, pages


def _pages_or_none(converter, name: str, fmt: str, data: bytes):
    """The page images to send, the first one rendered already; ``None`` when there are none or
    pdfium cannot render the file: the document stands without them (logged)."""
    import itertools

    try:
        pages = converter.render_pages(fmt=fmt, data=data)
        first = next(pages, None)
    except Exception as exc:
        print(f"{name}: no page images: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    return None if first is None else itertools.chain([first], pages)


def _send_pages(channel, name: str, pages) -> None:
    """One frame per page image, then ``None``; a page that fails to render ends the run early, logged."""
    from haiku.ingester.pipeline.protocol import write_frame

    try:
        for page in pages:
            write_frame(channel, page)
    except Exception as exc:  # the document stands without the rest of its page images
        print(f"{name}: page images stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
    write_frame(channel, None)


if __name__ == "__main__":
    sys.exit(main())
