"""The tokenizer command: a page tokenizer trained on the corpus and the kit, saved where asked."""

from model_worker.clover.tokenizer import SPECIAL_TOKENS, load_tokenizer
from model_worker.lab.tokenizer import main


def test_the_command_saves_a_loadable_tokenizer_that_encodes_kit_code_and_chinese(tmp_path, capsys):
    main(["--out", str(tmp_path / "tok"), "--vocab-size", "600"])
    assert "saved tokenizer with" in capsys.readouterr().out
    tok = load_tokenizer(tmp_path / "tok")
    assert len(tok) <= 600 and all(t in tok.get_vocab() for t in SPECIAL_TOKENS)
    text = 'import { start } from "kit"; // 潮汐'
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text
