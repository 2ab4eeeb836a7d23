"""What the load process reads of a server during a step (issue #13): its
CPU time and RSS from /proc, and its event-loop lag and GC pause histograms
from ``/metrics`` (:mod:`infra.runtime_metrics`; the bare broadcaster's
prefix is ``bare``, MMK's ``mmk``)."""

from __future__ import annotations

import math
import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg
from prometheus_client.parser import text_string_to_metric_families


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_cpu(database_url: str) -> dict[int, float]:
    """The CPU seconds of each PostgreSQL backend on ``database_url``'s
    database (the server runs on this machine: #28 counts its CPU per move
    too), from /proc; this query's own backend left out."""
    url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    found = {}
    for (pid,) in rows:
        with suppress(OSError):  # ended meanwhile
            found[int(pid)] = cpu_seconds(int(pid))
    return found


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@dataclass(frozen=True)
class Histogram:
    """Cumulative bucket counts by upper bound (the last is +Inf)."""

    buckets: tuple[tuple[float, float], ...]

    def __sub__(self, other: Histogram) -> Histogram:
        before = dict(other.buckets)
        return Histogram(tuple((le, n - before.get(le, 0.0)) for le, n in self.buckets))

    def __add__(self, other: Histogram) -> Histogram:
        """Two servers' observations together (their buckets are the same)."""
        summed = dict(self.buckets)
        for le, n in other.buckets:
            summed[le] = summed.get(le, 0.0) + n
        return Histogram(tuple(sorted(summed.items())))

    @property
    def count(self) -> float:
        return self.buckets[-1][1] if self.buckets else 0.0

    def quantile_bound(self, q: float) -> float:
        """The smallest bucket bound under which a fraction ``q`` fell."""
        for le, n in self.buckets:
            if n >= q * self.count:
                return le
        return math.inf

    def above(self, bound: float) -> float:
        """How many observations were above ``bound`` (a bucket bound)."""
        return self.count - dict(self.buckets).get(bound, 0.0)


def histograms(text: str, prefix: str) -> dict[str, Histogram]:
    """``event_loop_lag``, ``gc_pause`` (all generations summed),
    ``gc_full`` (generation 2's pauses) and ``gc_collected`` (objects found
    unreachable, as one bucket)."""
    found: dict[str, dict[float, float]] = {"event_loop_lag": {}, "gc_pause": {}}
    full: dict[float, float] = {}  # generation 2: full passes
    collected = 0.0
    for family in text_string_to_metric_families(text):
        if family.name == f"{prefix}_gc_collected_objects":
            collected += sum(x.value for x in family.samples if x.name.endswith("_total"))
        for short in found:
            if family.name != f"{prefix}_{short}_seconds":
                continue
            for sample in family.samples:
                if sample.name.endswith("_bucket"):
                    le = float(sample.labels["le"])
                    found[short][le] = found[short].get(le, 0.0) + sample.value
                    if sample.labels.get("generation") == "2":
                        full[le] = sample.value
    result = {k: Histogram(tuple(sorted(v.items()))) for k, v in found.items()}
    result["gc_collected"] = Histogram(((math.inf, collected),))
    result["gc_full"] = Histogram(tuple(sorted(full.items())))
    return result
