"""Training: the block-diffusion objective lowers the loss, and an interrupted run resumes exactly."""

from dataclasses import replace

import pytest
import torch

from model_worker.corpus import Page
from model_worker.lab.train import PRESETS, build_examples, collate, step_batch, train


def corpus_page(slug: str, html: str, questions: tuple[tuple[str, str], ...]) -> Page:
    """A corpus page with the fields training reads; the rest filled in."""
    return Page(slug=slug, file=f"{slug}.html", title=slug, lang="en", subject="physics", tags=("test",),
                questions_en=tuple(q for lang, q in questions if lang == "en"),
                questions_zh=tuple(q for lang, q in questions if lang == "zh"), html=html)


PAGES = [
    corpus_page(
        slug=f"topic-{i}",
        html=(
            f'<!doctype html>\n<html lang="en"><body><script type="module">\nimport {{ start }} from "kit";\n'
            f'const app = start({{ title: "Topic {i}" }});\napp.sphere({{ radius: {i + 1} }});\n'
            "</script></body></html>"
        ),
        questions=(("en", f"What is topic {i}?"), ("zh", f"主题{i}是什么？")),
    )
    for i in range(4)
]


def test_training_on_a_tiny_corpus_lowers_the_loss(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=60, save_every=60, lr=1e-2)
    losses = train(cfg, tmp_path, pages=PAGES, progress=False, log=lambda _: None)["losses"]
    assert sum(losses[-10:]) / 10 < 0.6 * sum(losses[:10]) / 10
    assert (tmp_path / "config.json").is_file() and (tmp_path / "tokenizer.json").is_file()


def test_a_run_interrupted_and_resumed_ends_in_the_same_state_as_an_uninterrupted_one(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=8, save_every=3)
    straight = train(cfg, tmp_path / "a", pages=PAGES, progress=False, log=lambda _: None)
    train(cfg, tmp_path / "b", pages=PAGES, progress=False, stop_after=5, log=lambda _: None)
    resumed = train(cfg, tmp_path / "b", pages=PAGES, progress=False, resume=True, log=lambda _: None)
    assert resumed["losses"] == straight["losses"]
    a = torch.load(tmp_path / "a" / "train_state.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "train_state.pt", weights_only=False)
    assert a["step"] == b["step"] == 8
    for name, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][name]), name


def test_the_same_seed_gives_the_same_run_and_another_seed_a_different_one(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=3, save_every=3)
    one = train(cfg, tmp_path / "a", pages=PAGES, progress=False, log=lambda _: None)["losses"]
    two = train(cfg, tmp_path / "b", pages=PAGES, progress=False, log=lambda _: None)["losses"]
    other = train(replace(cfg, seed=1), tmp_path / "c", pages=PAGES, progress=False, log=lambda _: None)["losses"]
    assert one == two and one != other


def test_every_trained_block_size_including_one_is_drawn():
    cfg = PRESETS["demo"]
    drawn = {step_batch(step, cfg, [None], [None])[1] for step in range(200)}
    assert drawn == set(cfg.block_sizes) and 1 in drawn


def test_causal_history_is_drawn_at_its_rate_never_at_block_size_one_and_the_run_trains(tmp_path):
    from model_worker.lab.train import causal_history_at

    cfg = replace(PRESETS["demo"], causal_history_rate=0.5)
    drawn = [causal_history_at(step, cfg, 32) for step in range(400)]
    assert 150 < sum(drawn) < 250 and drawn == [causal_history_at(step, cfg, 32) for step in range(400)]
    assert not any(causal_history_at(step, cfg, 1) for step in range(100))
    assert not any(causal_history_at(step, PRESETS["demo"], 32) for step in range(100))
    tiny = replace(PRESETS["tiny"], steps=4, save_every=4, causal_history_rate=1.0, draft_mask_rate=0.5)
    losses = train(tiny, tmp_path / "run", pages=PAGES, progress=False, log=lambda _: None)["losses"]
    assert len(losses) == 4 and all(loss > 0 for loss in losses)
    with pytest.raises(ValueError, match="causal_history_rate"):
        replace(PRESETS["tiny"], causal_history_rate=1.5)


def test_examples_mask_only_the_page_and_cover_both_languages_and_follow_ups(tmp_path):
    from model_worker.clover.tokenizer import special_ids, train_tokenizer

    tok = train_tokenizer([p.html for p in PAGES], vocab_size=400)
    cfg = replace(PRESETS["tiny"], foreign_questions=1)
    direct, followups = build_examples(tok, PAGES, cfg)
    assert len(direct) == len(followups) == sum(len(p.questions) + 1 for p in PAGES)
    ids = special_ids(tok)
    assert all(e.ids[e.prompt_len - 1] == ids["page"] and e.ids[-1] == ids["eos"] for e in direct)
    assert all(e.ids[0] == ids["previous"] for e in followups)
    input_ids, maskable = collate(direct[:2], ids["pad"])
    assert not maskable[0, : direct[0].prompt_len].any() and maskable[0, direct[0].prompt_len : len(direct[0].ids)].all()
    assert not maskable[0, len(direct[0].ids) :].any()


def test_every_example_names_its_page_as_the_topic_even_under_another_pages_question():
    from model_worker.clover.tokenizer import train_tokenizer

    tok = train_tokenizer([p.html for p in PAGES], vocab_size=400)
    direct, _ = build_examples(tok, PAGES, replace(PRESETS["tiny"], foreign_questions=2))
    for page in PAGES:
        target = tok.encode(page.html.strip(), add_special_tokens=False)
        prompts = [tok.decode(e.ids[: e.prompt_len]) for e in direct if e.ids[e.prompt_len:-1] == target]
        assert len(prompts) == len(page.questions) + 2
        assert all(prompt.endswith(f"topic: {page.slug}<|page|>") for prompt in prompts)
        own = {q for _, q in page.questions}
        foreign = [p for p in prompts if not any(q in p for q in own)]
        assert len(foreign) == 2


def test_a_page_longer_than_the_context_is_left_out_with_a_warning_and_none_fitting_is_an_error():
    from model_worker.clover.tokenizer import train_tokenizer

    tok = train_tokenizer([p.html for p in PAGES], vocab_size=400)
    long_page = corpus_page(slug="long-one", html=PAGES[0].html * 30, questions=(("en", "Long?"),))
    warnings = []
    direct, _ = build_examples(tok, [*PAGES, long_page], replace(PRESETS["tiny"], foreign_questions=0),
                               log=warnings.append)
    assert len(direct) == sum(len(p.questions) for p in PAGES)
    assert len(warnings) == 1 and "long-one" in warnings[0] and "512" in warnings[0]
    with pytest.raises(ValueError, match="context of 16 tokens"):
        build_examples(tok, PAGES, replace(PRESETS["tiny"], context=16), log=warnings.append)


def test_a_finished_run_can_be_resumed_to_train_on_for_more_steps(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=4, save_every=2)
    train(cfg, tmp_path, pages=PAGES, progress=False, log=lambda _: None)
    more = train(cfg, tmp_path, pages=PAGES, progress=False, resume=True, extend_to=6, log=lambda _: None)
    assert more["step"] == 6 and len(more["losses"]) == 6


def test_a_new_run_can_start_from_a_checkpoint_and_keeps_its_tokenizer_and_pages(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=30, save_every=30, lr=1e-2)
    first = train(cfg, tmp_path / "a", pages=PAGES[:2], progress=False, log=lambda _: None)
    logged = []
    second = train(replace(cfg, steps=5, save_every=5, lr=1e-3), tmp_path / "b", pages=PAGES, progress=False,
                   init_from=tmp_path / "a", log=logged.append)
    assert any("starting from the checkpoint" in line for line in logged)
    # It starts where the first run ended, not from random weights, and on the first run's two pages only.
    assert second["losses"][0] < 0.8 * first["losses"][0]
    record = (tmp_path / "b" / "training.json").read_text()
    assert '"topic-0"' in record and '"topic-1"' in record and '"topic-2"' not in record
    assert (tmp_path / "b" / "tokenizer.json").read_bytes() == (tmp_path / "a" / "tokenizer.json").read_bytes()


def test_starting_from_a_folder_without_a_checkpoint_names_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint to start from in .*empty"):
        train(PRESETS["tiny"], tmp_path / "b", pages=PAGES, progress=False, init_from=tmp_path / "empty",
              log=lambda _: None)


def test_suffix_masking_and_block_weights_are_run_settings_kept_for_resume(tmp_path, monkeypatch):
    import model_worker.lab.train as training

    cfg = replace(PRESETS["tiny"], steps=2, save_every=2, block_weights=(1, 0, 3), suffix_mask_rate=0.5)
    train(cfg, tmp_path, pages=PAGES, progress=False, log=lambda _: None)
    saved = torch.load(tmp_path / "train_state.pt", weights_only=False)["config"]
    assert saved["suffix_mask_rate"] == 0.5 and saved["block_weights"] == [1, 0, 3]
    with pytest.raises(ValueError, match="suffix_mask_rate"):
        replace(PRESETS["tiny"], suffix_mask_rate=1.5)

    seen = {}
    monkeypatch.setattr(training, "train", lambda cfg, out, **_: seen.setdefault("cfg", cfg) and {
        "step": 0, "losses": [], "seconds": 0.0})
    training.main(["--preset", "tiny", "--out", str(tmp_path / "cli"), "--block-weights", "1", "0", "3",
                   "--suffix-mask-rate", "0.25", "--head-block-weights", "2", "1", "0", "--threads", "1"])
    assert seen["cfg"].block_weights == (1.0, 0.0, 3.0) and seen["cfg"].suffix_mask_rate == 0.25
    assert seen["cfg"].head_block_weights == (2.0, 1.0, 0.0)


def test_head_steps_train_on_the_prompt_and_only_the_opening_of_the_page():
    from model_worker.lab.train import Example

    cfg = replace(PRESETS["demo"], head_rate=0.5, head_tokens=4)
    example = Example(ids=list(range(100)), prompt_len=10)
    lengths = {len(step_batch(step, cfg, [example], [])[0][0].ids) for step in range(100)}
    assert lengths == {14, 100}  # about half the steps see 10 prompt + 4 page tokens
    plain = {len(step_batch(step, PRESETS["demo"], [example], [])[0][0].ids) for step in range(100)}
    assert plain == {100}
    with pytest.raises(ValueError, match="head_rate"):
        replace(PRESETS["demo"], head_rate=2.0)


def test_head_steps_draw_their_own_block_sizes_and_page_steps_keep_theirs():
    from model_worker.lab.train import Example, _config_from_dict, _config_to_dict

    cfg = replace(PRESETS["demo"], head_rate=0.5, head_tokens=4, head_block_weights=(1, 0, 0, 0),
                  block_weights=(0, 0, 0, 1))
    example = Example(ids=list(range(100)), prompt_len=10)
    drawn = {(len(batch[0].ids), size) for batch, size, _ in (step_batch(s, cfg, [example], []) for s in range(100))}
    assert drawn == {(14, 1), (100, 32)}
    assert _config_from_dict(_config_to_dict(cfg)) == cfg
    with pytest.raises(ValueError, match="head_block_weights"):
        replace(PRESETS["demo"], head_block_weights=(1, 1))


def test_the_training_record_names_the_pages_the_checkpoint_can_write(tmp_path):
    import json

    long_page = replace(PAGES[0], slug="long-one", html=PAGES[0].html * 30)
    cfg = replace(PRESETS["tiny"], steps=2, save_every=2)
    train(cfg, tmp_path, pages=[*PAGES, long_page], progress=False, log=lambda _: None)
    record = json.loads((tmp_path / "training.json").read_text())
    assert "long-one" in record["pages"] and record["writable_pages"] == sorted(p.slug for p in PAGES)


def test_a_run_from_a_checkpoint_can_grow_its_context_to_fit_longer_pages(tmp_path):
    import json

    cfg = replace(PRESETS["tiny"], steps=2, save_every=2, context=160)
    long_page = corpus_page("long", PAGES[0].html.replace("</script>", "// more text\n" * 40 + "</script>"),
                            (("en", "What is the long one?"),))
    train(cfg, tmp_path / "a", pages=PAGES, progress=False, log=lambda _: None)
    logged = []
    train(replace(cfg, context=1024), tmp_path / "b", pages=[*PAGES, long_page], progress=False,
          init_from=tmp_path / "a", all_pages=True, log=logged.append)
    assert json.loads((tmp_path / "b" / "config.json").read_text())["max_position_embeddings"] == 1024
    assert "long" in json.loads((tmp_path / "b" / "training.json").read_text())["writable_pages"]
    assert not any("more than the training context" in line for line in logged)


def test_a_time_budget_stops_the_run_with_its_state_saved_and_resumable(tmp_path):
    cfg = replace(PRESETS["tiny"], steps=20, save_every=20)
    logged = []
    spent = train(cfg, tmp_path, pages=PAGES, progress=False, minutes=1e-6, log=logged.append)
    assert spent["step"] == 1 and any("minutes are spent at step 1" in line for line in logged)
    assert torch.load(tmp_path / "train_state.pt", weights_only=False)["step"] == 1
    more = train(cfg, tmp_path, pages=PAGES, progress=False, resume=True, stop_after=3, log=lambda _: None)
    assert more["step"] == 3 and len(more["losses"]) == 3


def test_a_time_budget_sets_the_step_count_from_the_timed_steps():
    from model_worker.lab.train import fit_steps

    # 10 steps in, 0.5 s a step, 100 s left: 95 s of steps (5% kept for saving).
    assert fit_steps(10, 0.5, 100.0) == 10 + 190
    assert fit_steps(10, 0.5, -3.0) == 10  # already over: stop where it is


def test_training_on_a_device_this_machine_lacks_is_a_usage_error_naming_it(tmp_path, capsys):
    from model_worker.lab.train import main

    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            main(["--preset", "tiny", "--out", str(tmp_path), "--device", "cuda", "--threads", "1"])
        assert "sees no CUDA GPU" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--preset", "tiny", "--out", str(tmp_path), "--device", "abacus", "--threads", "1"])
    assert "abacus" in capsys.readouterr().err


def test_the_library_preset_fits_every_shipped_page_with_its_prompt():
    from model_worker.clover.tokenizer import load_tokenizer
    from model_worker.config import DEFAULT_MODEL_PATH
    from model_worker.corpus import load_pages

    tok = load_tokenizer(DEFAULT_MODEL_PATH)  # a tokenizer of the demo's size, trained on fewer pages
    warnings = []
    cfg = replace(PRESETS["library"], foreign_questions=0, followup_rate=0.0)
    direct, _ = build_examples(tok, load_pages(), cfg, log=warnings.append)
    assert warnings == []
    assert {e.slug for e in direct} == {p.slug for p in load_pages()}
