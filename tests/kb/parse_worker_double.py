"""A stand-in for the parsing worker (``python -m sextant.kb.loader_worker``), for the tests of what the parent does
when a worker misbehaves in ways no real file triggers on demand.

``python -m tests.kb.parse_worker_double MODE MEMORY_MB TIMEOUT_S``: says it is ready, reads one request, then
``crash`` (dies by SIGSEGV) or ``garbage`` (replies with a frame that is not a reply).
"""

from __future__ import annotations

import os
import signal
import struct
import sys

FRAME = struct.Struct(">Q")


def _read(stream: object) -> bytes:
    assert hasattr(stream, "read")
    (size,) = FRAME.unpack(stream.read(FRAME.size))
    data: bytes = stream.read(size)
    return data


def _send(payload: bytes) -> None:
    sys.stdout.buffer.write(FRAME.pack(len(payload)) + payload)
    sys.stdout.buffer.flush()


def main(mode: str) -> None:
    _send(b'{"ready": true}')
    _read(sys.stdin.buffer)
    _read(sys.stdin.buffer)
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    _send(b"[1, 2, 3]")


if __name__ == "__main__":
    main(sys.argv[1])
