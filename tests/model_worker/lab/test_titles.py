"""Which page title the model prefers after a question: the measure behind `on_topic`."""

import json

import pytest

from model_worker.backends.clover import load_checkpoint
from model_worker.config import DEFAULT_MODEL_PATH
from model_worker.corpus import load_pages
from model_worker.lab import bench
from model_worker.lab.titles import title_choice


@pytest.fixture(scope="module")
def demo():
    return load_checkpoint(DEFAULT_MODEL_PATH, "cpu")


def test_a_page_whose_opening_no_other_page_shares_can_only_prefer_its_own_title(demo):
    tok, model = demo
    page = load_pages()[0]
    result = title_choice(model, tok, [page])
    choice = result["choices"][page.slug]
    assert result["pages"] == 1 and result["own_title_preferred"] == 1
    assert choice["candidates"] == 1 and choice["preferred"] == page.slug
    assert choice["logprob"] == choice["own_logprob"] < 0


def test_bench_titles_reports_for_each_trained_page_the_title_it_prefers_over_its_own(capsys):
    # How many pages prefer their own title is a figure of the checkpoint: the bench reports it and
    # docs/model.md records it; a test only holds what is true of every checkpoint.
    bench.main(["--titles", "6", "--device", "cpu", "--threads", "1"])
    result = json.loads(capsys.readouterr().out)
    assert result["pages"] == 6 and len(result["choices"]) == 6
    assert result["own_title_preferred"] == sum(slug == c["preferred"] for slug, c in result["choices"].items())
    for choice in result["choices"].values():
        assert choice["logprob"] >= choice["own_logprob"] and choice["candidates"] >= 1


def test_bench_titles_names_a_missing_checkpoint(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint folder at .*nowhere"):
        bench.main(["--titles", "2", "--path", str(tmp_path / "nowhere"), "--device", "cpu"])
