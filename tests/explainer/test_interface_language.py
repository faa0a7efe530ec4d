"""The interface's language (Django's i18n): the browser's Accept-Language by default, the header's switch
remembered over it, on the learner page, the library and the join page; the words about a question in that
question's language, whatever the interface's."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.urls import reverse

from explainer.services import learner_messages

pytestmark = pytest.mark.django_db

CHINESE = "zh-CN,zh;q=0.9,en;q=0.5"
# What a learner reads on each page, in each language.
WORDS = {
    "home": {"en": ["Join a class", "Library", "Teachers", "Explain it", "Your question", "Ask a follow-up"],
             "zh": ["加入班级", "资料库", "教师", "讲解", "你的问题", "追问"]},
    "library": {"en": ["The library", "Search the library", "All grades", "Biology"],
                "zh": ["资料库", "搜索资料库", "所有年级", "生物"]},
    "join": {"en": ["Join your class", "Join code", "Your name in the class"],
             "zh": ["加入你的班级", "班级代码", "你在班里的名字"]},
}


def page(client, name: str, **headers) -> str:
    response = client.get(reverse(name), **headers)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("name", WORDS)
def test_a_chinese_browser_gets_chinese_words_and_an_english_one_english(client, name):
    chinese = page(client, name, HTTP_ACCEPT_LANGUAGE=CHINESE)
    assert all(word in chinese for word in WORDS[name]["zh"])
    assert '<html lang="zh">' in chinese
    assert "Join a class" not in chinese and "Join your class" not in chinese
    english = page(client, name, HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.9")
    assert all(word in english for word in WORDS[name]["en"])
    assert '<html lang="en">' in english and "加入" not in english


def test_the_switch_in_the_header_is_remembered_over_the_browser_s_language(client):
    home = page(client, "home", HTTP_ACCEPT_LANGUAGE="en")
    assert f'action="{reverse("set_language")}"' in home and 'name="language"' in home
    switched = client.post(reverse("set_language"), {"language": "zh-hans", "next": reverse("library")},
                           HTTP_ACCEPT_LANGUAGE="en")
    assert switched.status_code == 302 and switched["Location"] == reverse("library")
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    for name in WORDS:
        assert all(word in page(client, name, HTTP_ACCEPT_LANGUAGE="en") for word in WORDS[name]["zh"])
    client.post(reverse("set_language"), {"language": "en"}, HTTP_ACCEPT_LANGUAGE=CHINESE)
    assert all(word in page(client, "home", HTTP_ACCEPT_LANGUAGE=CHINESE) for word in WORDS["home"]["en"])


def test_the_learner_page_loads_the_interface_s_catalog_before_its_scripts(client):
    home = page(client, "home", HTTP_ACCEPT_LANGUAGE=CHINESE)
    assert home.index(reverse("javascript-catalog")) < home.index("app/explain.js")
    script = client.get(reverse("javascript-catalog"), HTTP_ACCEPT_LANGUAGE=CHINESE).content.decode()
    assert json.dumps("正在讲解：%(title)s")[1:-1] in script  # "Explaining: %(title)s", escaped


def test_a_question_s_catalog_is_in_its_language_whatever_the_interface_s(client):
    zh = json.loads(client.get(reverse("page-catalog", args=["zh"]), HTTP_ACCEPT_LANGUAGE="en").content)
    assert zh["catalog"]["Explaining: %(title)s"] == "正在讲解：%(title)s"
    en = json.loads(client.get(reverse("page-catalog", args=["en"]), HTTP_ACCEPT_LANGUAGE=CHINESE).content)
    assert en["catalog"] == {}  # the msgids are English


def test_a_refusal_is_said_in_the_question_s_language():
    zh = learner_messages.refused_topic(lang="zh", unsure=False, in_class=True)
    assert zh == "资料库里还没有关于这个主题的页面，所以暂时没有可靠的讲解。你的问题已经作为“想学的主题”转告给你的老师。"
    en = learner_messages.refused_topic(lang="en", unsure=True, in_class=False)
    assert en.startswith("I am not sure the library has a page on that") and en.endswith("add to the library.")
    assert learner_messages.in_lang(learner_messages.PAGE_HIDDEN, "zh").startswith("老师隐藏了这个页面")


def test_a_rate_limit_is_said_in_the_interface_s_language_and_a_refused_question_in_its_own():
    from django.utils import translation

    from explainer.services.rate_limits import RateLimited

    with translation.override("zh-hans"):  # /library/ in a Chinese interface
        refused = RateLimited("limit", "You have asked all the questions you can today. Come back tomorrow!")
    assert refused.message == "今天能问的问题已经问完了，明天再来吧！"
    assert learner_messages.in_lang(refused.msgid, "en") == refused.msgid  # an English question on the socket


def test_an_engine_error_is_said_in_the_question_s_language_and_keeps_its_own_words_in_english():
    failed = "The model raised: asked to fail"
    assert learner_messages.stream_error("generation_failed", failed, "zh") == "这一页没能写出来。"
    assert learner_messages.stream_error("generation_failed", failed, "en") == failed
    assert learner_messages.stream_error("blocked", "Not in this class.", "zh") == "Not in this class."  # a class's own
