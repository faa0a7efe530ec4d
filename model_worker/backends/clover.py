"""The real page backend: a Clover checkpoint decoded by block diffusion, streamed block by block."""

from __future__ import annotations

import codecs
import copy
import logging
import time
from dataclasses import replace
from pathlib import Path

import torch

from model_worker.backends.base import BackendError, PageResult, PageSink
from model_worker.clover.prompt import PromptTooLong, build_prompt, check_fits, extract_page
from model_worker.clover.tokenizer import load_tokenizer
from model_worker.config import (
    DEFAULT_MODEL_PATH,
    backend_capabilities,
    default_threads,
    learned_notes,
    resolve_device,
)
from model_worker.contract.pages import PageRequest

log = logging.getLogger(__name__)

MIN_PAGE_TOKENS = 256
REPAIR_TEMPERATURE = 0.8  # a repair re-samples: the same prompt greedily gives the same failing page
DRAFT_MIN_INTERVAL_S = 0.05  # at most ~20 drafts a second: a screen needs no more (the one throttle)


class CheckpointFolderError(FileNotFoundError):
    """The checkpoint folder is missing, incomplete or unreadable."""


def load_checkpoint(path: str | Path, device: str = "auto", dtype: torch.dtype = torch.float32):
    """Tokenizer and model from a checkpoint folder, the model in eval mode on `device`."""
    from model_worker.clover import CheckpointError, CloverForBlockDiffusion

    path = Path(path)
    if not path.is_dir():
        raise CheckpointFolderError(f"no checkpoint folder at {path}")
    missing = [name for name in ("config.json", "tokenizer.json", "model.safetensors") if not (path / name).is_file()]
    if missing:
        raise CheckpointFolderError(f"checkpoint folder {path} lacks {', '.join(missing)}")
    try:
        tok = load_tokenizer(path)
    except Exception as exc:
        raise CheckpointFolderError(f"tokenizer in {path} could not be loaded: {exc}") from exc
    try:
        model = CloverForBlockDiffusion.from_pretrained(path, dtype=dtype)
    except CheckpointError as exc:
        raise CheckpointFolderError(str(exc)) from exc
    if model.config.vocab_size < len(tok):
        raise CheckpointFolderError(
            f"checkpoint folder {path}: tokenizer has {len(tok)} tokens, the model only {model.config.vocab_size}"
        )
    return tok, model.to(resolve_device(device)).eval()


class CloverBackend:
    """`PageBackend` over a Clover checkpoint; loads it once and serves pages one at a time, or, with
    `batch` > 1 and verified decoding, from many threads at once in shared batches (`batching.py`).

    It writes the library pages it was trained on and cannot revise a page (`capabilities`); a repair
    request is answered by a re-sample of the same prompt at `REPAIR_TEMPERATURE`, seeded by its attempt.
    """

    capabilities = backend_capabilities("clover")  # library-only: it writes the page of `PageRequest.topic`

    def __init__(self, path: str | Path = DEFAULT_MODEL_PATH, device: str = "auto", decoding: str = "verified",
                 max_new_tokens: int | None = None, threads: int | None = None, batch: int = 1,
                 graphs: bool = False, kernels: str = "auto", **sampler_overrides):
        if resolve_device(device) == "cpu":
            torch.set_num_threads(threads or default_threads())
        self.path = Path(path)
        self.tok, self.model = load_checkpoint(path, device)
        self.context = self.model.config.max_position_embeddings
        self.reads_notes = learned_notes(self.path)  # else a teacher's note is left out of the prompt
        self.model.set_kernels(kernels)  # a choice this process cannot run stops start-up, saying why
        if graphs:  # verified decoding's forwards as CUDA graphs (SamplerConfig says which decodings)
            sampler_overrides["graphs"] = True
        self.sampler = self._sampler(decoding, max_new_tokens, sampler_overrides)
        self.pieces, self.token_bytes = token_tables(self.tok)
        self.decoder = None
        if batch > 1:
            from model_worker.backends.batching import BatchedDecoder

            if self.sampler.decoding != "verified":
                raise ValueError(f"MODEL_BATCH={batch} batches verified decoding, not {self.sampler.decoding!r}")
            self.decoder = BatchedDecoder(self.model, batch)
        from model_worker.clover.kernels import wanted

        weight = next(self.model.parameters())
        log.info("clover backend ready: %s on %s, %s decoding%s, prompt delta rule on %s, %d torch threads",
                 self.path, weight.device, self.sampler.decoding, " (CUDA graphs)" if self.sampler.graphs else "",
                 "fla" if wanted(kernels, weight) else "torch", torch.get_num_threads())

    def _sampler(self, decoding: str, max_new_tokens: int | None, overrides: dict):
        """The named settings of `decoding` (model_worker.sampler.decodings) with `overrides`, checked
        against the block sizes this checkpoint was trained for."""
        from model_worker.sampler import check_trained, preset

        cfg = preset(decoding, **{"max_new_tokens": max_new_tokens or self.context, **overrides})
        try:
            check_trained(cfg, self.model.config.trained_block_sizes)
        except ValueError as exc:
            raise ValueError(f"{exc} (checkpoint in {self.path})") from None
        return cfg

    def with_decoding(self, decoding: str, **overrides) -> CloverBackend:
        """Another backend over the same loaded weights, decoding with `decoding`'s settings and `overrides`."""
        other = copy.copy(self)
        other.sampler = self._sampler(decoding, self.sampler.max_new_tokens, overrides)
        return other

    def prompt_ids(self, request: PageRequest) -> list[int]:
        ids = build_prompt(self.tok, question=request.question, lang=request.lang,
                           previous_page=request.previous_page,
                           topic_note=request.topic_note if self.reads_notes else None, topic=request.topic)
        try:
            check_fits(len(ids), context=self.context, min_page_tokens=min(MIN_PAGE_TOKENS, self.context // 4))
        except PromptTooLong as exc:  # the learner hears it by its code, like any backend's
            raise BackendError("prompt_too_long", str(exc)) from None
        return ids

    def generate_page(self, request: PageRequest, sink: PageSink) -> PageResult:
        from model_worker.sampler import generate

        prompt = self.prompt_ids(request)
        stream = _TextStream(sink, self.pieces, self.token_bytes)
        cfg = replace(self.sampler, max_new_tokens=min(self.sampler.max_new_tokens, self.context - len(prompt)))
        if request.repair is not None:
            cfg = replace(cfg, temperature=REPAIR_TEMPERATURE, seed=self.sampler.seed + request.repair.attempt)
        if self.decoder is not None and cfg.decoding == "verified":
            out, shared = self.decoder.generate(prompt, cfg, on_step=stream.step, on_block=stream.block,
                                                should_stop=sink.should_stop)
            stats = {**_figures(out.stats), "batch": shared}
        else:
            [out] = generate(self.model, [prompt], cfg, on_step=stream.step, on_block=stream.block,
                             should_stop=sink.should_stop)
            stats = _figures(out.stats)
        return PageResult(html=self.page_html(out.tokens), stats=stats, stopped=out.stopped_by == "stop")

    def page_html(self, tokens: list[int]) -> str:
        """The page in generated tokens, as it is stored."""
        # A character still incomplete when decoding ends is not text: the stream never sent it either.
        return extract_page(self.tok.decode(tokens, skip_special_tokens=True).rstrip("\ufffd"))


def token_tables(tok) -> tuple[list[str], list[bytes]]:
    """Per token id: its text alone (what a draft shows) and its bytes (what committed text is made of).

    Special tokens are empty in both, as `decode(..., skip_special_tokens=True)` leaves them out. The
    bytes come from the byte-level alphabet the vocabulary is written in (GPT-2's), so a block's
    text is the UTF-8 of its tokens' bytes, with no call into the tokenizer.
    """
    special = set(tok.all_special_ids)
    alphabet = _byte_alphabet()
    pieces, raw = [], []
    for i, token in enumerate(tok.convert_ids_to_tokens(list(range(len(tok))))):
        if i in special:
            pieces.append("")
            raw.append(b"")
            continue
        pieces.append(tok.decode([i]))
        try:
            raw.append(bytes(alphabet[ch] for ch in token))
        except KeyError:  # an added token stored as plain text
            raw.append(pieces[-1].encode("utf-8"))
    return pieces, raw


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-in for every byte, reversed (what the ByteLevel decoder undoes)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


class _TextStream:
    """Turns sampler callbacks into sink calls: throttled drafts, and exact text per committed block.

    Byte-level tokens can split one character across blocks, so committed tokens go through an
    incremental UTF-8 decoder that holds back a trailing partial character until the next block
    completes it (one still incomplete when decoding ends is not text and is never sent). Each block
    costs its own tokens, not the whole page so far.
    """

    def __init__(self, sink: PageSink, pieces: list[str], token_bytes: list[bytes], clock=time.monotonic):
        self.sink, self.pieces, self.token_bytes, self.clock = sink, pieces, token_bytes, clock
        self.utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self.last_draft = float("-inf")

    def step(self, seq: int, block: int, tokens: list[int], masked: list[bool]) -> None:
        now = self.clock()
        if now - self.last_draft < DRAFT_MIN_INTERVAL_S:
            return
        self.last_draft = now
        self.sink.on_draft(block, [None if m else self.pieces[t] for t, m in zip(tokens, masked, strict=True)])

    def block(self, seq: int, block: int, tokens: list[int]) -> None:
        text = self.utf8.decode(b"".join(self.token_bytes[t] for t in tokens))
        self.sink.on_commit(block, text, len(tokens))
        self.last_draft = float("-inf")


def _figures(stats) -> dict:
    d = stats.as_dict()
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}
