"""Which way a follow-up asks a page's control to go: `up` (more, higher, faster, bigger), `down` (less,
lower, slower, smaller), `start` or `stop`, in English or Chinese, and the follow-up without those words.

A Chinese direction character (多少高低快慢大小) counts only in a phrase that asks for a change (调高, 更多,
快一点, 多一些...): alone it is as often part of a question (有多大, 多少) or of a name (大气).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

UP, DOWN, START, STOP = "up", "down", "start", "stop"

_EN = {
    UP: r"more|higher|faster|bigger|larger|greater|increase|raise|speed\s+up",
    DOWN: r"less|fewer|lower|slower|smaller|decrease|reduce|slow\s+down",
    START: r"start|play|begin|resume|(?:turn|switch)\s+(?:it\s+)?on",
    STOP: r"stop|pause|halt|freeze|(?:turn|switch)\s+(?:it\s+)?off",
}
_ZH_CHARS = {UP: "多高快大", DOWN: "少低慢小"}
_ZH_WORDS = {
    UP: "增加|增大|增多|加大|加快|提高|升高|放大|调高|调快|调大",
    DOWN: "减少|减小|减慢|降低|放慢|缩小|调低|调慢|调小",
    START: "开始|播放|启动|开启|打开|继续",
    STOP: "停止|暂停|停下|停住|关闭|关掉|定格",
}
# 更多, 变快, 再高, 调大 ...; 多一点, 快一些, 高些 ...
_ZH_BEFORE = "更变再调加提升降减放"
_ZH_AFTER = "一点|一些|点儿|点|些"


def _patterns() -> list[tuple[str, re.Pattern]]:
    found = []
    for way in (UP, DOWN, START, STOP):
        zh = [_ZH_WORDS[way]]
        if way in _ZH_CHARS:
            chars = _ZH_CHARS[way]
            zh += [f"[{_ZH_BEFORE}][{chars}]", f"[{chars}](?:{_ZH_AFTER})"]
        found.append((way, re.compile(rf"\b(?:{_EN[way]})\b|{'|'.join(zh)}", re.I)))
    return found


_PATTERNS = _patterns()


class Direction(NamedTuple):
    way: str | None  # UP, DOWN, START, STOP, or None when the follow-up asks for no change
    rest: str  # the follow-up without its direction words: what it names


def direction_of(text: str) -> Direction:
    """The first direction the text asks for (by position), and the text with every direction word taken out."""
    text = unicodedata.normalize("NFKC", text)
    first, rest = None, text
    for way, pattern in _PATTERNS:
        match = pattern.search(text)
        if match and (first is None or match.start() < first[1]):
            first = (way, match.start())
        rest = pattern.sub(" ", rest)
    return Direction(first[0] if first else None, re.sub(r"\s+", " ", rest).strip())
