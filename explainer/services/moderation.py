"""Moderation of learners' questions before generation and of pages after it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.html import strip_tags

from explainer.library.class_topics import topic_key
from explainer.library.text import comparable, question_key
from explainer.models import Classroom, Generation, Learner, ModerationItem, PageVersion, Topic
from explainer.selectors.topic_space import class_topic_choice, picked_class_topic

# A question with one of these never reaches the model; a page with one is hidden at once.
BUILTIN_BLOCK = (
    "make a bomb", "build a bomb", "how to make a gun", "kill myself", "killing myself", "suicide", "self harm",
    "self-harm", "porn", "pornography", "nude", "sexy", "cocaine", "heroin", "meth",
    "fuck", "shit", "bitch", "cunt", "nigger", "faggot", "retard",
    "自杀", "自残", "色情", "裸体", "做炸弹", "制造炸弹", "冰毒", "海洛因", "可卡因", "操你", "他妈的",
)
# Words that are often innocent in science ("how does a gun recoil?") but worth a teacher's look.
BUILTIN_FLAG = (
    "kill", "killing", "gun", "guns", "weapon", "weapons", "bomb", "explosive", "explosives", "poison",
    "drug", "drugs", "war", "alcohol", "beer", "cigarette", "sex",
    "杀人", "枪", "武器", "炸弹", "爆炸", "毒药", "毒品", "战争", "喝酒", "香烟",
)

OFF_TOPIC_MATCH = "outside the class topics"
UNSURE_TOPIC_MATCH = "near the class topics, unsure"
DEFAULT_BLOCKED_MESSAGE = "Let's keep our questions about science. Try another one!"


@dataclass(frozen=True)
class TermHit:
    term: str
    source: str  # "builtin" | "class"
    block: bool


@dataclass(frozen=True)
class TopicOffer:
    """A class topic an unsure refusal offers: asked again with `slug` as its topic, the question is on it."""

    slug: str  # the class topic's key (`explainer.library.class_topics.topic_key`)
    title: str


@dataclass(frozen=True)
class QuestionVerdict:
    """What generation creation needs: may the question go to the model, and if not, what to tell the learner.

    `topic_id`, `topic_note` and `topic_exemplar` are set only for a question on that class topic (chosen by
    the router, or picked by the learner). An `off_topic` refusal in the router's unsure band is `unsure`, and
    `nearest` holds the class topics to pick from, nearest first.
    """

    allowed: bool
    code: str  # "ok" | "blocked" | "off_topic" | "language"
    message: str = ""
    topic_id: int | None = None
    topic_note: str | None = None
    topic_exemplar: str | None = None  # slug of the corpus page the teacher pinned to the topic
    flagged: bool = False
    nearest: tuple[TopicOffer, ...] = ()
    unsure: bool = False


def _term_pattern(term: str) -> re.Pattern:
    term = comparable(term)
    if term.isascii():
        return re.compile(r"(?<![a-z0-9])" + re.escape(term) + r"(?![a-z0-9])")
    return re.compile(re.escape(term))  # Chinese has no spaces between words


def _class_terms(classroom: Classroom | None) -> list[str]:
    if classroom is None:
        return []
    return [line.strip() for line in classroom.blocklist.splitlines() if line.strip()]


def find_terms(text: str, *, classroom: Classroom | None) -> list[TermHit]:
    """Every listed term in the text: the class blocklist and the built-in block list block, the flag list flags."""
    text = comparable(text)
    hits = []
    for terms, source, block in (
        (_class_terms(classroom), "class", True),
        (BUILTIN_BLOCK, "builtin", True),
        (BUILTIN_FLAG, "builtin", False),
    ):
        hits += [TermHit(t, source, block) for t in terms if _term_pattern(t).search(text)]
    return hits


def question_check(
    *,
    classroom: Classroom | None,
    learner: Learner | None,
    question: str,
    lang: str = "en",
    kind: str = Generation.Kind.ASK,
    picked_topic: str | None = None,
) -> QuestionVerdict:
    """Decide whether a learner's question (or follow-up) may be generated; records what it stops or flags.

    `picked_topic`: the key of a class topic the learner picked from an unsure refusal (`TopicOffer.slug`).
    """
    if classroom is not None and classroom.languages and lang not in classroom.languages:
        return QuestionVerdict(False, "language", _languages_message(classroom.languages, lang))
    # The class's daily limit is counted before this, atomically, by services.rate_limits.
    hits = find_terms(question, classroom=classroom)
    blocking = [h for h in hits if h.block]
    if blocking:
        ModerationItem.objects.create(
            classroom=classroom, learner=learner, kind=ModerationItem.Kind.QUESTION,
            status=ModerationItem.Status.BLOCKED, text=question, matched=blocking[0].term[:120],
            source=blocking[0].source,
        )
        message = (classroom.blocked_message if classroom else "") or DEFAULT_BLOCKED_MESSAGE
        return QuestionVerdict(False, "blocked", message)
    topic = None
    # Follow-ups are never refused for topic: they revise a page already on the thread's topic.
    if classroom is not None and kind == Generation.Kind.ASK and classroom.topics.exists():
        topic = picked_class_topic(classroom=classroom, key=picked_topic)
        if topic is None:
            choice = class_topic_choice(classroom=classroom, question=question)
            topic = choice.topic
            if topic is None and classroom.topic_space_enabled:
                return _off_topic(classroom=classroom, learner=learner, question=question, lang=lang,
                                  nearest=choice.nearest if choice.unsure else ())
    flagged = bool(hits)
    if flagged:
        ModerationItem.objects.create(
            classroom=classroom, learner=learner, kind=ModerationItem.Kind.QUESTION,
            status=ModerationItem.Status.PENDING, text=question, matched=hits[0].term[:120], source=hits[0].source,
        )
    if topic is None:
        return QuestionVerdict(True, "ok", "", flagged=flagged)
    return QuestionVerdict(True, "ok", "", topic.pk, topic.note_to_model or None, flagged=flagged,
                           topic_exemplar=topic.exemplar or None)


def _off_topic(*, classroom: Classroom, learner: Learner | None, question: str, lang: str,
               nearest: tuple[Topic, ...]) -> QuestionVerdict:
    """Refuse a question on none of the class's topics, listed for the teacher; in the unsure band
    (`nearest` given) the refusal offers those topics to pick from."""
    # Teachers see what their class wanted to know beyond the topics (the queue's lower table).
    ModerationItem.objects.create(
        classroom=classroom, learner=learner, kind=ModerationItem.Kind.QUESTION,
        status=ModerationItem.Status.BLOCKED, text=question, source="topics",
        matched=UNSURE_TOPIC_MATCH if nearest else OFF_TOPIC_MATCH,
    )
    if nearest:
        return QuestionVerdict(False, "off_topic", _unsure_topic_message(lang), unsure=True,
                               nearest=tuple(TopicOffer(topic_key(t.pk), t.title) for t in nearest))
    return QuestionVerdict(False, "off_topic", _off_topic_message([t.title for t in classroom.topics.all()], lang))


def page_screen(*, page: PageVersion) -> ModerationItem | None:
    """Screen a finished page's visible text: a blocking term hides it at once, a flag term queues it.

    A page already waiting in the queue or approved for the same term is not queued again: a copy of it
    (the same HTML in the same class: a featured page, a library page or an exemplar answering another
    learner) returns that item. An approved one also keeps a blocking term's copy visible.
    """
    generation = page.generation
    visible = strip_tags(re.sub(r"<(script|style)\b.*?</\1>", " ", page.html, flags=re.S | re.I))
    hits = find_terms(generation.question + "\n" + visible, classroom=generation.classroom)
    if not hits:
        return None
    hit = next((h for h in hits if h.block), hits[0])
    matched = hit.term[:120]
    # A term only the question has makes the same page a new item for a different question.
    question = None if hit in find_terms(visible, classroom=generation.classroom) else generation.question
    with transaction.atomic():
        if generation.classroom_id is not None:
            # One screen at a time per class, so two learners served the same page at once queue it once.
            Classroom.objects.select_for_update().filter(pk=generation.classroom_id).first()
        earlier = _item_for_same_page(page=page, classroom_id=generation.classroom_id, matched=matched,
                                      question=question)
        if earlier is not None and earlier.status == ModerationItem.Status.APPROVED:
            return earlier  # the teacher already kept this page with this term
        if hit.block and not page.hidden:
            page.hidden = True
            page.save(update_fields=["hidden"])
        if earlier is not None:
            return earlier
        return ModerationItem.objects.create(
            classroom=generation.classroom, learner=generation.learner, kind=ModerationItem.Kind.PAGE,
            status=ModerationItem.Status.PENDING, text=generation.question, page=page,
            matched=matched, source=hit.source,
        )


def _item_for_same_page(
    *, page: PageVersion, classroom_id: int | None, matched: str, question: str | None
) -> ModerationItem | None:
    """The approved (else waiting) page item for this term on this page or a copy of it in the class;
    with `question`, only one asked as the same question."""
    items = ModerationItem.objects.filter(
        kind=ModerationItem.Kind.PAGE, matched=matched, classroom_id=classroom_id, page__html=page.html,
        status__in=[ModerationItem.Status.PENDING, ModerationItem.Status.APPROVED],
    ).order_by("status", "-created_at")  # "approved" sorts first: the teacher's decision stands
    wanted = question_key(question) if question is not None else None
    return next((i for i in items if wanted is None or question_key(i.text) == wanted), None)


LANGUAGE_NAMES = {"en": ("English", "英文"), "zh": ("Chinese", "中文")}


def _languages_message(languages: list[str], lang: str) -> str:
    """Which languages the class asks in, said in the language of the refused question."""
    if lang == "zh":
        return "这个班级用" + "和".join(LANGUAGE_NAMES.get(code, (code, code))[1] for code in languages) + "提问。"
    return "This class asks questions in " + " and ".join(LANGUAGE_NAMES.get(code, (code, code))[0] for code in languages) + "."


def _off_topic_message(titles: list[str], lang: str) -> str:
    if lang == "zh":
        return f"这个问题很好，不过这个班级正在探索：{'、'.join(titles)}。试着问一个和它们有关的问题吧！"
    return f"That's a great question, but in this class we are exploring: {', '.join(titles)}. Try one about these!"


def _unsure_topic_message(lang: str) -> str:
    """An unsure refusal asks rather than says no: the learner can tell whether the question is on a topic."""
    if lang == "zh":
        return "我不确定这个问题属于这个班级的哪个主题。如果它是关于下面某个主题的，点一下就行。"
    return "I am not sure which of this class's topics that question is about. If it is about one below, pick it."


class NothingToHide(ValueError):
    """Hiding was asked of an item without a page (a question)."""


def moderation_item_decide(*, item: ModerationItem, approve: bool, by) -> ModerationItem:
    """Approve (a held page shows again) or hide (the page disappears for learners) a queued item."""
    from explainer.services.review import page_set_hidden

    if not approve and item.page is None:
        raise NothingToHide("A question has no page of its own: hide the page item it led to.")
    item.status = ModerationItem.Status.APPROVED if approve else ModerationItem.Status.HIDDEN
    item.decided_at = timezone.now()
    item.decided_by = by
    item.save(update_fields=["status", "decided_at", "decided_by"])
    if item.page is not None:
        page_set_hidden(page=item.page, hidden=not approve)
    return item
