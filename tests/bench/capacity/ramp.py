"""The capacity ramp (issue #13): one ``mmk serve`` process (the embedded
default, SQLite file + in-process bus, at its default log level), the bare
broadcaster (:mod:`tests.bench.capacity.bare`) and the load process
(:mod:`tests.bench.capacity.load`), each its own process. Step by step the
number of tables grows; at each step MMK and the bare broadcaster take the
same load in turn. A target stops ramping at its first step with delivery
p99 or mutation p99 over 100 ms, or any error; what it sustained is its last
step within bounds.

    python -m tests.bench.capacity.ramp --steps 25,50,100 --measure 15

Target ``pg2``: two instances on PostgreSQL and Redis (``DATABASE_URL``,
``REDIS_URL``), each table's clients spread over both; ``pg1``: one such
instance; ``sqlr``: ``mmk serve`` on SQLite with the Redis bus (these two
split the scale-out path's cost: the database, the bus, the second
instance). Target ``unpushed``:
``mmk serve`` without pushed frames (:mod:`tests.bench.capacity.unpushed`),
for the seam's with-and-without figures.

The targets take each step in turn by default. ``--together``: all at once,
each with its own load process, their windows started together (the load
processes meet at a barrier once their tables are up), so that the
machine's drift from one minute to the next, which moves a target's CPU a
move by up to a seventh between runs, falls on all of them alike; each
step then prints every target's CPU a move and its ratio to the first's.
``--barrier DIR --parties N``: the same with ramps run apart (a checkout
each, for before-and-after figures of the same target; a new DIR each
run). A target that leaves a ramp (out of bounds) leaves the later
meetings of its ramps too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from infra.settings import Settings
from tests.bench.http_load import HOST, RATE_LIMITS_OFF, ROOT, free_port, serving
from tests.e2e.cluster import cluster, fresh_backend

MEASURED = {k: v for k, v in RATE_LIMITS_OFF.items() if k != "MMK_RATE_QUERY_COST_TOKEN"}
"""The limits off but the work budget per token (at its default): every
player's requests are measured and charged (issue #22), as in production;
the per-IP budget stays off, as all the load comes from one address where
real players come from many."""
DEFAULT_BUDGET = {
    "MMK_RATE_QUERY_COST_TOKEN": str(
        next(f.default for f in fields(Settings) if f.name == "rate_query_cost_token")
    )
}
"""The work budget per token at its default (the test clusters' is
unlimited: measured and charged, never refused)."""
BOUND_MS = 100.0
DEFAULT_STEPS = (25, 50, 100, 150, 200, 250, 300, 375, 450)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


@dataclass
class Step:
    """One target's figures at one step, as the load process measured them."""

    figures: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.figures[key]

    def ms(self, key: str, p: float) -> float:
        return percentile(self.figures[key], p) * 1e3

    @property
    def within_bounds(self) -> bool:
        return (
            not self["errors"]
            and self.ms("deliveries", 99) <= BOUND_MS
            and self.ms("mutations", 99) <= BOUND_MS
            and bool(self["deliveries"])
        )

    def row(self) -> str:
        f = self.figures
        errors = sum(f["errors"].values())
        return (
            f"{f['target']:>8} {f['tables']:>6} {f['connections']:>6} "
            f"{f['moves'] / f['seconds']:>7.1f} "
            f"{self.ms('deliveries', 50):>7.1f} {self.ms('deliveries', 99):>7.1f} "
            f"{self.ms('mutations', 50):>7.1f} {self.ms('mutations', 99):>7.1f} "
            f"{self.ms('health', 99):>7.1f} {f['server_cpu'] * 100:>5.0f}% "
            f"{f['rss_per_connection'] / 1024:>6.1f} {f['lag_p99_bound'] * 1e3:>6.0f} "
            f"{int(f['gc_pauses']):>5} {int(f['gc_pauses_over_20ms']):>3}/"
            f"{int(f['gc_full_passes']):<2}"
            f"{f['load_cpu'] * 100:>5.0f}% {errors:>5} {f['gc_collected'] / f['seconds']:>6.0f}"
            f"{self.db_column}"
        )

    @property
    def cpu_per_move(self) -> float:
        """The target's server CPU seconds a move (its instances together)."""
        f = self.figures
        return float(f["server_cpu"] * f["seconds"] / max(1, f["moves"]))

    @property
    def db_per_move(self) -> float:
        """PostgreSQL's backends' CPU seconds a move (0.0: no database measured)."""
        f = self.figures
        return float((f.get("db_cpu") or 0.0) * f["seconds"] / max(1, f["moves"]))

    @property
    def db_column(self) -> str:
        """PostgreSQL's backends' CPU, and theirs and the servers' per move."""
        f = self.figures
        if f.get("db_cpu") is None:
            return ""
        return (
            f" {f['db_cpu'] * 100:>4.0f}% {self.cpu_per_move * 1e3:>5.1f}"
            f" {self.db_per_move * 1e3:>5.1f}"
        )


HEADER = (
    "      to tables  conns  moves/s  del50   del99   mut50   mut99  hlth99   cpu "
    "KB/con lag99 gcs gc>20/full load errs cycl/s   db  ms/mv  db/mv\n"
    "                                    (ms)    (ms)    (ms)    (ms)    (ms)        "
    "        (<=ms)                                  (cpu)  (cpu)"
)


def mmk_server(
    directory: Path,
    root: Path = ROOT,
    name: str = "mmk",
    module: str = "api.cli",
    redis: bool = False,
) -> Any:
    """``mmk serve`` of the checkout at ``root`` (``--before``: another);
    ``module``: the entry point (``tests.bench.capacity.unpushed``: no
    pushed frames)."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{directory / (name + '.sqlite3')}",
        **MEASURED,
        **DEFAULT_BUDGET,
    }
    for key in ("MMK_LOG_LEVEL", *(() if redis else ("REDIS_URL",))):
        env.pop(key, None)
    env["PYTHONPATH"] = str(root)
    cmd = [sys.executable, "-m", module, "serve", "--host", HOST, "--port", str(port)]
    return serving(cmd, env, directory / f"{name}.log", port, root)


@contextmanager
def pg_instances(directory: Path, names: tuple[str, ...] = ("A", "B")) -> Iterator[list[Any]]:
    """An ``mmk serve`` process per name (two by default) on one PostgreSQL
    database (a fresh one) and one Redis (a channel prefix of this run):
    ``DATABASE_URL`` and ``REDIS_URL`` name the servers. Their limits are
    the SQLite process's (:data:`MEASURED`: the work budget per token at its
    default, in Redis here), so that both pay for metering and charging."""
    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    if not database_url or not redis_url or not database_url.startswith("postgresql"):
        raise SystemExit("target pg2 needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    with (
        fresh_backend(database_url, redis_url, "capacity", **MEASURED, **DEFAULT_BUDGET) as backend,
        cluster(backend, directory, names) as instances,
    ):
        yield [
            _Running(urlsplit(i.server.base_url).port or 0, i.proc, backend.database_url)
            for i in instances
        ]


@dataclass
class _Running:
    port: int
    process: Any
    database: str | None = None  # PostgreSQL's: its backends' CPU is measured too


def bare_server(directory: Path) -> Any:
    port = free_port()
    cmd = [sys.executable, "-m", "tests.bench.capacity.bare", "--port", str(port)]
    return serving(cmd, dict(os.environ), directory / "bare.log", port)


class LoadProcess:
    def __init__(self, directory: Path, name: str = "load") -> None:
        self.stderr = (directory / f"{name}.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.capacity.load"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )

    def step(self, command: dict[str, Any]) -> Step:
        stdin: IO[str] | None = self.process.stdin
        stdout: IO[str] | None = self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(command) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the load process ended: {self.process.wait()}")
        return Step(json.loads(line))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.stderr.close()


def ramp(
    steps: tuple[int, ...] = DEFAULT_STEPS,
    warmup: float = 5.0,
    measure: float = 15.0,
    targets: tuple[str, ...] = ("mmk", "bare"),
    directory: Path | None = None,
    before: Path | None = None,
    together: bool = False,
    barrier: tuple[Path, int] | None = None,
) -> dict[str, list[Step]]:
    """Every step of each target, in the order run; prints the table as it
    goes. ``before``: another checkout (an earlier commit), run as target
    ``was`` in the same turns, for before-and-after figures. ``together``:
    the targets of a step run at once; ``barrier``: a directory and how many
    ramps (this one included) start each step's window together."""
    if before is not None:
        targets = ("was", *targets)
    results: dict[str, list[Step]] = {t: [] for t in targets}
    with ExitStack() as stack:
        path = directory or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers: dict[str, list[Any]] = {
            "mmk": [stack.enter_context(mmk_server(path))] if "mmk" in targets else [],
            "bare": [stack.enter_context(bare_server(path))] if "bare" in targets else [],
            "was": []
            if before is None
            else [stack.enter_context(mmk_server(path, before.resolve(), "was"))],
            "pg2": stack.enter_context(pg_instances(path)) if "pg2" in targets else [],
            "sqlr": [stack.enter_context(mmk_server(path, name="sqlr", redis=True))]
            if "sqlr" in targets
            else [],
            "pg1": stack.enter_context(pg_instances(path, ("P",))) if "pg1" in targets else [],
            "unpushed": [
                stack.enter_context(
                    mmk_server(path, name="unpushed", module="tests.bench.capacity.unpushed")
                )
            ]
            if "unpushed" in targets
            else [],
        }
        if together:  # a directory given again: this run's meetings only
            shutil.rmtree(path / "barrier", ignore_errors=True)
        names = targets if together else ("load",)
        loads = {name: LoadProcess(path, f"load-{name}" if together else name) for name in names}
        for load in loads.values():
            stack.callback(load.close)
        print("\n" + HEADER, flush=True)
        running = set(targets)
        for number, tables in enumerate(steps):
            now = [t for t in targets if t in running and servers[t]]
            commands = {}
            for target in now:
                instances = servers[target]
                commands[target] = {
                    "target": target,
                    "ports": [i.port for i in instances],
                    "pids": [i.process.pid for i in instances],
                    "metrics": "bare" if target == "bare" else "mmk",
                    # the server's keep-alive, less a margin: 75 s, but
                    # uvicorn's own 5 s for an older checkout
                    "idle_s": 4.0 if target == "was" else 60.0,
                    "tables": tables,
                    "database": getattr(instances[0], "database", None),
                    "warmup": warmup,
                    "measure": measure,
                }
                if together:
                    meeting = path / "barrier" / str(number)
                    commands[target]["barrier"] = {"path": str(meeting), "parties": len(now)}
                elif barrier is not None:
                    meeting = barrier[0] / f"{number}-{target}"
                    commands[target]["barrier"] = {"path": str(meeting), "parties": barrier[1]}
            if together:
                with ThreadPoolExecutor(len(now)) as pool:
                    done = list(pool.map(lambda t, c=commands: loads[t].step(c[t]), now))
            else:
                done = [loads["load"].step(commands[t]) for t in now]
            for target, step in zip(now, done, strict=True):
                results[target].append(step)
                print(step.row(), flush=True)
                if step["error_samples"]:
                    print("       errors:", "; ".join(step["error_samples"][:3]), flush=True)
                if not step.within_bounds:
                    running.discard(target)
                    if barrier is not None:  # the other ramps meet at later steps without it
                        for later in range(number + 1, len(steps)):
                            gone = barrier[0] / f"{later}-{target}"
                            gone.mkdir(parents=True, exist_ok=True)
                            (gone / f"left.{os.getpid()}").touch()
            if together and len(done) > 1:
                print("       " + ratios(done), flush=True)
            if not running:
                break
    return results


def ratios(steps: list[Step]) -> str:
    """Each target's server CPU a move, and its ratio to the first's."""
    first = steps[0].cpu_per_move or float("nan")
    return "CPU a move: " + ", ".join(
        f"{s['target']} {s.cpu_per_move * 1e3:.2f} ms ({s.cpu_per_move / first:.2f}x)"
        for s in steps
    )


def sustained(steps: list[Step]) -> int:
    """Connections of the last step within bounds before the first outside."""
    best = 0
    for step in steps:
        if not step.within_bounds:
            break
        best = step["connections"]
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", default=",".join(map(str, DEFAULT_STEPS)))
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--measure", type=float, default=15.0)
    parser.add_argument("--targets", default="mmk,bare")
    parser.add_argument("--before", type=Path, help="an earlier checkout, run as 'was'")
    parser.add_argument("--together", action="store_true", help="a step's targets at once")
    parser.add_argument("--barrier", type=Path, help="a directory where ramps run apart meet")
    parser.add_argument("--parties", type=int, default=2, help="how many ramps meet there")
    args = parser.parse_args()
    if args.together and args.barrier:
        parser.error("--together and --barrier: one or the other")
    if args.barrier and args.barrier.exists() and any(args.barrier.iterdir()):
        # a meeting of an earlier run would let this one's windows drift apart
        old = time.time() - max(p.stat().st_mtime for p in args.barrier.iterdir())
        if old > 60:
            parser.error(f"--barrier {args.barrier}: an earlier run's meetings; use a new one")
    results = ramp(
        tuple(int(s) for s in args.steps.split(",")),
        args.warmup,
        args.measure,
        tuple(args.targets.split(",")),
        before=args.before,
        together=args.together,
        barrier=None if args.barrier is None else (args.barrier, args.parties),
    )
    for target, steps in results.items():
        print(f"{target}: sustained {sustained(steps)} connections")


if __name__ == "__main__":
    main()
