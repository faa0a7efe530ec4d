"""Byte-level BPE tokenizer for generated pages (trained by `model_worker.lab.tokenizer`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

PAD = "<|pad|>"
MASK = "<|mask|>"
EOS = "<|eos|>"
QUESTION = "<|question|>"
PAGE = "<|page|>"
PREVIOUS = "<|previous|>"
NOTE = "<|note|>"
# Order fixes the ids: pad=0, mask=1, eos=2, question=3, page=4, previous=5, note=6.
SPECIAL_TOKENS = (PAD, MASK, EOS, QUESTION, PAGE, PREVIOUS, NOTE)

DEFAULT_VOCAB_SIZE = 4096


def train_tokenizer(texts: Iterable[str], *, vocab_size: int = DEFAULT_VOCAB_SIZE) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE on `texts` and wrap it so `AutoTokenizer` can load it after saving."""
    tok = Tokenizer(models.BPE())
    # No prefix space: page text is glued to the `<|page|>` marker, and decode must give back the bytes.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return wrap(tok)


def wrap(tok: Tokenizer) -> PreTrainedTokenizerFast:
    """Wrap a raw `tokenizers.Tokenizer` with the special-token roles the engine relies on."""
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        mask_token=MASK,
        eos_token=EOS,
        additional_special_tokens=[QUESTION, PAGE, PREVIOUS, NOTE],
        clean_up_tokenization_spaces=False,
    )
    fast.model_max_length = 1 << 20
    return fast


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerFast:
    """Load a saved page tokenizer and check that it carries every special token."""
    from transformers import AutoTokenizer

    import model_worker.clover  # noqa: F401 (registers the `clover` config AutoTokenizer finds in config.json)

    path = Path(path)
    if not (path / "tokenizer.json").is_file():
        raise FileNotFoundError(f"no tokenizer.json in {path}: not a page tokenizer folder")
    tok = AutoTokenizer.from_pretrained(str(path))
    missing = [t for t in SPECIAL_TOKENS if tok.convert_tokens_to_ids(t) in (None, tok.unk_token_id)]
    if missing:
        raise ValueError(f"tokenizer in {path} lacks special tokens {missing}")
    return tok


def special_ids(tok: PreTrainedTokenizerFast) -> dict[str, int]:
    """Map each special token's role to its id."""
    names = ("pad", "mask", "eos", "question", "page", "previous", "note")
    return {name: tok.convert_tokens_to_ids(t) for name, t in zip(names, SPECIAL_TOKENS, strict=True)}
