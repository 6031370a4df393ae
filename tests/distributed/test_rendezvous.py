"""The TCP rendezvous that hands NCCL's unique id from rank 0 to the others: the payload
arrives, strangers are ignored, a rank that never comes is named, nothing is pickled."""

import socket
import threading

import pytest

from fntorch.distributed.rendezvous import RendezvousError, join, serve


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_rank_gets_the_payload():
    port, got = _free_port(), {}
    threads = [
        threading.Thread(target=lambda r=r: got.__setitem__(r, join("127.0.0.1", port, r, 3, 10)))
        for r in (1, 2)
    ]
    for t in threads:
        t.start()
    serve("127.0.0.1", port, 3, bytes(range(128)), 10)
    for t in threads:
        t.join()
    assert got == {1: bytes(range(128)), 2: bytes(range(128))}


def test_a_stranger_is_ignored_and_the_missing_rank_named():
    port = _free_port()

    def stranger():
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
                    return
            except OSError:
                pass

    t = threading.Thread(target=stranger)
    t.start()
    with pytest.raises(RendezvousError, match=r"ranks \[1\] never joined"):
        serve("127.0.0.1", port, 2, b"id", 1.0)
    t.join()


def test_join_times_out_naming_its_rank():
    with pytest.raises(RendezvousError, match="rank 3 could not reach rank 0"):
        join("127.0.0.1", _free_port(), 3, 4, 0.3)


def test_payload_size_is_bounded():
    with pytest.raises(ValueError, match="exceeds"):
        serve("127.0.0.1", _free_port(), 2, bytes(5000), 1.0)
