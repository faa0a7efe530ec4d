"""Search terms of a text: English words stemmed (Snowball); Chinese words by jieba, single characters
and character pairs; and, with the glossary, the concepts those words name.

Single characters let 黑 in a question meet 黑夜 in a record when jieba cut the two texts differently;
character pairs keep 轮船 whole when jieba did not.

Both languages share one index: an English term never equals a Chinese one, so a question matches
the parts of a record written in its own language (a Chinese page's English questions and tags, an
English page's Chinese questions), and, through the glossary's concepts, the other language's words.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN_PLUS

from explainer.library.glossary import glossary
from explainer.library.stems import stem_words

# Words that frame a question rather than name its subject.
EN_STOP = frozenset(STOPWORDS_EN_PLUS) | frozenset(
    """also always around away called can could does explain get gets go goes happen happens happened kind like
    make makes made many may might much need often please really say tell thing things us use used way ways
    whats work works would""".split()
)
ZH_STOP = frozenset(
    """的 了 吗 呢 吧 啊 呀 是 么 什么 为什么 为何 怎么 怎样 怎么样 如何 哪 哪些 哪里 哪儿 有 和 与 及 就 都 也 还 要
    把 被 让 给 这 那 这个 那个 这些 那些 个 一 一个 一些 会 能 可以 在 到 从 对 中 里 里面 上 下 吗 我 我们 你 你们
    他 她 它 他们 它们 请 讲 讲讲 说 说说 一下 解释 知道 告诉 为 因为 所以 时候 的话 多少 几 样 地 得 着 过 之 其 又
    却 吧 呗 嘛 啥 咋 请问 问""".split()
)
# Characters that only frame a Chinese question, dropped as single-character terms and from pairs.
ZH_STOP_CHARS = frozenset("的了吗呢吧啊呀是么什为怎样如何哪有和与及就都也还要把被让给这那个一些会能可以在到从对中里上下我你他她它们"
                          "请讲说解释知道告诉因所时话多少几地得着过之其又却呗嘛啥咋问")
_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


@functools.cache
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)  # it announces its dictionary on stderr otherwise
    jieba.initialize()
    return jieba


@dataclass(frozen=True)
class Analyzer:
    """How text becomes terms; one analyzer serves both the index and its questions."""

    pairs: bool = True  # Chinese character pairs besides jieba words and single characters
    glossary: bool = True  # concept terms from the bilingual glossary

    def terms(self, text: str) -> list[str]:
        """The text's search terms, in order, repeats kept (BM25 counts them)."""
        text = unicodedata.normalize("NFKC", text).lower()
        words = [w.split("'")[0] for w in _EN_WORD.findall(text)]
        out = stem_words([w for w in words if w not in EN_STOP and len(w) > 1])
        runs = _CJK_RUN.findall(text)
        for run in runs:
            # Search mode also yields the shorter words inside a long one (二氧化碳 → 二氧化碳, 氧化, 碳...).
            out += [w for w in _jieba().lcut_for_search(run) if w not in ZH_STOP]
            out += [c for c in run if c not in ZH_STOP_CHARS]
            if self.pairs:
                out += [f"{a}{b}" for a, b in zip(run, run[1:], strict=False)
                        if a not in ZH_STOP_CHARS and b not in ZH_STOP_CHARS]
        if self.glossary:
            out += glossary().concepts(list(out), runs)
        return out


# The analyzer of tests/data/router_questions.json's figures (docs/benchmarks.md, Router).
DEFAULT_ANALYZER = Analyzer()


def terms(text: str) -> list[str]:
    """The text's search terms by the default analyzer."""
    return DEFAULT_ANALYZER.terms(text)
