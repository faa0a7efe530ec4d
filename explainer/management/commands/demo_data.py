"""Create (once) a demo teacher and a demo class with topics, then print how to sign in and join."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from explainer.models import Classroom
from explainer.services.classrooms import classroom_create, topic_create

DEMO_USERNAME = "teacher"
DEMO_PASSWORD = "explainer-demo"
DEMO_CLASS = "Demo class"
DEMO_TOPICS = [
    (
        "The solar system",
        ["Why do planets orbit the Sun?", "Why does the Moon have phases?", "How big is Jupiter compared to Earth?",
         "行星为什么绕着太阳转？", "月亮为什么有圆缺变化？"],
        "Show orbits; planets, moons, the Sun and gravity.",
    ),
    (
        "Photosynthesis",
        ["How do plants make food from sunlight?", "Why are leaves green?", "植物是怎样进行光合作用的？"],
        "Keep to leaves, light, carbon dioxide, water, sugar and oxygen.",
    ),
    (
        "Magnetism",
        ["How does a magnet attract iron?", "Why does a compass point north?", "磁铁为什么能吸铁？"],
        "Draw field lines around bar magnets and the Earth.",
    ),
]


class Command(BaseCommand):
    help = "Create a demo teacher and a demo class (idempotent) and print how to sign in."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=DEMO_USERNAME)
        parser.add_argument("--password", default=DEMO_PASSWORD, help="Used only when the teacher is first created.")
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    @transaction.atomic
    def handle(self, *args, username, password, base_url, **options):
        User = get_user_model()
        teacher = User.objects.filter(username=username).first()
        created_teacher = teacher is None
        if created_teacher:
            teacher = User.objects.create_user(username=username, password=password)
        classroom = Classroom.objects.filter(teacher=teacher, name=DEMO_CLASS).first()
        if classroom is None:
            classroom = classroom_create(teacher=teacher, name=DEMO_CLASS, languages=["en", "zh"])
            for title, seeds, note in DEMO_TOPICS:
                topic_create(classroom=classroom, title=title, seed_questions=seeds, note_to_model=note)
        base_url = base_url.rstrip("/")
        self.stdout.write("")
        self.stdout.write(f"Teacher panel:  {base_url}/teacher/")
        if created_teacher or teacher.check_password(password):
            self.stdout.write(f"  sign in as    {username} / {password}")
        else:
            self.stdout.write(f"  sign in as    {username} (the password was changed since it was created)")
        self.stdout.write(f"Learners join:  {base_url}/join/  with code {classroom.join_code} and any display name")
        self.stdout.write(f"Demo class:     {classroom.name}, {classroom.topics.count()} topics")
        self.stdout.write("")
