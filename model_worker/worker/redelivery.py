"""A page whose worker died mid-page goes back to the front of the `gpu` queue, not the back.

Celery rejects the message of a task whose child process was lost (`reject_on_worker_lost`), and the
Redis transport puts a rejected message at the end of its list: the learner whose page was cut short
would wait for every page asked after theirs. Instead the worker sends the same task again (same id,
arguments and options) at `REDELIVERY_PRIORITY`, which the transport serves before `PAGE_PRIORITY`,
and drops the original. If that send fails (the broker is away), the message is rejected back onto
the queue as before, so the page is never lost; at worst it is late.
"""

from __future__ import annotations

import logging

from celery.worker.request import Request

from model_worker.contract.queues import GPU_QUEUE, REDELIVERY_PRIORITY

log = logging.getLogger(__name__)


class FrontOfQueueRequest(Request):
    def reject(self, requeue: bool = False) -> None:
        if not requeue or self.acknowledged:
            return super().reject(requeue=requeue)
        try:
            self.task.app.send_task(self.name, args=self.args, kwargs=self.kwargs, task_id=self.id,
                                    queue=GPU_QUEUE, priority=REDELIVERY_PRIORITY)
        except Exception:  # noqa: BLE001 - any failure to send: fall back to Celery's own requeue
            log.warning("task %s: could not send it again at the front; requeued at the back", self.id, exc_info=True)
            return super().reject(requeue=True)
        log.warning("task %s: its worker was lost; sent again ahead of the queue", self.id)
        return super().reject(requeue=False)
