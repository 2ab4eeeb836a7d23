"""A test server is taken for started only when it holds its port itself:
another test's server that took the port first must not answer for it."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from tests.e2e.conftest import _holds, _listening_inodes


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_the_process_listening_on_a_port_is_told_from_another() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        inodes = _listening_inodes(port)
        assert inodes
        assert _holds(os.getpid(), inodes)
        assert not _holds(os.getppid(), inodes)
    assert _listening_inodes(port) == set()  # closed: nobody listens
