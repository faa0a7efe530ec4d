"""Deployment-wide metrics kept in Redis: counted by whichever process sees the event, read at scrape.

A page is asked on a web process, written by a GPU worker, recorded by a finish worker and checked by a
qa worker, each possibly on another machine, and workers come and go. So the app's own counters and
histograms are not held in any one process: each event adds to one Redis hash per family
(`explainer:metrics:<name>`; a field per label set, and for a histogram one per bucket, `sum` and
`count`; what one event records goes in one round trip), and every web process's `/metrics` reads
them all back with `Collector`.
Histogram buckets are stored cumulative, as Prometheus exposes them.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector as _Collector

log = logging.getLogger(__name__)

KEY_PREFIX = "explainer:metrics:"


@dataclass(frozen=True)
class Family:
    """One metric: a counter (exposed as `<name>_total`) or a histogram with fixed buckets."""

    name: str
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()  # empty: a counter

    @property
    def key(self) -> str:
        return f"{KEY_PREFIX}{self.name}"

    def label_field(self, labels: dict[str, str]) -> str:
        if set(labels) != set(self.labels):
            raise ValueError(f"{self.name} takes labels {self.labels}, not {tuple(labels)}")
        return json.dumps([str(labels[name]) for name in self.labels])


def add(pipe, family: Family, labels: dict[str, str] | None = None, amount: float = 1) -> None:
    """Add to a counter (queued on a Redis pipeline)."""
    pipe.hincrbyfloat(family.key, family.label_field(labels or {}), amount)


def observe(pipe, family: Family, value: float, labels: dict[str, str] | None = None) -> None:
    """Record one observation in a histogram (queued on a Redis pipeline): every bucket it falls in, its
    sum and its count."""
    field = family.label_field(labels or {})
    for bound in family.buckets:
        if value <= bound:
            pipe.hincrby(family.key, f"{field}|{bound!r}", 1)
    pipe.hincrby(family.key, f"{field}|+Inf", 1)
    pipe.hincrby(family.key, f"{field}|count", 1)
    pipe.hincrbyfloat(family.key, f"{field}|sum", value)


def read(r, families: list[Family]) -> list[dict[str, str]]:
    """Every family's hash, in one round trip."""
    pipe = r.pipeline(transaction=False)
    for family in families:
        pipe.hgetall(family.key)
    return [{_text(k): _text(v) for k, v in found.items()} for found in pipe.execute()]


def metric_families(family: Family, stored: dict[str, str]):
    """The Prometheus family for what Redis holds of `family`."""
    if not family.buckets:
        counter = CounterMetricFamily(family.name, family.help, labels=family.labels)
        for field, value in sorted(stored.items()):
            counter.add_metric(json.loads(field), float(value))
        return counter
    histogram = HistogramMetricFamily(family.name, family.help, labels=family.labels)
    series: dict[str, dict[str, str]] = defaultdict(dict)
    for field, value in stored.items():
        labels, _, part = field.rpartition("|")
        series[labels][part] = value
    for labels, parts in sorted(series.items()):
        buckets = [(repr(bound), float(parts.get(repr(bound), 0))) for bound in family.buckets]
        buckets.append(("+Inf", float(parts.get("+Inf", 0))))
        histogram.add_metric(json.loads(labels), buckets, float(parts.get("sum", 0)))
    return histogram


class Collector(_Collector):
    """Reads the deployment-wide families from Redis when Prometheus scrapes, plus gauges of the moment
    that `gauges(r)` yields (queue depths, live workers)."""

    def __init__(self, r, families: list[Family], gauges=None):
        self.r, self.families, self.gauges = r, families, gauges

    def collect(self):
        stored = read(self.r, self.families)
        for family, found in zip(self.families, stored, strict=True):
            yield metric_families(family, found)
        if self.gauges is not None:
            yield from self.gauges(self.r)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value
