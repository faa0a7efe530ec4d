"""A Chinese session in Chromium, through every screen a learner reads (ask, stream, follow-up, a problem, the
library, the join page): not one English sentence on screen."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("celery_workers")]

TIMEOUT_MS = 60_000
# An English sentence: three or more English words in a row.
SENTENCE = re.compile(r"[A-Za-z]+(?:[ \t]+[A-Za-z]+){2,}")
# What is not a sentence though it has English words: the product's name.
NOT_SENTENCES = ("Explainer",)


def english_on_screen(page) -> list[str]:
    """The English sentences in what the page shows (`innerText`: its visible text, not the page's frame)."""
    text = page.evaluate("document.body.innerText")
    for name in NOT_SENTENCES:
        text = text.replace(name, " ")
    return SENTENCE.findall(text)


def test_a_chinese_session_shows_no_english_sentence_anywhere(browser, live_server_url):
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(live_server_url + "/")
    assert english_on_screen(page)  # an English browser reads English sentences
    page.select_option("#interface-language", "zh-hans")  # the header's switch, over the English browser
    expect(page.locator("#ask-button")).to_have_text("讲解")
    screens = {"home": english_on_screen(page)}

    # A library question, written and shown: the live view's topic, then the page's line.
    page.fill("#question", "彩虹是怎么形成的？")
    page.press("#question", "Enter")
    expect(page.locator("#live-topic")).to_contain_text("正在讲解", timeout=TIMEOUT_MS)
    expect(page.locator("#qa")).to_contain_text("第 1 版", timeout=TIMEOUT_MS)
    screens["page"] = english_on_screen(page)

    # A follow-up: a new version, or the page saying in Chinese why it cannot show that.
    page.fill("#follow-question", "能显示日落时的样子吗？")
    page.press("#follow-question", "Enter")
    expect(page.locator("#versions li:nth-child(2), #problem:not([hidden])").first).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(page.locator("#live")).to_be_hidden(timeout=TIMEOUT_MS)
    screens["follow-up"] = english_on_screen(page)

    # A page the model fails to write: the engine's English reason is said in Chinese.
    page.click(".new-question")
    page.fill("#question", "[[fail]] 单摆的周期和什么有关？")
    page.press("#question", "Enter")
    expect(page.locator("#problem-text")).to_have_text("这一页没能写出来。", timeout=TIMEOUT_MS)
    screens["problem"] = english_on_screen(page)

    page.goto(live_server_url + "/library/", timeout=300_000)  # the first /library/ builds the shelf's index
    expect(page.locator("h1")).to_have_text("资料库")
    screens["library"] = english_on_screen(page)

    page.goto(live_server_url + "/join/")
    page.fill("#join [name=join_code]", "NOSUCH")
    page.fill("#join [name=display_name]", "小明")
    page.click("#join button")
    expect(page.locator("#join")).to_contain_text("没有这个班级代码")
    screens["join"] = english_on_screen(page)

    assert screens == {name: [] for name in screens}
    context.close()
