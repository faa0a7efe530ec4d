"""The benchmark: both decodings of one checkpoint in one run, as text or one JSON object."""

import json

import pytest

from model_worker.lab import bench


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from model_worker.clover import CloverConfig, CloverForBlockDiffusion
    from model_worker.clover.tokenizer import special_ids, train_tokenizer

    path = tmp_path_factory.mktemp("clover-bench")
    tok = train_tokenizer(["<html><body>tides 潮汐</body></html>"] * 10, vocab_size=300)
    ids = special_ids(tok)
    config = CloverConfig.preset("tiny", vocab_size=len(tok), mask_token_id=ids["mask"], eos_token_id=ids["eos"],
                                 pad_token_id=ids["pad"], max_position_embeddings=256, trained_block_sizes=[1, 8, 32])
    CloverForBlockDiffusion(config).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


def test_json_output_holds_every_decoding_and_the_speedups(checkpoint, capsys):
    bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--prompts", "2",
                "--block-size", "8", "--max-new-tokens", "16", "--json"])
    result = json.loads(capsys.readouterr().out)
    for name, block in (("diffusion", 8), ("verified", 8), ("ar", 1)):
        section = result[name]
        for key in ("tokens", "forwards", "tokens_per_forward", "tokens_per_s", "first_block_s"):
            assert key in section
        assert section["block_size"] == block and section["prompts"] == 2
        assert 0 < section["tokens"] <= 2 * 16  # generated tokens only: the prompts are not counted
        assert section["tokens_per_forward"] == pytest.approx(section["tokens"] / section["forwards"], abs=1e-3)
        assert 0 <= section["on_topic"] <= 2
    assert result["ar"]["tokens_per_forward"] <= 1.0
    assert result["speedup"] == pytest.approx(result["diffusion"]["tokens_per_s"] / result["ar"]["tokens_per_s"], rel=1e-2)
    assert result["verified_speedup"] == pytest.approx(
        result["verified"]["tokens_per_s"] / result["ar"]["tokens_per_s"], rel=1e-2)
    assert [result[name]["decoding"] for name in ("diffusion", "verified", "ar")] == ["diffusion", "verified", "ar"]
    assert result["verified"]["rule"] is None and result["diffusion"]["rule"] == "threshold"
    assert result["verified"]["same_page_as_ar"] == 2  # greedy verified decoding writes the autoregressive page


def test_text_output_has_a_line_per_decoding_and_the_ratio_lines(checkpoint, capsys):
    bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--prompts", "1",
                "--block-size", "8", "--max-new-tokens", "8"])
    out = capsys.readouterr().out
    assert "diffu b8" in out and "verif b8" in out and "ar b1" in out and "speedup" in out
    assert "verified speedup" in out and "tokens per forward ratio" in out


def test_a_block_size_the_checkpoint_lacks_exits_with_a_message_naming_it(checkpoint):
    with pytest.raises(SystemExit, match="block size 16 was not trained"):
        bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--block-size", "16"])


def test_a_missing_checkpoint_exits_with_a_message_naming_it(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint folder"):
        bench.main(["--path", str(tmp_path / "gone"), "--device", "cpu", "--threads", "1"])


def test_the_fixed_prompt_set_asks_corpus_topics_in_new_words_in_both_languages():
    from model_worker.corpus import load_pages

    pages = {p.slug: p for p in load_pages()}
    for _lang, question, slug in bench.PROMPTS:
        assert slug in pages, slug
        assert question not in pages[slug].questions_en + pages[slug].questions_zh
    assert {lang for lang, _, _ in bench.PROMPTS[: bench.DEFAULT_PROMPTS]} == {"en", "zh"}


@pytest.mark.browser
@pytest.mark.slow
def test_the_render_rate_counts_a_corpus_page_as_passing_and_a_bare_page_as_failing():
    from model_worker.corpus import CORPUS_DIR

    good = (CORPUS_DIR / "pages" / "tides.html").read_text(encoding="utf-8")
    rate = bench.render_pass_rate([good, "<!doctype html><html><body>no scene</body></html>"])
    assert rate["passed"] == 1 and rate["checked"] == 2 and len(rate["failures"]) == 1


def test_corpus_questions_ask_each_corpus_page_its_first_training_question(checkpoint, capsys):
    from model_worker.corpus import load_pages

    bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--corpus-questions", "--prompts", "2",
                "--block-size", "8", "--max-new-tokens", "8", "--json"])
    result = json.loads(capsys.readouterr().out)
    pages = load_pages()[:2]
    assert result["prompt_set"] == [{"lang": p.questions[0][0], "question": p.questions[0][1], "topic": p.slug}
                                    for p in pages]
    assert result["diffusion"]["prompts"] == result["ar"]["prompts"] == 2


def test_forward_costs_time_each_kind_of_forward_and_count_its_operators(checkpoint, capsys):
    bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--block-size", "8",
                "--forwards", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["block_size"] == 8 and result["history"] == 128
    for name in ("ar_step", "block_step", "commit_step", "draft_step", "verify_step"):
        assert result[name]["ms"] > 0 and result[name]["aten_ops"] > 20


def test_a_page_is_on_topic_when_its_title_is_that_of_the_asked_corpus_page():
    titles = bench.corpus_titles()
    assert titles["tides"] == "Why the sea has tides"
    assert bench.page_title("<html><head><title> Why the sea has tides </title></head></html>") == titles["tides"]
    assert bench.page_title("<html><body>no title</body></html>") is None


def test_end_to_end_writes_the_same_pages_through_the_task_and_times_them_beside_the_engine(checkpoint, capsys):
    bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--prompts", "2",
                "--max-new-tokens", "16", "--json", "--end-to-end"])
    result = json.loads(capsys.readouterr().out)
    e2e = result["end_to_end"]
    # A tiny random model writes no complete document, so the worker fails its page as `empty_page`
    # after streaming it: what is compared here is what was streamed and how fast.
    assert len(e2e["statuses"]) == 2
    assert e2e["tokens"] == result["verified"]["tokens"]  # the stream counted every token the engine wrote
    assert e2e["tokens_per_s"] > 0 and e2e["engine_tokens_per_s"] > 0 and e2e["first_block_s"] > 0
    assert e2e["of_engine"] == pytest.approx(e2e["tokens_per_s"] / e2e["engine_tokens_per_s"], rel=1e-2)


def test_end_to_end_refuses_a_draft_width_the_product_does_not_use(checkpoint):
    with pytest.raises(SystemExit, match="--end-to-end runs the product's verified preset"):
        bench.main(["--path", str(checkpoint), "--device", "cpu", "--threads", "1", "--prompts", "1",
                    "--block-size", "8", "--max-new-tokens", "8", "--end-to-end"])


SCALE = ["--scale", "tiny-moe", "--random-weights", "--device", "cpu", "--threads", "1", "--history", "16",
         "--prefill", "32", "--batches", "1,2", "--repeats", "1", "--json"]


def test_the_scale_bench_times_every_forward_without_host_syncs_inside_a_forward(capsys):
    bench.main(SCALE)
    result = json.loads(capsys.readouterr().out)
    names = {"one_token", "draft", "verify_accept", "verified_round", "block_step", "prefill_32"}
    assert set(result["items"]) == {f"{n}_bs{b}" for n in names for b in (1, 2)}
    assert result["sync_violations"] == []
    assert result["items"]["verified_round_bs1"]["host_syncs"] == 1  # the round's one read
    assert (result["kernels"], result["prefill_delta_rule"]) == ("auto", "torch")  # fla only on CUDA
    for item in result["items"].values():
        assert item["ms"] > 0 and item["aten_ops"] > 0
        assert item["experts_per_layer"] > 1  # the router spreads tokens (it was all-zero once)


def test_with_graphs_the_scale_bench_times_the_captured_forms_of_the_decoding_forwards_too(capsys):
    bench.main(SCALE + ["--graphs", "--batches", "1"])
    result = json.loads(capsys.readouterr().out)
    captured = {"one_token_graph_bs1", "draft_graph_bs1", "verify_accept_graph_bs1", "verified_round_graph_bs1"}
    assert captured <= set(result["items"])
    assert result["sync_violations"] == []
    assert result["items"]["verified_round_graph_bs1"]["host_syncs"] == 1
    for name in captured:  # on CPU the static forms run eagerly: the same forwards, the same experts
        item, twin = result["items"][name], result["items"][name.replace("_graph_", "_")]
        assert item["ms"] > 0 and item["forwards"] == twin["forwards"] and item["experts_per_layer"] > 1


def test_an_item_call_planted_in_a_forward_breaks_the_sync_target(capsys, monkeypatch):
    from model_worker.clover.layers import CloverGatedDeltaNet

    forward = CloverGatedDeltaNet.forward

    def planted(self, x, **kw):
        x.sum().item()
        return forward(self, x, **kw)

    monkeypatch.setattr(CloverGatedDeltaNet, "forward", planted)
    bench.main(SCALE)
    result = json.loads(capsys.readouterr().out)
    assert any(v.startswith("one_token_bs1: ") for v in result["sync_violations"])
    assert result["items"]["one_token_bs1"]["sync_sites"] == {"item": 3}  # one per GDN layer


@pytest.mark.parametrize("args, message", [
    (["--scale", "huge", "--random-weights"], "unknown scale 'huge'"),
    (["--scale", "tiny-moe"], "pass --random-weights"),
    (["--scale", "tiny-moe", "--random-weights", "--layers", "9"], "--layers must be between 1 and 4"),
    (["--scale", "clover-35b-a3b", "--random-weights", "--device", "cpu", "--batches", "4096"], "GiB is free"),
])
def test_the_scale_bench_refuses_bad_input_with_a_clear_message(args, message):
    with pytest.raises(SystemExit) as exit_:
        bench.main(args)
    assert message in str(exit_.value)


def test_the_scale_bench_refuses_fla_kernels_it_cannot_run(monkeypatch):
    from model_worker.clover import kernels

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(SystemExit, match="MODEL_KERNELS=fla (needs the gpu extra|runs Triton kernels, which need a CUDA)"):
        bench.main(SCALE + ["--kernels", "fla"])
    monkeypatch.setattr(kernels, "fla_installed", lambda: False)
    with pytest.raises(SystemExit, match=r"needs the gpu extra: pip install -e '\.\[gpu\]'"):
        bench.main(SCALE + ["--kernels", "fla"])


def test_the_scale_bench_refuses_cuda_where_there_is_none(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="sees no CUDA GPU"):
        bench.main(["--scale", "tiny-moe", "--random-weights", "--device", "cuda"])
