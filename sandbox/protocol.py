"""The worker's pipe: each message one JSON object, framed by its length (4 bytes, big-endian). The server reads
what a worker sends with `Reader`, which refuses a message or a total past its caps before holding it."""

from __future__ import annotations

import json
import os
import struct

HEADER = struct.Struct(">I")


def frame(message: dict) -> bytes:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    return HEADER.pack(len(data)) + data


def send(fd: int, message: dict):
    """Write the framed `message` to the file descriptor `fd`, whole."""
    view = memoryview(frame(message))
    while view:
        view = view[os.write(fd, view):]


def receive(fd: int) -> dict:
    """Read one framed message from `fd` (the worker reading the server: trusted); EOFError at the end."""
    (size,) = HEADER.unpack(_exactly(fd, HEADER.size))
    return json.loads(_exactly(fd, size))


def _exactly(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class TooMuch(Exception):
    """A worker sent more than its caps allow."""


class Reader:
    """Messages from bytes fed as they arrive, at most `most` bytes in all (a message's cap too)."""

    def __init__(self, most: int):
        self.most, self.total = most, 0
        self._buffer = bytearray()

    def count(self, data: bytes) -> list[dict]:
        """Count `data` (what the worker wrote beside its messages) against the cap; TooMuch past it."""
        self.total += len(data)
        if self.total > self.most:
            raise TooMuch
        return []

    def feed(self, data: bytes) -> list[dict]:
        """The whole messages `data` completes; TooMuch past the cap, ValueError for one that is not JSON."""
        self.count(data)
        self._buffer += data
        messages = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > self.most:
                raise TooMuch
            if len(self._buffer) < HEADER.size + size:
                break
            body = bytes(self._buffer[HEADER.size:HEADER.size + size])
            del self._buffer[:HEADER.size + size]
            message = json.loads(body)
            if not isinstance(message, dict):
                raise ValueError("a message is not a JSON object")
            messages.append(message)
        return messages
