"""`/ws/explain/`: the learner's socket (protocol in docs/protocol.md). It coordinates; services decide."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import replace

import redis
import redis.asyncio as aioredis
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from explainer import metrics
from explainer.selectors.classes import learner_from_session
from explainer.selectors.generation import generation_for_session, thread_for_session
from explainer.services.asking import generation_create
from explainer.services.cancelling import generation_cancel
from explainer.services.learner_messages import UNAVAILABLE, UNKNOWN_THREAD, stream_error
from explainer.services.rate_limits import Client, session_client_id
from explainer.services.rejection import GenerationRejected
from explainer.services.review import class_group, thread_group
from model_worker.contract import logs, stream
from model_worker.contract.connection import async_options
from model_worker.contract.events import Done, Error, Event, Fixing, Hello, Topic, Watching, from_wire

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
READ_BLOCK_MS = 2000
QA_WAIT_S = 180  # after `done`, how long a socket waits for the render check's `qa`
# A message longer than this is answered `message_too_big` unread: every message of the protocol fits in a
# few kilobytes (a question is at most QUESTION_MAX_CHARS). Daphne itself drops a connection whose message
# passes 1 MiB, before the app sees it (the browser says 1006): the learner UI never sends one this long.
MESSAGE_MAX_CHARS = 64 * 1024
# While Redis is away, a live view keeps trying to read on (backing off up to 5 s) this long.
OUTAGE_WAIT_S = 120
# Redis not answering (or answering on a dead connection): the learner hears `unavailable`.
REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, OSError)


class ExplainConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        self.watchers: dict[str, asyncio.Task] = {}
        self.groups_joined: set[str] = set()
        # Reads block for READ_BLOCK_MS; the socket timeout must outlast them.
        self.redis = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=READ_BLOCK_MS / 1000 + 10,
                                             **async_options())
        self.session_key, self.learner, client_id = await _session_identity(self.scope)
        self.client = Client(session_key=self.session_key, client_id=client_id, ip=(self.scope.get("client") or [None])[0])
        await self.accept()
        metrics.socket_opened()
        self.counted = True
        await self.send_local(Hello(protocol=PROTOCOL_VERSION))
        if self.learner is not None:
            await self._join(class_group(self.learner.classroom_id))

    async def disconnect(self, code):
        if getattr(self, "counted", False):
            metrics.socket_closed()
            self.counted = False
        watchers = list(getattr(self, "watchers", {}).values())
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        for group in getattr(self, "groups_joined", ()):
            await self.channel_layer.group_discard(group, self.channel_name)
        if hasattr(self, "redis"):
            await self.redis.aclose()

    async def receive(self, text_data=None, bytes_data=None):
        if len(text_data if text_data is not None else bytes_data or b"") > MESSAGE_MAX_CHARS:
            return await self.send_error(Error(code="message_too_big", message=(
                f"That message is over {MESSAGE_MAX_CHARS} characters; no message of the protocol is that long.")))
        try:
            message = json.loads(text_data if text_data is not None else bytes_data)
        except (TypeError, ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deep
            return await self.send_error(Error(code="bad_json", message="That message is not JSON."))
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return await self.send_error(Error(code="bad_message", message='A message is a JSON object with a "type".'))
        handler = self.handlers.get(message["type"])
        if handler is None:
            return await self.send_error(Error(code="unknown_type",
                                               message=f"Unknown message type {message['type'][:40]!r}."))
        try:
            await handler(self, message)
        except FieldError as exc:
            await self.send_error(Error(code=exc.code, message=str(exc), request=message["type"]))
        except REDIS_DOWN as exc:  # the socket stays open; the client may try again in a moment
            log.warning("Redis did not answer a %r: %s", message["type"], exc)
            await self.send_error(Error(code="unavailable", message=UNAVAILABLE, request=message["type"]),
                                  generation=_generation_field(message))
        except DatabaseError as exc:  # SQLite busy past its timeout, PostgreSQL away: nothing was half-written
            log.warning("the database did not answer a %r: %s", message["type"], exc)
            await self.send_error(Error(code="unavailable", message=UNAVAILABLE, request=message["type"]),
                                  generation=_generation_field(message))

    # Client messages, one handler each.

    async def handle_ask(self, message):
        await self._learner_refresh()
        question = _field(message, "question", str)
        lang = _field(message, "lang", str, required=False)  # None: the question's own language
        thread_id = _uuid(message, "thread", required=False)
        topic = _field(message, "topic", str, required=False)  # a library page the learner picked
        try:
            generation = await _generation_create(
                question=question, lang=lang, thread_id=thread_id, session_key=self.session_key, learner=self.learner,
                topic=topic,
                client=self.client,
            )
        except GenerationRejected as exc:
            if exc.topic is not None:  # what the router understood, before the refusal
                await self.send_json(refusal_topic_frame(exc.topic))
            return await self.send_error(exc.error(request="ask"))
        await self._join(thread_group(generation.thread_id))
        self._watch(str(generation.pk), after=0, lang=generation.lang)

    async def handle_cancel(self, message):
        generation = await self._own_generation(message)
        if generation is not None:
            await database_sync_to_async(generation_cancel)(generation=generation)

    async def handle_resume(self, message):
        after = _field(message, "after", int)
        if after < 0:
            raise FieldError("bad_field", '"after" must be 0 or more.')
        generation = await self._own_generation(message)
        if generation is None:
            return
        newest = stream.last_id(await stream.last(self.redis, str(generation.pk)))
        if newest is None:
            return await self.send_error(
                Error(code="expired", message="This answer's live view has expired; open the thread to see its pages."),
                generation=str(generation.pk),
            )
        if after > newest:  # an id this stream never gave: reading on from it would wait for ever
            raise FieldError("bad_field", f'"after" is past this generation\'s last event ({newest}).')
        old = self.watchers.pop(str(generation.pk), None)
        if old is not None:
            old.cancel()
            await asyncio.gather(old, return_exceptions=True)
        await self._join(thread_group(generation.thread_id))
        self._watch(str(generation.pk), after=after, lang=generation.lang)

    async def handle_watch(self, message):
        """An open thread page (a reload, a second tab) hears what teachers do to the thread's pages."""
        thread_id = _uuid(message, "thread")
        thread = await _thread_for_session(thread_id=thread_id, session_key=self.session_key)
        if thread is None:
            return await self.send_error(Error(code="unknown_thread", message=UNKNOWN_THREAD, request="watch"))
        await self._join(thread_group(thread.pk))
        await self.send_local(Watching(thread=str(thread.pk)))

    handlers = {"ask": handle_ask, "cancel": handle_cancel, "resume": handle_resume, "watch": handle_watch}

    async def _learner_refresh(self):
        """The session's learner now: a teacher may have removed them from the class since the socket
        opened, and then the socket asks as nobody's learner and hears nothing more of the class."""
        session = self.scope.get("session")
        if session is None or self.learner is None:
            return
        learner = await database_sync_to_async(learner_from_session)(session)
        if learner is None or learner.classroom_id != self.learner.classroom_id:
            group = class_group(self.learner.classroom_id)
            if group in self.groups_joined:
                try:
                    await self.channel_layer.group_discard(group, self.channel_name)
                except REDIS_DOWN as exc:
                    log.warning("could not leave %s: %s", group, exc)
                self.groups_joined.discard(group)
            if learner is not None:
                await self._join(class_group(learner.classroom_id))
        self.learner = learner

    # Channel-layer messages from services (a teacher hid or showed a page).

    async def page_hidden(self, message):
        await self.send_local(from_wire(message["event"]))

    async def page_shown(self, message):
        await self.send_local(from_wire(message["event"]))

    # Plumbing: an event becomes JSON here, with the `id` and `generation` the protocol puts around it.

    async def send_json(self, wire: dict):
        await self.send(text_data=json.dumps(wire, ensure_ascii=False))

    async def send_local(self, event: Event):
        await self.send_json(local_frame(event))

    async def send_error(self, error: Error, *, generation: str | None = None):
        await self.send_json(error_frame(error, generation))

    async def _own_generation(self, message):
        generation_id = _uuid(message, "generation")
        generation = await _generation_for_session(generation_id=generation_id, session_key=self.session_key)
        if generation is None:
            await self.send_error(Error(code="unknown_generation", request=message["type"],
                                        message="That generation does not exist or is not yours."))
        return generation

    async def _join(self, group: str):
        """Listen to a group (teacher actions); without Redis the socket works on without them."""
        if group not in self.groups_joined:
            try:
                await self.channel_layer.group_add(group, self.channel_name)
            except REDIS_DOWN as exc:
                log.warning("could not join %s: %s", group, exc)
                return
            self.groups_joined.add(group)

    def _watch(self, generation_id: str, *, after: int, lang: str):
        if generation_id not in self.watchers:
            self.watchers[generation_id] = asyncio.create_task(self._forward(generation_id, after, lang))

    async def _forward(self, generation_id: str, after: int, lang: str):
        """Send the stream's events after `after` as they arrive, until the generation's last event; an
        error of the engine's or the reaper's is said in the question's language `lang`.

        The reaper (not this socket) decides when a worker is lost; its `error` arrives here as an
        event. While Redis is away the view waits and reads on from `after` once it is back."""
        logs.about(generation_id)  # this task runs in a context of its own: its lines name the generation
        loop = asyncio.get_running_loop()
        qa_deadline = None
        joined = False
        outage_since = None
        backoff = 0.25
        try:
            while qa_deadline is None or loop.time() < qa_deadline:
                try:
                    if not joined:
                        await stream.viewer_join(self.redis, generation_id, self.channel_name)
                        joined = True
                    reply = await stream.read(self.redis, generation_id, after, READ_BLOCK_MS)
                except REDIS_DOWN as exc:
                    outage_since = outage_since or loop.time()
                    if loop.time() - outage_since > OUTAGE_WAIT_S:
                        raise
                    log.warning("stream of generation %s: Redis away (%s); retrying in %.1f s", generation_id,
                                exc, backoff)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                    continue
                outage_since, backoff = None, 0.25
                if not reply:
                    continue
                for body in stream.decode(reply[0][1]):
                    after = body["id"]
                    try:
                        event = from_wire(body)
                    except ValueError as exc:  # a writer of another version: pass it on as it came
                        log.warning("generation %s: event %s is not one this server knows: %s", generation_id, after, exc)
                        await self.send_json({**body, "generation": generation_id})
                        continue
                    if isinstance(event, Error):
                        event = replace(event, message=stream_error(event.code, event.message, lang))
                    await self.send_json(stream_frame(after, event, generation_id))
                    if isinstance(event, Fixing):
                        self._watch(event.repair, after=0, lang=lang)  # the repair streams on its own generation
                    if event.terminal or (isinstance(event, Done) and event.unchanged):
                        return  # an unchanged revision adds no page, so no render check follows
                    if isinstance(event, Done):
                        qa_deadline = loop.time() + QA_WAIT_S
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("stream of generation %s broke", generation_id)
            await self.send_error(Error(code="stream_failed", message="The live view stopped; reconnecting will resume it."),
                                  generation=generation_id)
        finally:
            if self.watchers.get(generation_id) is asyncio.current_task():
                del self.watchers[generation_id]
            if joined:
                try:
                    await stream.viewer_leave(self.redis, generation_id, self.channel_name, settings.ORPHAN_GRACE_S)
                except Exception:  # the worker then runs on; it still stops at its time limit
                    log.exception("could not record that a viewer of %s left", generation_id)


# How an event is framed on the socket (docs/protocol.md): the `id` and `generation` around its wire form.

def stream_frame(event_id: int, event: Event, generation: str) -> dict:
    """An event of a generation's stream."""
    return {"id": event_id, **event.to_wire(), "generation": generation}


def local_frame(event: Event) -> dict:
    """An event of no generation (`hello`, `watching`, `page_hidden`, `page_shown`): id 0."""
    wire = event.to_wire()
    return {"type": wire.pop("type"), "id": 0, **wire}


def error_frame(error: Error, generation: str | None = None) -> dict:
    """An error about a client message: id 0, and the generation it was about, if any."""
    wire = error.to_wire()
    return {"type": wire.pop("type"), "id": 0, "generation": generation, **wire}


def refusal_topic_frame(topic: Topic) -> dict:
    """What the router understood of a question refused before it became a generation."""
    return {**topic.to_wire(), "id": 0, "generation": None}


class FieldError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def _field(message: dict, name: str, kind: type, *, required: bool = True):
    value = message.get(name)
    if value is None:
        if required:
            raise FieldError("missing_field", f'"{name}" is missing.')
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise FieldError("bad_field", f'"{name}" must be a {kind.__name__}.')
    return value


def _generation_field(message: dict) -> str | None:
    """The generation a message was about, when it named one, for the error it gets back."""
    generation = message.get("generation")
    return generation if isinstance(generation, str) and len(generation) <= 40 else None


def _uuid(message: dict, name: str, *, required: bool = True) -> uuid.UUID | None:
    raw = _field(message, name, str, required=required)
    if raw is None:
        return None
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise FieldError("bad_field", f'"{name}" is not an id.') from None


@database_sync_to_async
def _session_identity(scope) -> tuple[str, object, str]:
    """The browser session's key (created if the socket came without one), its learner, if any, and its
    lasting client id (what the rate limits count by)."""
    session = scope.get("session")
    if session is None:  # no session middleware: this socket is its own owner
        return uuid.uuid4().hex, None, uuid.uuid4().hex
    client_id = session_client_id(session)
    if not session.session_key or session.modified:
        session.save()
    return session.session_key, learner_from_session(session), client_id


_generation_create = database_sync_to_async(generation_create)
_generation_for_session = database_sync_to_async(generation_for_session)
_thread_for_session = database_sync_to_async(thread_for_session)

