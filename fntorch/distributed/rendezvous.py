"""A small TCP rendezvous: rank 0 hands one short payload (NCCL's unique id) to every
other rank, for processes that torchrun-style launchers start without MPI.

Rank 0 listens on ``MASTER_ADDR:MASTER_PORT``, the address it is given (never all
interfaces unless asked for). The wire carries only a fixed header and raw bytes, both
validated, never a pickle:

- a joining rank sends ``b"FTRV"``, the format version (1 byte), its rank and the world
  size (4 bytes each, big-endian);
- rank 0 answers ``b"FTRV"``, the version, the payload's length (4 bytes, at most
  ``MAX_PAYLOAD``) and the payload.

Like PyTorch's c10d store it is unauthenticated: anything that reaches the port can
join; bind it to an address only the job's hosts reach. Every wait is bounded by
``timeout``, and its error names the ranks that never came.

>>> import threading
>>> got = []
>>> t = threading.Thread(target=lambda: got.append(join("127.0.0.1", 29611, 1, 2, 10.0)))
>>> t.start(); serve("127.0.0.1", 29611, 2, b"id", 10.0); t.join(); got
[b'id']
"""

from __future__ import annotations

import socket
import struct
import time

MAGIC = b"FTRV"
VERSION = 1
MAX_PAYLOAD = 4096
_HELLO = struct.Struct(">4sBII")
_ANSWER = struct.Struct(">4sBI")


class RendezvousError(RuntimeError):
    """The rendezvous failed: a timeout (naming the missing ranks) or a malformed peer.

    >>> issubclass(RendezvousError, RuntimeError)
    True
    """


def _recv_exact(sock, n: int, what: str) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise RendezvousError(
                f"rendezvous: the peer closed the connection while sending {what}"
            )
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def serve(addr: str, port: int, world: int, payload: bytes, timeout: float) -> None:
    """Rank 0: waits for ranks 1..world-1 and sends each ``payload``."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"rendezvous: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    deadline = time.monotonic() + timeout
    waiting = set(range(1, world))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((addr, port))
        server.listen(max(world, 1))
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RendezvousError(
                    f"rendezvous: rank 0 waited {timeout:g} s at {addr}:{port}; ranks "
                    f"{sorted(waiting)} never joined"
                )
            server.settimeout(left)
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(max(deadline - time.monotonic(), 0.1))
                try:
                    rank = _check_hello(_recv_exact(conn, _HELLO.size, "its hello"), world)
                except (RendezvousError, OSError):
                    continue  # a stranger or a broken peer: ignored, the job waits on
                if rank not in waiting:
                    continue
                conn.sendall(_ANSWER.pack(MAGIC, VERSION, len(payload)) + payload)
                waiting.discard(rank)


def _check_hello(data: bytes, world: int) -> int:
    magic, version, rank, their_world = _HELLO.unpack(data)
    if magic != MAGIC or version != VERSION:
        raise RendezvousError("rendezvous: a peer sent a header that is not fntorch's")
    if their_world != world or not 1 <= rank < world:
        raise RendezvousError(
            f"rendezvous: a peer claims rank {rank} of {their_world}, not of {world}"
        )
    return rank


def join(addr: str, port: int, rank: int, world: int, timeout: float) -> bytes:
    """Rank ``rank`` > 0: connects to rank 0 (retrying until ``timeout``) and returns the
    payload."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection(
                (addr, port), timeout=max(deadline - time.monotonic(), 0.1)
            )
            break
        except OSError:
            if time.monotonic() > deadline:
                raise RendezvousError(
                    f"rendezvous: rank {rank} could not reach rank 0 at {addr}:{port} within "
                    f"{timeout:g} s"
                ) from None
            time.sleep(0.05)
    with sock:
        sock.settimeout(max(deadline - time.monotonic(), 0.1))
        sock.sendall(_HELLO.pack(MAGIC, VERSION, rank, world))
        try:
            magic, version, n = _ANSWER.unpack(_recv_exact(sock, _ANSWER.size, "its answer"))
            if magic != MAGIC or version != VERSION or n > MAX_PAYLOAD:
                raise RendezvousError(
                    f"rendezvous: rank {rank} got a malformed answer from {addr}:{port}"
                )
            return _recv_exact(sock, n, "the payload")
        except TimeoutError:
            raise RendezvousError(
                f"rendezvous: rank {rank} waited {timeout:g} s for rank 0 at {addr}:{port}"
            ) from None
