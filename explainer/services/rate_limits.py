"""Question limits that hold under concurrency: one Redis counter per window, INCR'd atomically.

Anonymous learners: per browser first, then per IP address (set high enough for a class behind one school
address), per hour. Learners in a class: never by the address, only by the class's
daily limit (or `LEARNER_DAILY_QUESTIONS` when the class sets none), counted per browser (`client_id`,
kept in the session across leaving and re-joining), not per membership row, so a new name does not
start a new count. Each question is counted before anything else is done with it; one that gets no answer
(the library has no page, the class's topics or languages refuse it) gives its question of the class's
allowance back (`question_refund`).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

import redis
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from explainer.models import Learner
from explainer.services.streams import redis_client

log = logging.getLogger(__name__)

KEY_PREFIX = "explainer:rate"
HOUR_S = 3600
DAY_S = 24 * 3600


@dataclass(frozen=True)
class Client:
    """Who is asking: the browser session, its lasting id (survives leave/join), and the address."""

    session_key: str
    client_id: str | None = None
    ip: str | None = None


class RateLimited(Exception):
    """`msgid`: the learner's words in English; `message`: in the active language (the interface's)."""

    def __init__(self, code: str, msgid: str):
        super().__init__(msgid)
        self.code, self.msgid, self.message = code, msgid, gettext(msgid)


class LimitsUnavailable(Exception):
    """Redis did not answer, so no question can be counted (and none can be queued either)."""


SESSION_CLIENT_ID = "client_id"


def session_client_id(session) -> str:
    """The browser's lasting id, kept in its session (joining and leaving a class keep it); made once."""
    if SESSION_CLIENT_ID not in session:
        session[SESSION_CLIENT_ID] = uuid.uuid4().hex
    return session[SESSION_CLIENT_ID]


@dataclass(frozen=True)
class Counted:
    """What `question_count` counted: the class allowance's counter, which a refused question gives back."""

    allowance_key: str | None = None


def question_count(*, client: Client, learner: Learner | None) -> Counted:
    """Count one question against every limit that applies; `RateLimited` when one is used up."""
    try:
        if learner is None:
            _anonymous(client)
            return Counted()
        return Counted(_in_class(client, learner))
    except redis.RedisError as exc:
        log.warning("rate limits: Redis did not answer: %s", exc)
        raise LimitsUnavailable(str(exc)) from exc


def question_refund(counted: Counted) -> None:
    """Give a class's daily allowance back a question that got no page (the library has no such topic, or
    the thread's page cannot change): the allowance is for answers. The hourly limits on anonymous
    askers stay counted, since they guard the server, not a budget."""
    if counted.allowance_key is None:
        return
    try:
        redis_client().decr(counted.allowance_key)
    except redis.RedisError as exc:  # the learner loses one question of today's allowance; nothing else
        log.warning("rate limits: could not give back a refused question: %s", exc)


def _anonymous(client: Client) -> None:
    hour = int(timezone.now().timestamp()) // HOUR_S
    per_session = settings.ANON_QUESTIONS_PER_SESSION_HOUR
    per_ip = settings.ANON_QUESTIONS_PER_IP_HOUR
    message = gettext_noop("You have asked a lot of questions this hour. Take a break and come back soon!")
    if per_session and _hit(f"anon-session:{client.client_id or client.session_key}:{hour}", HOUR_S) > per_session:
        raise RateLimited("rate_limited", message)
    if per_ip and client.ip and _hit(f"anon-ip:{client.ip}:{hour}", HOUR_S) > per_ip:
        raise RateLimited("rate_limited", message)


def _in_class(client: Client, learner: Learner) -> str | None:
    """The key of the counter it added one to (None: the class has no daily limit)."""
    limit = learner.classroom.daily_question_limit or settings.LEARNER_DAILY_QUESTIONS
    if not limit:
        return None
    who = client.client_id or f"learner-{learner.pk}"
    day = timezone.localdate().isoformat()
    key = f"class:{learner.classroom_id}:{day}:{who}"
    if _hit(key, DAY_S + HOUR_S) > limit:
        raise RateLimited("limit", gettext_noop("You have asked all the questions you can today. Come back tomorrow!"))
    return f"{KEY_PREFIX}:{key}"


def _hit(key: str, ttl_s: int) -> int:
    """Add one to the window's counter and return the new count; the window expires by itself."""
    pipe = redis_client().pipeline(transaction=True)
    pipe.incr(f"{KEY_PREFIX}:{key}")
    pipe.expire(f"{KEY_PREFIX}:{key}", ttl_s, nx=True)
    count, _ = pipe.execute()
    return int(count)
