"""Where, and in what precision, a local model embeds documents (docs/configuration.md, "Devices").

``embeddings.document_device`` takes ``auto``, ``cpu``, ``cuda``, ``cuda:N``
or ``mps``; ``embeddings.document_precision`` takes ``auto``, ``fp32``,
``fp16`` or ``bf16``. Queries always run on the CPU (a search's start-up
matters more than a 20 ms encode).

``auto`` must cost nothing on a machine without a GPU: it looks for the GPU's
device nodes and for a torch build made for CUDA (or ROCm) by reading files,
and imports torch only when both are there. Torch then has the last word
(``confirm_device``). This module imports the standard library only, so the
encoder can run where nothing but torch, transformers and tokenizers is
installed (bench/gpu_embed.py).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
from pathlib import Path

DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")
PRECISIONS = ("auto", "fp32", "fp16", "bf16")
DEV = Path("/dev")
_GPU_BUILD = re.compile(r"^(cuda|hip)\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)


def valid_device(setting: str) -> bool:
    return bool(DEVICE_PATTERN.match(setting))


def _visible_devices_hidden() -> bool:
    """Whether the environment hides every GPU (``CUDA_VISIBLE_DEVICES=""`` or ``-1``, as Ray sets
    for a worker that reserved none)."""
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        value = os.environ.get(name)
        if value is not None and value.strip() in ("", "-1"):
            return True
    return False


def torch_gpu_build(version_file: Path | None = None) -> str | None:
    """The CUDA (or HIP) version the installed torch was built for, read from its ``version.py``
    (or ``version_file``); ``None`` for a CPU build or no torch. Imports nothing."""
    if version_file is None:
        try:
            spec = importlib.util.find_spec("torch")
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.origin:
            return None
        version_file = Path(spec.origin).parent / "version.py"
    try:
        text = version_file.read_text(encoding="utf-8")
    except OSError:
        return None
    for match in _GPU_BUILD.finditer(text):
        return f"{match.group(1)} {match.group(2)}"
    return None


def gpu_device_nodes() -> bool:
    """Whether the machine has an NVIDIA (or AMD ROCm) GPU's device nodes."""
    return bool(glob.glob(str(DEV / "nvidia[0-9]*"))) or (DEV / "kfd").exists()


def probable_device(setting: str) -> str:
    """The device ``setting`` most likely means here, without importing torch.

    ``auto`` is ``cuda`` when a GPU's device nodes and a GPU build of torch are
    both present and the environment does not hide the GPUs, else ``cpu``; any
    other setting is itself (``cuda`` as ``cuda:0``).
    """
    if setting == "cuda":
        return "cuda:0"
    if setting != "auto":
        return setting
    if _visible_devices_hidden() or not gpu_device_nodes() or torch_gpu_build() is None:
        return "cpu"
    return "cuda:0"


def confirm_device(setting: str, probable: str) -> tuple[str, str | None]:
    """(the device to use, why ``auto`` fell back to the CPU or ``None``), asking torch.

    Raises ``ValueError`` when an explicit device is not usable here; its
    message names the device, not the key (the caller adds that).
    """
    if probable == "cpu":
        return "cpu", None
    import torch

    if probable == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError("mps is not available on this machine")
        return "mps", None
    usable = torch.cuda.is_available()
    count = torch.cuda.device_count() if usable else 0
    index = int(probable.partition(":")[2] or 0)
    if usable and index < count:
        return probable, None
    why = (
        f"torch sees {count} CUDA device(s), so {probable} does not exist" if usable
        else f"torch (built for {torch_gpu_build() or 'the CPU only'}) cannot use a CUDA device here"
    )
    if setting == "auto":
        return "cpu", why
    raise ValueError(why)


def resolve_precision(setting: str, device: str) -> str:
    """``auto`` is fp16 on a GPU and fp32 on the CPU; any other setting is itself."""
    if setting != "auto":
        return setting
    return "fp32" if device == "cpu" else "fp16"


def torch_dtype(precision: str):
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def assigned_device(setting: str, gpu_ids: list) -> str:
    """The device setting inside a worker a scheduler gave ``gpu_ids`` (Ray's ``get_gpu_ids()``).

    The scheduler shows the worker only its GPUs, numbered from 0
    (``CUDA_VISIBLE_DEVICES``), so any GPU setting means ``cuda:0`` there; a
    worker given none keeps its setting (``auto`` then finds the GPUs hidden).
    """
    if gpu_ids and setting not in ("cpu", "mps"):
        return "cuda:0"
    return setting
