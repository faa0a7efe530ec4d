"""Run flash-linear-attention's Triton kernels on a CPU, through Triton's interpreter, and compare the
engine's fla path with its plain-torch reference. Run as a script (`TRITON_INTERPRET=1` is set before
Triton loads); prints one JSON object of the largest differences.

Two things the interpreter does not do as compiled Triton does are adjusted here, for this process only:
- an autotuned kernel takes its first configuration (the autotuner times configurations on a GPU);
- the induction variable of a plain `for i in range(n)` loop inside a kernel is a Triton scalar, as the
  compiler makes it, not a Python int (fla calls `.to()` on it).
"""

import ast
import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton.runtime.autotuner as autotuner  # noqa: E402
import triton.runtime.interpreter as interpreter  # noqa: E402

_prune = autotuner.Autotuner.prune_configs
autotuner.Autotuner.prune_configs = lambda self, kwargs: _prune(self, kwargs)[:1]


class _ScalarLoops(interpreter.ASTTransformer):
    def visit_For(self, node):
        node = self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            name = node.target.id
            to_tensor = ast.Attribute(value=ast.Name(id="interpreter_semantic", ctx=ast.Load()), attr="to_tensor",
                                      ctx=ast.Load())
            cast = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                              value=ast.Call(func=to_tensor, args=[ast.Name(id=name, ctx=ast.Load()),
                                                                   ast.Constant(value=False)], keywords=[]))
            node.body.insert(0, ast.fix_missing_locations(ast.copy_location(cast, node)))
        return node


interpreter.FunctionRewriter.ast_transformer = _ScalarLoops()

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from model_worker.clover import kernels  # noqa: E402
from model_worker.clover.delta_rule import delta_blocks  # noqa: E402
from tests.support.tiny_clover import tiny_model  # noqa: E402


def biggest(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.float() - b.float()).abs().max().item()


def delta_rule(n=2, t=150, hk=2, h=4, dk=16, dv=8) -> dict:
    """fla's causal pass against `delta_blocks` at block size 1: grouped value heads, a start state,
    a length that is no whole number of 64-token chunks."""
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(n, t, hk, dk, generator=gen), torch.randn(n, t, hk, dk, generator=gen)
    v = torch.randn(n, t, h, dv, generator=gen)
    g, beta = -torch.rand(n, t, h, generator=gen), torch.rand(n, t, h, generator=gen)
    state = 0.3 * torch.randn(n, h, dk, dv, generator=gen)
    ref = delta_blocks(q, k, v, g, beta, block_size=1, initial_state=state, keep_states=False, final=True)
    out, memory, final, *_ = kernels.causal_pass(q, k, v, g, beta, state)
    per_head = lambda x: x.reshape(n, h, t, dv)  # noqa: E731
    return {"out": biggest(out, per_head(ref.out)), "memory": biggest(memory, per_head(ref.memory)),
            "final": biggest(final, ref.final), "scale": ref.out.abs().max().item()}


def prefill(length=150) -> dict:
    """A tiny model's prompt prefilled on each path in one 150-token piece, then eight one-token steps:
    the logits, every GDN state, and the greedy tokens."""
    model = tiny_model(5)
    ids = torch.randint(4, model.config.vocab_size, (1, length), generator=torch.Generator().manual_seed(8))
    runs, passes = {}, []
    fla_pass = kernels.causal_pass
    kernels.causal_pass = lambda *a: passes.append(1) or fla_pass(*a)  # counts the passes fla runs
    for choice in ("torch", "fla"):
        model.set_kernels(choice)
        with torch.inference_mode():
            cache = model.new_cache(1, length + 16)
            logits = model.prefill(ids, cache, block_size=1, chunk=length)
            states = [s.recurrent.clone() for s in cache.layers if s.recurrent is not None]
            tokens = [int(logits.argmax(-1))]
            for _ in range(8):
                step = model.decode(torch.tensor([[tokens[-1]]]), cache, block_size=1, commit=1)
                tokens.append(int(step[0, -1].argmax()))
        runs[choice] = (logits, states, tokens)
    (lt, st, tt), (lf, sf, tf) = runs["torch"], runs["fla"]
    return {"logits": biggest(lf, lt), "states": max(biggest(a, b) for a, b in zip(sf, st, strict=True)),
            "same_tokens": tf == tt, "tokens": tf, "fla_passes": len(passes)}


if __name__ == "__main__":
    print(json.dumps({"delta_rule": delta_rule(), "prefill": prefill()}))
