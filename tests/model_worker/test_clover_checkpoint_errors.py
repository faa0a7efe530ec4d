"""A missing or broken checkpoint folder fails with an error that names the folder and the problem."""

import pytest
import torch
from huggingface_hub.errors import StrictDataclassClassValidationError

from model_worker.clover import CheckpointError, CloverConfig, CloverForBlockDiffusion


def saved(tmp_path):
    torch.manual_seed(0)
    CloverForBlockDiffusion(CloverConfig.preset("tiny")).save_pretrained(tmp_path)
    return tmp_path


def test_a_missing_folder_is_named(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(CheckpointError, match=f"no checkpoint folder at {missing}"):
        CloverForBlockDiffusion.from_pretrained(missing)


def test_a_folder_without_config_is_named(tmp_path):
    with pytest.raises(CheckpointError, match=f"{tmp_path} has no config.json"):
        CloverForBlockDiffusion.from_pretrained(tmp_path)


def test_a_corrupt_config_is_named(tmp_path):
    folder = saved(tmp_path)
    (folder / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=f"{folder} could not be loaded"):
        CloverForBlockDiffusion.from_pretrained(folder)


def test_corrupt_weights_are_named(tmp_path):
    folder = saved(tmp_path)
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match=f"{folder} could not be loaded"):
        CloverForBlockDiffusion.from_pretrained(folder)


def test_missing_weights_are_named(tmp_path):
    folder = saved(tmp_path)
    (folder / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match=f"{folder} could not be loaded"):
        CloverForBlockDiffusion.from_pretrained(folder)


def test_an_unknown_preset_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown Clover preset 'huge'.*\['demo', 'tiny'\]"):
        CloverConfig.preset("huge")


def test_a_mask_token_outside_the_vocabulary_is_refused():
    # transformers' strict config validation wraps the ValueError in its own error type
    with pytest.raises(StrictDataclassClassValidationError, match="mask_token_id 99"):
        CloverConfig.preset("tiny", mask_token_id=99)
