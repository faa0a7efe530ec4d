"""How both tiers' log lines look: plain text by default, or (`LOG_FORMAT=json`) one JSON object a line
with `time`, `level`, `logger`, `message`, `process` and, on every line about one generation, its
`generation_id`, so one page can be followed from the web process through the GPU, finish and qa workers.

A line is about a generation while code runs inside `generation(id)`, or after `about(id)` in a task of
its own; in a Celery worker `celery_logging` names the generation of the tasks that take its id as their
first argument, and clears it when any task ends.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from contextvars import ContextVar

FORMATS = ("text", "json")
_generation: ContextVar[str | None] = ContextVar("generation_id", default=None)


@contextmanager
def generation(generation_id):
    """Log lines written inside name this generation."""
    token = _generation.set(str(generation_id))
    try:
        yield
    finally:
        _generation.reset(token)


def about(generation_id) -> None:
    """Log lines name this generation for the rest of the current context: an asyncio task's own, or a
    Celery task's until it ends (see `celery_logging`)."""
    _generation.set(str(generation_id))


class GenerationFilter(logging.Filter):
    """Gives each record the generation it is about (None when none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "generation_id", None) is None:
            record.generation_id = _generation.get()
        return True


class JsonLines(logging.Formatter):
    """One JSON object a line (python-json-logger), without the fields a line has no value for."""

    def __init__(self):
        super().__init__()
        from pythonjsonlogger.json import JsonFormatter

        class Formatter(JsonFormatter):
            def process_log_record(self, log_record):
                return {k: v for k, v in log_record.items() if v is not None}

        self.inner = Formatter("{asctime}{levelname}{name}{message}{process}{generation_id}", style="{",
                               rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                               json_ensure_ascii=False)

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "generation_id"):
            record.generation_id = _generation.get()
        return self.inner.format(record)


def formatter_factory(log_format: str):
    """A formatter factory for `logging.config.dictConfig` (`"()"`): text keeps the message as it was."""
    return JsonLines if log_format == "json" else logging.Formatter


def log_format() -> str:
    """LOG_FORMAT, for processes without Django settings (the GPU worker)."""
    value = (os.environ.get("LOG_FORMAT") or "text").strip().lower()
    if value not in FORMATS:
        raise ValueError(f"LOG_FORMAT={value!r} must be one of {', '.join(FORMATS)}")
    return value


def celery_logging(generation_tasks: frozenset[str]) -> None:
    """In a Celery worker: JSON lines when LOG_FORMAT=json, and the generation's id on the lines of the
    tasks named (each takes the generation's id as its first argument)."""
    from celery.signals import after_setup_logger, after_setup_task_logger, task_postrun, task_prerun

    tokens: dict[str, object] = {}

    @task_prerun.connect(weak=False)
    def _enter(task_id=None, task=None, args=None, **_):
        # Every task starts about no generation, or the one its first argument names; a task may name one
        # later (`about`), and either lasts to the end of the task, Celery's own "succeeded" line included.
        named = task is not None and task.name in generation_tasks and args
        tokens[task_id] = _generation.set(str(args[0]) if named else None)

    @task_postrun.connect(weak=False)
    def _leave(task_id=None, **_):
        token = tokens.pop(task_id, None)
        if token is not None:
            _generation.reset(token)

    if log_format() != "json":
        return

    @after_setup_logger.connect(weak=False)
    @after_setup_task_logger.connect(weak=False)
    def _json(logger=None, **_):
        for handler in logger.handlers:
            handler.setFormatter(JsonLines())
            handler.addFilter(GenerationFilter())
            handler.addFilter(_TaskFilter())


class _TaskFilter(logging.Filter):
    """The Celery task a line was written in (`task_name`, `task_id`), as Celery's own task format shows."""

    def filter(self, record: logging.LogRecord) -> bool:
        from celery import current_task

        task = current_task._get_current_object() if current_task else None
        if task is not None and getattr(task, "request", None) is not None and task.request.id:
            record.task_name, record.task_id = task.name, task.request.id
        return True
