"""The embedding model's own tokenizer, for docling's HybridChunker, without torch.

Loaded from the model directory's ``tokenizer.json`` with the ``tokenizers``
library, with the file's truncation and padding switched off: chunk sizes must
count every token, or a long text would look short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docling_core.transforms.chunker.tokenizer.base import BaseTokenizer
from pydantic import ConfigDict
from tokenizers import Tokenizer


class LocalTokenizer(BaseTokenizer):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    tokenizer: Tokenizer
    max_tokens: int

    @classmethod
    def from_model_dir(cls, model_dir: str | Path, max_tokens: int) -> LocalTokenizer:
        path = Path(model_dir) / "tokenizer.json"
        if not path.is_file():
            raise FileNotFoundError(f"no tokenizer.json in the embedding model directory {model_dir}")
        tokenizer = Tokenizer.from_file(str(path))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return cls(tokenizer=tokenizer, max_tokens=max_tokens)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def get_max_tokens(self) -> int:
        return self.max_tokens

    def get_tokenizer(self) -> Any:
        # A token counter rather than the tokenizer object: given the object,
        # semchunk scans its whole vocabulary (get_vocab) on every split, which
        # cost more than the conversion itself.
        return self.count_tokens
