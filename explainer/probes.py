"""The operator's endpoints, answered before any other middleware (docs/deploy.md):

- `/healthz`: the process is up (a liveness probe); touches nothing;
- `/readyz`: this process warm, the database, Redis and a live worker on every queue (a readiness
  probe, a load balancer's health check): 200 when ready, 503 when not, with which part is missing;
- `/metrics`: Prometheus' text format, for an address in `METRICS_ALLOWED_NETWORKS` or a request
  carrying `Authorization: Bearer <METRICS_TOKEN>`; 403 otherwise.

First in `MIDDLEWARE`, so a probe needs no session, cookie or CSRF token, and is answered whatever
`Host` it names (an orchestrator probes the pod's address, which `ALLOWED_HOSTS` need not list) and
over plain HTTP behind a TLS proxy (no HTTPS redirect); nor are probes counted as requests.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os

import prometheus_client
import redis
from django.conf import settings
from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse
from prometheus_client import multiprocess

from explainer import metrics, metrics_redis
from explainer.selectors.readiness import readiness
from explainer.services.streams import redis_client
from model_worker.contract import queues, workers

log = logging.getLogger(__name__)


def healthz(request) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz(request) -> HttpResponse:
    state = readiness()
    return JsonResponse(state.as_dict(), status=200 if state.ready else 503)


def metrics_view(request) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponse("metrics are not served to this address\n", status=403, content_type="text/plain")
    return HttpResponse(metrics_page(), content_type=prometheus_client.CONTENT_TYPE_LATEST)


PATHS = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics_view}


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        endpoint = PATHS.get(request.path_info.rstrip("/") or "/")
        if endpoint is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        response = endpoint(request)
        response["Cache-Control"] = "no-store"
        # A 503 is the answer asked for, several times a minute while not ready: the warning is this
        # process's own (selectors/readiness.py), not Django's line per probe.
        response._has_been_logged = True
        return response


def metrics_allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        sent = request.headers.get("Authorization", "")
        if hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR") or "")
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False) for net in settings.METRICS_ALLOWED_NETWORKS)


def metrics_page() -> bytes:
    """This process's metrics (every web process of this machine's, in prometheus_client's multiprocess
    mode) and then the deployment's, read from Redis."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        here = prometheus_client.CollectorRegistry()
        multiprocess.MultiProcessCollector(here)
    else:
        here = prometheus_client.REGISTRY
    page = prometheus_client.generate_latest(here)
    deployment = prometheus_client.CollectorRegistry(auto_describe=False)
    deployment.register(metrics_redis.Collector(redis_client(), metrics.FAMILIES, gauges=_gauges))
    try:
        return page + prometheus_client.generate_latest(deployment)
    except redis.RedisError as exc:  # the process's own figures still answer; /readyz says Redis is down
        log.warning("metrics: Redis did not answer: %s", exc)
        return page


def _gauges(r):
    depth = prometheus_client.core.GaugeMetricFamily(
        "explainer_queue_depth", "Tasks waiting on each Celery queue, taken by no worker yet.", labels=["queue"])
    for queue, waiting in queues.depths(r).items():
        depth.add_metric([queue], waiting)
    yield depth
    live = prometheus_client.core.GaugeMetricFamily(
        "explainer_workers_live", "Workers on each queue whose heartbeat has not lapsed.", labels=["queue"])
    for queue, names in workers.live(r).items():
        live.add_metric([queue], len(names))
    yield live
