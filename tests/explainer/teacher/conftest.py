"""Rows the teacher-panel tests build on: two teachers, a class each, learners and their pages."""

from __future__ import annotations

import struct
import zlib

import pytest

from explainer.models import Generation, PageVersion, RenderCheck, Thread
from explainer.services.classrooms import classroom_create, learner_join, topic_create


def tiny_png(rgb=(40, 120, 220)) -> bytes:
    """A valid 2x2 PNG, enough for an <img> to load."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(rgb) * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture
def teacher(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="pw-ada-123")


@pytest.fixture
def other_teacher(django_user_model):
    return django_user_model.objects.create_user(username="grace", password="pw-grace-123")


@pytest.fixture
def classroom(teacher):
    c = classroom_create(teacher=teacher, name="Year 7 science")
    topic_create(classroom=c, title="Magnetism", seed_questions=["How does a magnet attract iron?", "磁铁为什么能吸铁？"],
                 note_to_model="Draw field lines.")
    topic_create(classroom=c, title="The water cycle", seed_questions=["How does rain form?", "雨是怎么形成的？"])
    return c


@pytest.fixture
def other_classroom(other_teacher):
    return classroom_create(teacher=other_teacher, name="Other class")


@pytest.fixture
def learner(classroom):
    return learner_join(join_code=classroom.join_code, display_name="Mia")


@pytest.fixture
def make_page():
    def make(*, classroom, learner=None, question="How does a magnet attract iron?", html="<h1>Magnets</h1>",
             check=None, thumbnail=True, topic=None, kind=Generation.Kind.ASK, thread=None, version=1):
        thread = thread or Thread.objects.create(session_key="s", learner=learner, classroom=classroom, topic=topic)
        generation = Generation.objects.create(
            thread=thread, learner=learner, classroom=classroom, question=question, kind=kind,
            status=Generation.Status.DONE,
        )
        page = PageVersion.objects.create(thread=thread, generation=generation, version=version, html=html)
        if check is not None:
            RenderCheck.objects.create(page=page, status=check, thumbnail=tiny_png() if thumbnail else None)
        return page
    return make
