"""Prometheus metrics of one app (``GET /metrics``), in their own registry so
several apps in one process (tests) never collide. With several worker
processes each serves its own numbers.

The API fills the request, GraphQL and subscription metrics as it works; the
bus counters are read from the bus only when scraped (no cost per event).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from domain.errors import ErrorCode
from infra.runtime_metrics import RuntimeMetrics

LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CODES = frozenset(c.value for c in ErrorCode)


class BusStats(Protocol):
    """What the buses count (infra.bus.memory, infra.bus.redis)."""

    published: int
    dropped: int
    reconnects: int
    publish_failures: int

    def subscriber_count(self, channel: str | None = None) -> int: ...


class WebhookStats(Protocol):
    """What the webhook deliverer counts (infra.webhooks.deliverer)."""

    @property
    def outcomes(self) -> Mapping[str, int]: ...

    @property
    def in_flight(self) -> int: ...


class Metrics:
    """Every metric of one app; ``bus`` gives the running bus (None while
    starting)."""

    def __init__(
        self,
        bus: Callable[[], BusStats | None] = lambda: None,
        webhooks: Callable[[], WebhookStats | None] = lambda: None,
    ) -> None:
        self.registry = r = CollectorRegistry()
        self.moves = Counter(
            "mmk_moves_accepted",
            "Mutations accepted (not refused), by mutation name",
            ["mutation"],
            registry=r,
        )
        self.refusals = Counter(
            "mmk_refusals",
            "Refusals by code: typed Refusal results (kind=refusal) and GraphQL "
            "errors (kind=error)",
            ["code", "kind"],
            registry=r,
        )
        self.subscriptions = Gauge(
            "mmk_subscriptions_active",
            "GraphQL subscriptions open in this process, by subscription field",
            ["subscription"],
            registry=r,
        )
        self.http_latency = Histogram(
            "mmk_http_request_duration_seconds",
            "HTTP request latency (WebSocket sessions excluded), by route and method",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.graphql_latency = Histogram(
            "mmk_graphql_operation_duration_seconds",
            "GraphQL operation latency, parse to result, by operation type "
            "(subscriptions excluded: see mmk_subscriptions_active)",
            ["operation"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        ProcessCollector(registry=r)
        r.register(BusCollector(bus))
        r.register(WebhookCollector(webhooks))
        self.runtime = RuntimeMetrics(r)

    def refusal(self, code: object, kind: str) -> None:
        """Count one refusal; an unknown code counts as ``OTHER``."""
        self.refusals.labels(
            code if isinstance(code, str) and code in CODES else "OTHER", kind
        ).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class BusCollector(Collector):
    """The bus's own counters, read at scrape time."""

    def __init__(self, bus: Callable[[], BusStats | None]) -> None:
        self._bus = bus

    def collect(self) -> Iterator[Metric]:
        bus = self._bus()
        if bus is None:
            return
        for name, doc, value in (
            (
                "mmk_events_published",
                "Event messages handed to the bus: one per event and audience "
                "channel (public and each seat), plus lobby updates",
                bus.published,
            ),
            ("mmk_bus_reconnects", "Reconnections of the bus to Redis", bus.reconnects),
            (
                "mmk_bus_publish_failures",
                "Publishes that failed and were kept in the outbox for later",
                bus.publish_failures,
            ),
            (
                "mmk_bus_dropped_subscribers",
                "Subscribers dropped for falling too far behind",
                bus.dropped,
            ),
        ):
            yield CounterMetricFamily(name, doc, value=value)
        yield GaugeMetricFamily(
            "mmk_bus_subscribers",
            "Local bus subscriptions (channel queues) in this process",
            value=bus.subscriber_count(),
        )


class WebhookCollector(Collector):
    """The webhook deliverer's counts (issue #25), read at scrape time."""

    def __init__(self, webhooks: Callable[[], WebhookStats | None]) -> None:
        self._webhooks = webhooks

    def collect(self) -> Iterator[Metric]:
        stats = self._webhooks()
        if stats is None:
            return
        attempts = CounterMetricFamily(
            "mmk_webhook_attempts",
            "Webhook attempts finished by this process, by what they left the message: "
            "DELIVERED, PENDING (a retry is due), FAILED (gave up), SKIPPED (player online)",
            labels=["status"],
        )
        for status in ("DELIVERED", "PENDING", "FAILED", "SKIPPED"):
            attempts.add_metric([status], stats.outcomes.get(status, 0))
        yield attempts
        yield CounterMetricFamily(
            "mmk_webhook_endpoints_disabled",
            "Webhook endpoints this process disabled after a message failed for a day",
            value=stats.outcomes.get("ENDPOINT_DISABLED", 0),
        )
        yield GaugeMetricFamily(
            "mmk_webhook_attempts_in_flight",
            "Webhook attempts under way in this process",
            value=stats.in_flight,
        )
