"""The delta rule on flash-linear-attention's Triton kernels (the `gpu` extra) computes what the
plain-torch reference computes, and a kernel choice the process cannot run is refused with a reason."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from model_worker.clover import kernels
from tests.support.tiny_clover import tiny_model

ROOT = Path(__file__).resolve().parents[2]
# `make test` installs the gpu extra's packages here, apart from the venv (the Makefile says why)
KERNELS_SITE = ROOT / ".venv" / "kernels"
INSTALLED = importlib.util.find_spec("fla") is not None and importlib.util.find_spec("triton") is not None


@pytest.mark.skipif(not (INSTALLED or (KERNELS_SITE / "fla").is_dir()),
                    reason="the gpu extra's packages (flash-linear-attention, triton) are not installed")
def test_fla_prefill_writes_the_reference_state_and_text():
    """Triton's interpreter runs the kernels on the CPU, in a child process (tests/support/fla_interpret.py)."""
    path = os.pathsep.join(p for p in (str(KERNELS_SITE), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, str(ROOT / "tests/support/fla_interpret.py")], capture_output=True,
                          text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rule, prefill = got["delta_rule"], got["prefill"]
    assert rule["scale"] > 0.1
    for what in ("out", "memory", "final"):
        assert rule[what] < 1e-5, (what, rule)
    assert prefill["fla_passes"] == 3  # every GDN layer of the tiny model took the fla path
    assert prefill["logits"] < 1e-4 and prefill["states"] < 1e-5, prefill
    assert prefill["same_tokens"], prefill


def test_the_settings_name_the_engines_kernel_choices():
    from model_worker import config

    assert config.KERNELS == kernels.KERNELS  # config names them without importing torch


def test_auto_keeps_a_cpu_pass_on_plain_torch():
    assert not kernels.wanted("auto", torch.zeros(1))
    assert not kernels.wanted("torch", torch.zeros(1))
    assert kernels.wanted("fla", torch.zeros(1))


def test_a_kernel_choice_the_process_cannot_run_is_refused_with_the_reason(monkeypatch):
    model = tiny_model()
    with pytest.raises(ValueError, match="not one of auto, torch, fla"):
        model.set_kernels("triton")
    monkeypatch.setattr(kernels, "fla_installed", lambda: False)
    with pytest.raises(ValueError, match=r"needs the gpu extra: pip install -e '\.\[gpu\]'.*MODEL_KERNELS=torch"):
        model.set_kernels("fla")
    monkeypatch.setattr(kernels, "fla_installed", lambda: True)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(ValueError, match="need a CUDA device"):
        model.set_kernels("fla")
    model.set_kernels("torch")  # the reference always runs
    assert {m.kernels for m in model.modules() if hasattr(m, "kernels")} == {"torch"}


@pytest.mark.skipif(not (INSTALLED and torch.cuda.is_available()), reason="needs a GPU and the gpu extra")
def test_fla_prefill_on_a_gpu_writes_the_reference_state_and_text():
    """The compiled kernels (scripts/gpu_check.sh): a 300-token prompt prefilled in one piece each way."""
    model = tiny_model(5).cuda()
    ids = torch.randint(4, model.config.vocab_size, (2, 300), generator=torch.Generator().manual_seed(8)).cuda()
    runs = {}
    for choice in ("torch", "fla"):
        model.set_kernels(choice)
        with torch.inference_mode():
            cache = model.new_cache(2, 320)
            logits = model.decode(ids, cache, block_size=1, commit=300, keep=slice(-1, None))
            states = torch.cat([s.recurrent for s in cache.layers if s.recurrent is not None])
            tokens = [logits[:, -1].argmax(-1)]
            for _ in range(8):
                tokens.append(model.decode(tokens[-1][:, None], cache, block_size=1, commit=1)[:, -1].argmax(-1))
        runs[choice] = (logits, states, torch.stack(tokens))
    (lt, st, tt), (lf, sf, tf) = runs["torch"], runs["fla"]
    torch.testing.assert_close(lf, lt, atol=1e-3, rtol=1e-3)  # fp32 inputs; the kernels' dots may run in tf32
    torch.testing.assert_close(sf, st, atol=1e-3, rtol=1e-3)
    assert torch.equal(tf, tt)
