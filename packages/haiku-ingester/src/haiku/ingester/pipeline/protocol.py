"""Length-prefixed pickle frames between the daemon and its child processes (conversion workers, the Ray driver)."""

from __future__ import annotations

import asyncio
import pickle
import struct
import sys
from typing import Any, BinaryIO

_HEADER = struct.Struct("!Q")


def encode_frame(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def header_size() -> int:
    return _HEADER.size


def body_size(header: bytes) -> int:
    return _HEADER.unpack(header)[0]


def decode_body(body: bytes) -> Any:
    return pickle.loads(body)


def read_frame(stream: BinaryIO) -> Any | None:
    """One frame from a blocking stream; None at end of stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size = body_size(header)
    body = bytearray()
    while len(body) < size:
        part = stream.read(size - len(body))
        if not part:
            return None
        body.extend(part)
    return decode_body(bytes(body))


def write_frame(stream: BinaryIO, obj: Any) -> None:
    stream.write(encode_frame(obj))
    stream.flush()


async def spawn_child(module: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    """``python -m MODULE`` with frames on its stdin and stdout, and its stderr for the log."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
