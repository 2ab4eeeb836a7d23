"""A local Redis Cluster for the tests: three masters and three replicas
started from ``redis-server`` on free ports in a temporary directory, joined
by ``redis-cli --cluster create``, without persistence. Every wait polls
with a deadline; :meth:`LocalCluster.stop` kills what it started, by pid.

A test asks for one through :func:`local_cluster` (skipped without
``redis-server``, failed under ``MMK_REQUIRE_SERVICES=1``).
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot

from tests.services import unavailable

MASTERS = 3
NODE_TIMEOUT_MS = 1000  # a dead master is failed over within a few seconds
START_TIMEOUT = 20.0  # seconds for the cluster to be up, each replica in sync
FAILOVER_TIMEOUT = 20.0  # seconds for a replica to take over a dead master's slots
CLUSTER_BUS_OFFSET = 10_000  # Redis' cluster bus listens on port + 10000
LOW_PORT = 12_000  # nodes on 12000-21999, their buses on 22000-31999


def slot_of(name: str) -> int:
    """The hash slot of a key or shard channel (its ``{tag}`` when it has one)."""
    return int(key_slot(name.encode()))


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int) -> list[int]:
    """``count`` ports free now, each with its cluster bus port free too,
    below the ephemeral range (32768 and up on Linux): a port the kernel
    hands out could be taken as a client's source port before the node
    binds it."""
    out: list[int] = []
    pick = random.Random()
    while len(out) < count:
        port = pick.randrange(LOW_PORT, LOW_PORT + CLUSTER_BUS_OFFSET)
        if port not in out and _free(port) and _free(port + CLUSTER_BUS_OFFSET):
            out.append(port)
    return out


def _poll(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"Redis Cluster: timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class ClusterNode:
    port: int
    proc: subprocess.Popen[bytes] | None = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=1.0)

    def ask(self, *command: str) -> object:
        """One command on this node; None when it does not answer."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        client = self.client()
        try:
            return client.execute_command(*command)  # type: ignore[no-untyped-call]
        except redis.RedisError:
            return None
        finally:
            client.close()


@dataclass
class LocalCluster:
    """Six ``redis-server`` processes in cluster mode (``--cluster-replicas 1``)."""

    workdir: Path
    nodes: list[ClusterNode] = field(default_factory=list)
    _binary: str = ""

    @property
    def url(self) -> str:
        """``REDIS_URL`` of the server for this cluster (any node will do)."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}/0"

    def start(self) -> None:
        binary, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        assert binary and cli, "redis-server and redis-cli are needed"
        self._binary = binary
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.nodes = [ClusterNode(port) for port in free_ports(2 * MASTERS)]
        for node in self.nodes:
            self._launch(node)
        _poll(self._answering, START_TIMEOUT, "every node")
        addresses = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-replicas", "1", "--cluster-yes"],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=START_TIMEOUT,
        )
        _poll(self.healthy, START_TIMEOUT, "cluster_state:ok, each replica in sync")

    def _answering(self) -> bool:
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is not None:
                log = self.workdir / f"redis-{node.port}.log"
                raise AssertionError(f"redis-server exited at start:\n{log.read_text()[-2000:]}")
        return all(n.ask("PING") for n in self.nodes)

    def _launch(self, node: ClusterNode) -> None:
        node.proc = subprocess.Popen(
            [
                self._binary,
                "--port",
                str(node.port),
                "--bind",
                "127.0.0.1",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                f"nodes-{node.port}.conf",
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
                "--save",
                "",
                "--appendonly",
                "no",
                "--repl-diskless-sync-delay",  # replicas in sync at once, not after 5 s
                "0",
                "--daemonize",
                "no",
                "--dir",
                str(self.workdir),
                "--logfile",
                str(self.workdir / f"redis-{node.port}.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> None:
        _poll(self.healthy, timeout, "cluster_state:ok, each replica in sync")

    def revive(self, node: ClusterNode) -> None:
        """Start a killed node again (its nodes file kept: it rejoins, as a
        replica of the master that took over) and wait until all is well."""
        assert node.proc is None or node.proc.poll() is not None
        self._launch(node)
        _poll(self.healthy, START_TIMEOUT, "the revived node back in sync")

    def healthy(self) -> bool:
        """Every live node says ok and knows every slot; every master has a
        replica in sync."""
        live = [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]
        for node in live:
            info = node.ask("CLUSTER", "INFO")
            text = info.decode() if isinstance(info, bytes) else str(info)
            if "cluster_state:ok" not in text or "cluster_slots_ok:16384" not in text:
                return False
        masters = [n for n in live if self.role(n) == "master"]
        replicas = [n for n in live if self.role(n) == "slave"]
        if len(masters) != MASTERS:
            return False
        return all(self._in_sync(r) for r in replicas) and len(replicas) >= MASTERS - (
            len(self.nodes) - len(live)
        )

    def role(self, node: ClusterNode) -> str | None:
        reply = node.ask("ROLE")
        if not isinstance(reply, list) or not reply:
            return None
        first = reply[0]
        return first.decode() if isinstance(first, bytes) else str(first)

    def _in_sync(self, replica: ClusterNode) -> bool:
        reply = replica.ask("ROLE")
        return (
            isinstance(reply, list) and len(reply) > 3 and reply[3] in (b"connected", "connected")
        )

    def owner(self, slot: int) -> ClusterNode:
        """The master serving ``slot`` now (asked of a live node)."""
        for node in self.nodes:
            reply = node.ask("CLUSTER", "SHARDS")
            if not isinstance(reply, list):
                continue
            for shard in reply:  # redis-py parses each into a dict
                ranges = shard[b"slots"]
                if not any(
                    lo <= slot <= hi for lo, hi in zip(ranges[::2], ranges[1::2], strict=True)
                ):
                    continue
                for info in shard[b"nodes"]:
                    if info[b"role"] == b"master" and info[b"health"] == b"online":
                        port = int(info[b"port"])
                        return next(n for n in self.nodes if n.port == port)
        raise AssertionError(f"no live node names a master of slot {slot}")

    def kill(self, node: ClusterNode) -> None:
        """SIGKILL by pid: the master dies mid-whatever."""
        proc = node.proc
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def wait_failover(
        self, slot: int, dead: ClusterNode, timeout: float = FAILOVER_TIMEOUT
    ) -> ClusterNode:
        """Until a replica of ``dead`` serves ``slot`` and the cluster is ok;
        returns the new master."""
        found: list[ClusterNode] = []

        def promoted() -> bool:
            live = [n for n in self.nodes if n is not dead and n.proc and n.proc.poll() is None]
            for node in live:
                info = node.ask("CLUSTER", "INFO")
                if not isinstance(info, bytes) or b"cluster_state:ok" not in info:
                    return False
            with suppress(AssertionError):
                owner = self.owner(slot)
                if owner is not dead and self.role(owner) == "master":
                    found[:] = [owner]
                    return True
            return False

        _poll(promoted, timeout, f"a replica to take over slot {slot}")
        return found[0]

    def stop(self) -> None:
        for node in self.nodes:
            proc, node.proc = node.proc, None
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster for the tests of a session; each module that imports this
    fixture gets its own (about 2 s to start: in tests/conftest.py it would
    be one for all). A test that kills a node revives it."""
    with local_cluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster


@contextmanager
def local_cluster(workdir: Path) -> Iterator[LocalCluster]:
    """A started cluster, stopped on exit; skips (or fails under
    ``MMK_REQUIRE_SERVICES=1``) without ``redis-server``."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        unavailable("redis-server (Redis >= 7) is not on PATH")
    cluster = LocalCluster(workdir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
