"""What each event of a page's life adds to `/metrics`, recorded by the service where it happens and read
back as Prometheus text; counters kept in Redis add up across processes."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from explainer import metrics, metrics_redis
from explainer.models import Generation, Thread
from explainer.services.finishing import generation_finish
from explainer.services.streams import redis_client
from model_worker.contract.pages import PageOutcome

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

PAGE = "<!doctype html>\n<html><head><title>Sky</title></head><body><p>Blue.</p></body></html>\n"


def scrape() -> dict[tuple[str, tuple], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    body = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def sample(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def queued_generation(session_key: str, seconds_ago: float = 0) -> Generation:
    thread = Thread.objects.create(session_key=session_key)
    generation = Generation.objects.create(thread=thread, question="Why is the sky blue?")
    if seconds_ago:
        Generation.objects.filter(pk=generation.pk).update(created_at=timezone.now() - timedelta(seconds=seconds_ago))
    return generation


def test_a_written_page_counts_a_done_generation_its_backend_and_its_timings(session_key):
    generation = queued_generation(session_key, seconds_ago=7)
    stats = {"tokens": 300, "tokens_per_s": 42.0, "first_block_s": 0.5, "seconds": 3.0}

    generation_finish(generation_id=generation.pk, outcome=PageOutcome(status="done", html=PAGE, stats=stats))

    samples = scrape()
    assert sample(samples, "explainer_generations_total", outcome="done", error_code="") == 1
    assert sample(samples, "explainer_pages_total", backend="DeterministicDenoiser") == 1
    assert sample(samples, "explainer_time_to_done_seconds_count") == 1
    assert 7 <= sample(samples, "explainer_time_to_done_seconds_sum") < 9
    # The first block came 2.5 s before the end of the page: about 4.5 s after the question.
    assert 4 <= sample(samples, "explainer_time_to_first_block_seconds_sum") < 6.5
    assert sample(samples, "explainer_time_to_first_block_seconds_bucket", le="5.0") == 1
    assert sample(samples, "explainer_time_to_first_block_seconds_bucket", le="2.0") == 0
    assert sample(samples, "explainer_tokens_per_second_bucket", backend="DeterministicDenoiser", le="50.0") == 1
    assert sample(samples, "explainer_tokens_per_second_bucket", backend="DeterministicDenoiser", le="20.0") == 0


def test_a_failed_page_counts_its_error_code_and_no_page(session_key):
    generation = queued_generation(session_key)

    generation_finish(generation_id=generation.pk, outcome=PageOutcome.failed("timeout", "took too long"))
    generation_finish(generation_id=generation.pk, outcome=PageOutcome.failed("timeout", "took too long"))  # again

    samples = scrape()
    assert sample(samples, "explainer_generations_total", outcome="failed", error_code="timeout") == 1
    assert sample(samples, "explainer_pages_total", backend="DeterministicDenoiser") == 0
    assert sample(samples, "explainer_time_to_done_seconds_count") == 0


def test_a_cancelled_page_counts_as_cancelled(session_key):
    generation = queued_generation(session_key)

    generation_finish(generation_id=generation.pk, outcome=PageOutcome(status="cancelled"))

    assert sample(scrape(), "explainer_generations_total", outcome="cancelled", error_code="") == 1


def test_counters_from_several_processes_add_up_in_redis():
    family = metrics.ROUTER_DECISIONS
    for _ in range(3):  # as three web processes would, each with its own client
        with redis_client().pipeline() as pipe:
            metrics_redis.add(pipe, family, {"decision": "refused"})
            pipe.execute()

    assert sample(scrape(), "explainer_router_decisions_total", decision="refused") == 3


def test_a_metric_that_cannot_be_written_costs_the_caller_nothing(settings, caplog):
    from tests.support.net import free_port

    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/15"

    metrics.repair_queued()  # no exception

    assert "metric not recorded" in caplog.text


def test_histogram_buckets_are_cumulative_as_prometheus_reads_them():
    with redis_client().pipeline() as pipe:
        for seconds in (1.5, 12.0, 700.0):
            metrics_redis.observe(pipe, metrics.RENDER_CHECK_SECONDS, seconds)
        pipe.execute()

    samples = scrape()
    buckets = {float(dict(labels)["le"]): value for (name, labels), value in samples.items()
               if name == "explainer_render_check_seconds_bucket"}
    assert buckets[2.0] == 1 and buckets[15.0] == 2 and buckets[100.0] == 2 and buckets[float("inf")] == 3
    assert sample(samples, "explainer_render_check_seconds_count") == 3


def test_the_websocket_gauge_follows_open_sockets():
    before = metrics.WEBSOCKETS_OPEN._value.get()
    metrics.socket_opened()
    metrics.socket_opened()
    metrics.socket_closed()

    body = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert re.search(rf"^explainer_websockets_open {before + 1}$", body, re.MULTILINE)
    metrics.socket_closed()
