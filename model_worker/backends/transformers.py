"""Any local Hugging Face model folder as a page backend, prompted with the kit (`chat_prompt`).

- Block-diffusion models with native transformers generation (`DiffusionGemmaForBlockDiffusion`, any
  model whose config has a `canvas_length`) stream their denoising drafts to `on_draft` and each
  finished canvas to `on_commit`, through the streamer `generate` feeds (`put_draft`, `put`).
- Causal LMs stream tokens through a `TextIteratorStreamer`, with `generate` in a thread; pieces are
  committed in blocks of a few tokens (`streaming.TokenBlocks`).
Cancel: a `StoppingCriteria` that says stop once the sink did (asked once per block).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoTokenizer,
    StoppingCriteria,
    StoppingCriteriaList,
    TextIteratorStreamer,
)

from model_worker.backends.base import BackendError, PageResult, PageSink
from model_worker.backends.chat_prompt import build_messages
from model_worker.backends.reply import page_from_reply, page_problems
from model_worker.backends.streaming import TokenBlocks, reply_stats
from model_worker.config import backend_capabilities, default_threads, resolve_device
from model_worker.contract.pages import BackendCapabilities, PageRequest

MIN_PAGE_TOKENS = 256
DRAFT_MIN_INTERVAL_S = 0.05
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
REPAIR_TEMPERATURE = 0.7


class ModelFolderError(FileNotFoundError):
    """The folder is missing, is no model, or its model or tokenizer cannot be loaded."""


class TransformersBackend:
    """`PageBackend` over a local transformers model folder (weights, config and tokenizer)."""

    capabilities = backend_capabilities("transformers")

    @classmethod
    def from_settings(cls, settings) -> TransformersBackend:
        return cls(settings.model_path, device=settings.device, dtype=settings.dtype,
                   max_new_tokens=settings.max_new_tokens)

    def __init__(self, path: str | Path, device: str = "auto", dtype: str = "auto", max_new_tokens: int | None = None,
                 threads: int | None = None):
        self.path, self.device = Path(path), resolve_device(device)
        if self.device == "cpu":
            torch.set_num_threads(threads or default_threads())
        self.tok, self.model = _load(self.path, self.device, dtype)
        config = self.model.config
        text_config = getattr(config, "text_config", None) or config
        self.context = int(getattr(text_config, "max_position_embeddings", 0) or 0) or 4096
        self.canvas = getattr(config, "canvas_length", None)  # block diffusion: the block size
        self.max_new_tokens = max_new_tokens
        self.capabilities = BackendCapabilities(open_domain=True, revises_pages=True,
                                                streams="drafts" if self.canvas else "tokens", context=self.context)
        self.pieces = None  # lazily: one decoded string per token id, for drafts

    def prompt_ids(self, request: PageRequest) -> list[int]:
        """The chat prompt's ids; the worked example is left out when it would not leave room for a page."""
        for examples in (True, False):
            ids = self._encode(build_messages(request, examples=examples))
            if len(ids) + MIN_PAGE_TOKENS <= self.context:
                return ids
        raise BackendError("prompt_too_long", f"The prompt is {len(ids)} tokens; the model's context is "
                                              f"{self.context} and a page needs at least {MIN_PAGE_TOKENS}.")

    def _encode(self, messages: list[dict]) -> list[int]:
        if getattr(self.tok, "chat_template", None):
            ids = self.tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
            ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
            return list(ids)
        text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"
        return self.tok.encode(text, add_special_tokens=False)

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult:
        prompt = self.prompt_ids(request)
        budget = self.context - len(prompt)
        new_tokens = min(self.max_new_tokens or budget, budget)
        ids = torch.tensor([prompt], device=self.device)
        sampling = _sampling(request)
        if self.canvas:
            text, stats, stopped = self._diffuse(ids, new_tokens, sink, sampling)
        else:
            text, stats, stopped = self._stream(ids, new_tokens, sink, sampling)
        html = "" if stopped else page_from_reply(text)
        if not stopped and not html:
            raise BackendError("bad_reply", f"The model's reply held no html page ({stats['tokens']} tokens).", stats)
        problems = [] if stopped else page_problems(html)
        if problems:
            raise BackendError("bad_reply", f"The model's page is incomplete: {'; '.join(problems)}.", stats)
        return PageResult(html=html, stats=stats, stopped=stopped)

    def _stream(self, ids, new_tokens: int, sink: PageSink, sampling: dict):
        streamer = _CountingStreamer(self.tok)
        stop = threading.Event()
        failure: list[BaseException] = []

        def run():
            try:
                self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                                    streamer=streamer, stopping_criteria=StoppingCriteriaList([_StopWhen(stop.is_set)]),
                                    pad_token_id=self.tok.pad_token_id, **sampling)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                failure.append(exc)
                streamer.end()

        worker = threading.Thread(target=run, name="generate", daemon=True)
        worker.start()
        blocks = TokenBlocks(sink)
        for text, tokens in streamer:
            if not blocks.add(text, tokens):
                stop.set()  # generate stops at its next token; the rest of the queue is drained unsent
        worker.join()
        if failure:
            raise failure[0]
        if not blocks.stopped:
            blocks.flush()
        return "".join(blocks.text), blocks.stats(forwards=blocks.tokens), blocks.stopped

    def _diffuse(self, ids, new_tokens: int, sink: PageSink, sampling: dict):
        if self.pieces is None:
            special = set(self.tok.all_special_ids)
            self.pieces = ["" if i in special else self.tok.decode([i]) for i in range(len(self.tok))]
        streamer = _DraftStreamer(self.tok, sink, self.pieces)
        out = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                                  streamer=streamer, disable_compile=True,
                                  stopping_criteria=StoppingCriteriaList([_StopWhen(streamer.should_stop)]))
        generated = out.sequences[0, ids.shape[1]:].tolist()
        text = self.tok.decode(generated, skip_special_tokens=True)
        per_forward = float(out.tokens_per_forward[0]) if getattr(out, "tokens_per_forward", None) is not None else 0
        forwards = round(streamer.tokens / per_forward) if per_forward else None
        stats = reply_stats(streamer.tokens, forwards, time.monotonic() - streamer.started, streamer.first_block_s)
        return text, stats, streamer.stopped


def _sampling(request: PageRequest) -> dict:
    """Greedy; a repair samples (the same prompt would give the same reply), seeded by its attempt."""
    if request.repair is None:
        return {"do_sample": False}
    torch.manual_seed(request.repair.attempt)
    return {"do_sample": True, "temperature": REPAIR_TEMPERATURE}


def _load(path: Path, device: str, dtype: str):
    if not path.is_dir():
        raise ModelFolderError(f"no model folder at {path}")
    if not (path / "config.json").is_file():
        raise ModelFolderError(f"{path} is no model folder: it has no config.json")
    if dtype != "auto" and dtype not in DTYPES:
        raise ValueError(f"MODEL_DTYPE={dtype!r} is not one of auto, {', '.join(DTYPES)}")
    torch_dtype = DTYPES.get(dtype) or (torch.float32 if device == "cpu" else "auto")
    try:
        config = AutoConfig.from_pretrained(path)
        tok = AutoTokenizer.from_pretrained(path)
    except Exception as exc:
        raise ModelFolderError(f"the model folder {path} could not be read: {exc}") from exc
    model_class = _model_class(config)
    try:
        model = model_class.from_pretrained(path, dtype=torch_dtype)
    except Exception as exc:
        raise ModelFolderError(f"the model in {path} could not be loaded: {exc}") from exc
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    try:
        model = model.to(device)
    except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
        raise ModelFolderError(f"the model in {path} does not fit on {device}: {exc}") from exc
    return tok, model.eval()


def _model_class(config):
    """The architecture the folder names when transformers has it (block diffusion has no Auto class),
    else the causal-LM auto class."""
    import transformers

    for name in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, name, None)
        if cls is not None and hasattr(cls, "from_pretrained"):
            return cls
    return AutoModelForCausalLM


class _StopWhen(StoppingCriteria):
    def __init__(self, flag):
        self.flag = flag

    def __call__(self, input_ids, scores, **kwargs) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), bool(self.flag()), dtype=torch.bool, device=input_ids.device)


class _CountingStreamer(TextIteratorStreamer):
    """A `TextIteratorStreamer` whose items are (text, tokens behind it)."""

    def __init__(self, tok):
        super().__init__(tok, skip_prompt=True, skip_special_tokens=True)
        self._fresh = 0

    def put(self, value):
        if not (self.skip_prompt and self.next_tokens_are_prompt):
            self._fresh += int(value.numel())
        super().put(value)

    def on_finalized_text(self, text: str, stream_end: bool = False):
        tokens, self._fresh = self._fresh, 0
        if text or tokens:
            self.text_queue.put((text, tokens), timeout=self.timeout)
        if stream_end:
            self.text_queue.put(self.stop_signal, timeout=self.timeout)


class _DraftStreamer:
    """What block-diffusion `generate` streams, turned into sink calls: each denoising step's canvas as
    a draft (thinned), each finished canvas as a committed block, holding back a trailing partial
    character until the next canvas completes it. `should_stop` is the per-canvas stopping criterion."""

    def __init__(self, tok, sink: PageSink, pieces: list[str], clock=time.monotonic):
        self.tok, self.sink, self.pieces, self.clock = tok, sink, pieces, clock
        self.started = clock()
        self.prompt_seen = False
        self.tokens = 0
        self.generated: list[int] = []
        self.block = 0
        self.sent = 0
        self.last_draft = float("-inf")
        self.first_block_s: float | None = None
        self.stopped = False
        self.special = set(tok.all_special_ids)

    def put_draft(self, value=None, **_):
        now = self.clock()
        if now - self.last_draft < DRAFT_MIN_INTERVAL_S:
            return
        self.last_draft = now
        self.sink.on_draft(self.block, [self.pieces[t] if t < len(self.pieces) else "" for t in value[0].tolist()])

    def put(self, value):
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        canvas = [t for t in value[0].tolist() if t not in self.special]
        self.tokens += len(canvas)
        self.generated.extend(canvas)
        text = self.tok.decode(self.generated, skip_special_tokens=True)
        ready = len(text.rstrip("\ufffd"))
        self.sink.on_commit(self.block, text[self.sent:ready], len(canvas))
        self.sent = ready
        self.block += 1
        self.last_draft = float("-inf")
        if self.first_block_s is None:
            self.first_block_s = self.clock() - self.started

    def end(self):
        pass

    def should_stop(self) -> bool:
        self.stopped = self.stopped or self.sink.should_stop()
        return self.stopped
