"""Continuous batching in the Clover backend: pages asked for from several threads at once share the
model's rounds, and each is the page it would be alone."""

import threading

import pytest

from model_worker.backends.clover import CloverBackend
from model_worker.config import engine_settings, gpu_worker_pool, load_backend
from model_worker.contract.pages import PageRequest
from tests.model_worker.test_backend_clover import Recorder, save_tiny_checkpoint

QUESTIONS = ["Why are there tides?", "潮汐是怎样产生的？", "Why tides? Why tides?"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return save_tiny_checkpoint(tmp_path_factory.mktemp("clover-tiny"))


def backend(checkpoint, batch):
    return CloverBackend(path=checkpoint, device="cpu", threads=1, block_size=8, max_new_tokens=160, batch=batch)


def at_once(backend, sinks):
    """generate_page for every question on its own thread, started together; results (or errors) in order."""
    out = [None] * len(sinks)
    start = threading.Barrier(len(sinks))

    def ask(i):
        start.wait()
        try:
            out[i] = backend.generate_page(PageRequest(question=QUESTIONS[i]), sinks[i])
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            out[i] = exc

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(sinks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_pages_asked_at_once_share_rounds_and_each_is_the_page_it_is_alone(checkpoint):
    alone = backend(checkpoint, 1)
    solo = [alone.generate_page(PageRequest(question=q), Recorder()) for q in QUESTIONS]
    sinks = [Recorder() for _ in QUESTIONS]
    together = at_once(backend(checkpoint, 3), sinks)
    for page, single, sink in zip(together, solo, sinks, strict=True):
        assert page.html == single.html
        assert page.stats["tokens"] == single.stats["tokens"] and page.stats["forwards"] == single.stats["forwards"]
        assert "".join(text for _, text in sink.commits) == "".join(
            text for _, text in _commits(alone, QUESTIONS[sinks.index(sink)]))
    assert all(page.stats["batch"] >= 2 for page in together)  # they ran side by side, not one by one


def _commits(backend, question):
    sink = Recorder()
    backend.generate_page(PageRequest(question=question), sink)
    return sink.commits


class Broken(Recorder):
    def on_commit(self, block, text, tokens):
        super().on_commit(block, text, tokens)
        if len(self.commits) == 2:
            raise ConnectionError("the page's stream is gone")


def test_a_page_whose_sink_fails_ends_alone_with_its_error_and_a_stopped_page_leaves_early(checkpoint):
    batched = backend(checkpoint, 3)
    sinks = [Broken(), Recorder(stop_after_commits=3), Recorder()]
    broken, stopped, whole = at_once(batched, sinks)
    assert isinstance(broken, ConnectionError) and len(sinks[0].commits) == 2
    assert stopped.stopped and len(sinks[1].commits) == 3
    assert whole.html == backend(checkpoint, 1).generate_page(PageRequest(question=QUESTIONS[2]), Recorder()).html
    # The decoder runs on: the next page is written as ever.
    again = batched.generate_page(PageRequest(question=QUESTIONS[0]), Recorder())
    assert not again.stopped and again.stats["batch"] == 1


def test_model_batch_settings_pick_the_worker_pool_and_refuse_what_cannot_batch(checkpoint):
    assert gpu_worker_pool(engine_settings({})) == ["-c", "1"]
    assert gpu_worker_pool(engine_settings({"MODEL_BATCH": "4"})) == ["--pool", "threads", "-c", "4"]
    with pytest.raises(ValueError, match="MODEL_BATCH=0 must be at least 1"):
        engine_settings({"MODEL_BATCH": "0"})
    with pytest.raises(ValueError, match="MODEL_BATCH='many' is not a whole number"):
        engine_settings({"MODEL_BATCH": "many"})
    with pytest.raises(ValueError, match="the openai backend writes one page at a time"):
        load_backend(engine_settings({"MODEL_BACKEND": "openai", "MODEL_BATCH": "2"}))
    with pytest.raises(ValueError, match="batches verified decoding, not 'ar'"):
        CloverBackend(path=checkpoint, device="cpu", threads=1, decoding="ar", batch=2)
    loaded = load_backend(engine_settings({"MODEL_DEVICE": "cpu", "MODEL_BATCH": "2", "MODEL_THREADS": "1"}))
    assert loaded.decoder is not None and loaded.decoder.max_batch == 2
