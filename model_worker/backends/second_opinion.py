"""The second opinion's prompt and how its reply is read: does this library lesson answer this question?

One short chat request (a few tokens of reply, temperature 0): the lesson's title and intro, the question, and
the instruction. A reply that begins with yes or no (in English or Chinese) is the verdict; anything else is
"unknown", which leaves the router's choice as it was.
"""

from __future__ import annotations

import re

from model_worker.contract.pages import LessonQuestion

INSTRUCTION = "Does this lesson answer this question? Answer yes or no."
MAX_TOKENS = 3
SYSTEM = "You decide whether a science lesson answers a learner's question. Reply with one word: yes or no."
_FIRST_WORD = re.compile(r"[a-z]+|[\u4e00-\u9fff]", re.IGNORECASE)
_WORDS = {"yes": "yes", "no": "no", "是": "yes", "对": "yes", "能": "yes", "否": "no", "不": "no"}


def judge_messages(ask: LessonQuestion) -> list[dict]:
    """The chat messages of one second opinion."""
    lesson = " ".join(ask.title.split())
    intro = " ".join(ask.intro.split())
    question = " ".join(ask.question.split())
    text = f"Lesson: {lesson}\n" + (f"Intro: {intro}\n" if intro else "") + f"Question: {question}\n\n{INSTRUCTION}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def verdict_from_reply(text: str) -> str:
    """"yes" or "no" from the reply's first word, else "unknown"."""
    match = _FIRST_WORD.search(text or "")
    return _WORDS.get(match.group(0).lower(), "unknown") if match else "unknown"
