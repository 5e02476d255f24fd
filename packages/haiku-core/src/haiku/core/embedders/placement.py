"""Where a local embedder's documents run, decided once (docs/configuration.md, "Devices").

``embeddings.document_device`` and ``embeddings.document_precision`` become a
device and a precision the first time documents are embedded. Until then only
the cheap guess (``device.probable_device``: files, no torch import) is used,
to size the batches the ingester hands over.
"""

from __future__ import annotations

import threading

from haiku.core.embedders import device as devices
from haiku.core.embedders.batching import document_batch_size
from haiku.core.embedders.errors import EmbeddingError
from haiku.core.embedders.tokenizing import tokenizer_threads
from haiku.core.logs import get_logger

log = get_logger("haiku.core.embedders")


class DocumentPlacement:
    """The device and precision documents are embedded on, with the batch size that goes with them."""

    def __init__(self, device_setting: str, precision_setting: str, runtime_setting: str,
                 tokenizer_threads: int | None = None) -> None:
        # The ONNX export runs on the CPU in fp32: asked for by name, it decides.
        self._device_setting = "cpu" if runtime_setting == "onnx" else device_setting
        self._precision_setting = precision_setting
        self._tokenizer_threads = tokenizer_threads
        self._probable: str | None = None
        self._decided: tuple[str, str] | None = None
        self._lock = threading.Lock()

    @property
    def probable_device(self) -> str:
        if self._probable is None:
            self._probable = devices.probable_device(self._device_setting)
        return self._probable

    def batch_size(self, configured: int) -> int:
        """Texts one encode takes: the configured size on a CPU, at least a thousand on a GPU."""
        device = self._decided[0] if self._decided else self.probable_device
        return document_batch_size(configured, device)

    @property
    def decided(self) -> tuple[str, str] | None:
        """(device, precision) once decided, else ``None``."""
        return self._decided

    def decide(self) -> tuple[str, str]:
        """(device, precision): asks torch when a GPU may be there; raises ``EmbeddingError``
        naming ``embeddings.document_device`` for a device that is not usable here."""
        with self._lock:
            if self._decided is None:
                try:
                    device, fell_back = devices.confirm_device(self._device_setting, self.probable_device)
                except ValueError as exc:
                    raise EmbeddingError(f"embeddings.document_device is {self._device_setting}, but {exc}") from exc
                except ImportError as exc:
                    raise EmbeddingError(
                        f"embeddings.document_device is {self._device_setting}, but torch is not installed"
                    ) from exc
                if fell_back:
                    log.warning("embedder.gpu_unusable", reason=fell_back, device="cpu")
                self._decided = (device, devices.resolve_precision(self._precision_setting, device))
            return self._decided

    @property
    def needs_torch(self) -> bool:
        """Whether documents must run on torch: on a GPU, or on the CPU in a reduced precision."""
        return self.decide() != ("cpu", "fp32")

    def tokenizer_threads(self) -> int:
        """Threads that tokenize ahead of the model (``tokenizing.tokenizer_threads``)."""
        if self._tokenizer_threads is not None:
            return max(1, self._tokenizer_threads)
        return tokenizer_threads(self.decide()[0])
