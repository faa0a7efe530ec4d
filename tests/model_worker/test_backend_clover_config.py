"""Engine settings: the environment chooses backend, checkpoint and device, and bad values are refused."""

from pathlib import Path

import pytest

from model_worker.config import DEFAULT_BACKEND, DEFAULT_MODEL_PATH, REPO_ROOT, engine_settings, load_backend


def test_defaults_are_the_clover_backend_on_the_committed_demo_checkpoint():
    settings = engine_settings({})
    assert settings.backend == DEFAULT_BACKEND == "clover"
    assert settings.backend_spec == "model_worker.backends.clover:CloverBackend"
    assert settings.model_path == DEFAULT_MODEL_PATH and settings.device == "auto"


def test_a_relative_model_path_is_taken_from_the_repository_root():
    settings = engine_settings({"MODEL_PATH": "var/ckpt", "MODEL_DEVICE": "CPU"})
    assert settings.model_path == REPO_ROOT / "var" / "ckpt" and settings.device == "cpu"
    assert engine_settings({"MODEL_PATH": "/abs/ckpt"}).model_path == Path("/abs/ckpt")


def test_model_decoding_names_the_decoding_and_an_unknown_one_is_refused():
    assert engine_settings({}).decoding is None
    assert engine_settings({"MODEL_DECODING": "Verified"}).decoding == "verified"
    with pytest.raises(ValueError, match="'greedy'.*diffusion, verified, ar"):
        engine_settings({"MODEL_DECODING": "greedy"})


@pytest.mark.parametrize(("name", "field"), [("MODEL_THREADS", "threads"), ("MODEL_MAX_NEW_TOKENS", "max_new_tokens")])
def test_counts_in_the_environment_are_read_and_a_bad_count_is_refused_by_name(name, field):
    assert getattr(engine_settings({}), field) is None
    assert getattr(engine_settings({name: " 3 "}), field) == 3
    for bad in ("two", "0"):
        with pytest.raises(ValueError, match=name):
            engine_settings({name: bad})


def test_model_graphs_is_a_flag_and_only_the_clover_backend_takes_it():
    assert engine_settings({}).graphs is False
    assert engine_settings({"MODEL_GRAPHS": "1"}).graphs and engine_settings({"MODEL_GRAPHS": "On"}).graphs
    assert engine_settings({"MODEL_GRAPHS": "0"}).graphs is False
    with pytest.raises(ValueError, match="MODEL_GRAPHS='maybe'"):
        engine_settings({"MODEL_GRAPHS": "maybe"})
    with pytest.raises(ValueError, match="MODEL_GRAPHS: the openai backend does not capture"):
        load_backend(engine_settings({"MODEL_BACKEND": "openai", "MODEL_GRAPHS": "1"}))


def test_model_kernels_is_read_checked_and_only_the_clover_backend_takes_it(monkeypatch):
    assert engine_settings({}).kernels == "auto"
    assert engine_settings({"MODEL_KERNELS": " Torch "}).kernels == "torch"
    with pytest.raises(ValueError, match="MODEL_KERNELS='cuda' is not one of auto, torch, fla"):
        engine_settings({"MODEL_KERNELS": "cuda"})
    with pytest.raises(ValueError, match="MODEL_KERNELS=fla: the openai backend does not run"):
        load_backend(engine_settings({"MODEL_BACKEND": "openai", "MODEL_KERNELS": "fla"}))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    # the demo checkpoint on a CPU: fla's kernels need the gpu extra and a CUDA device
    with pytest.raises(ValueError, match="MODEL_KERNELS=fla (needs the gpu extra|runs Triton kernels)"):
        load_backend(engine_settings({"MODEL_KERNELS": "fla", "MODEL_DEVICE": "cpu"}))


def test_an_unknown_device_or_malformed_backend_is_refused_by_name():
    with pytest.raises(ValueError, match="'tpu'"):
        engine_settings({"MODEL_DEVICE": "tpu"})
    with pytest.raises(ValueError, match="'nocolon' is not one of clover, transformers, openai"):
        engine_settings({"MODEL_BACKEND": "nocolon"})


def test_short_backend_names_and_the_dotted_form_name_the_same_classes():
    for name in ("clover", "transformers", "openai"):
        assert engine_settings({"MODEL_BACKEND": name}).backend_spec.startswith(f"model_worker.backends.{name}:")
    dotted = "tests.support.denoiser:DeterministicDenoiser"
    assert engine_settings({"MODEL_BACKEND": dotted}).backend_spec == dotted


def test_the_configured_backend_is_built_with_path_and_device(tmp_path):
    from model_worker.backends.clover import CheckpointFolderError

    settings = engine_settings({"MODEL_PATH": str(tmp_path / "missing"), "MODEL_DEVICE": "cpu"})
    with pytest.raises(CheckpointFolderError, match="missing"):
        load_backend(settings)
