"""The Celery queues both apps route by: `gpu` (pages), `finish` (recording how a page ended, and the
reaper), `qa` (render checks). Recording a finished page has its own queue and worker, so `done` never
waits behind a 20-40 s render check."""

GPU_QUEUE = "gpu"
FINISH_QUEUE = "finish"
QA_QUEUE = "qa"

# Pages are sent at PAGE_PRIORITY; a page whose worker died mid-page goes back at REDELIVERY_PRIORITY,
# ahead of the pages that were waiting behind it. In Celery's Redis transport a lower number is taken
# first (its priority steps are 0, 3, 6, 9: each step its own list, emptied in that order).
PAGE_PRIORITY = 6
REDELIVERY_PRIORITY = 0

TASK_ROUTES = {
    "explainer.finish_generation": {"queue": FINISH_QUEUE},
    "explainer.reap_generations": {"queue": FINISH_QUEUE},
    "model_worker.*": {"queue": GPU_QUEUE},
    "explainer.*": {"queue": QA_QUEUE},
}

# Celery's Redis transport keeps each priority step of a queue in a list of its own: the queue's own name
# for step 0, `<name>\x06\x16<step>` for the others (kombu's separator and its default steps).
PRIORITY_STEPS = (0, 3, 6, 9)
_STEP_SEPARATOR = "\x06\x16"


def queue_lists(queue: str) -> list[str]:
    """The Redis lists that hold a queue's waiting messages, one per priority step."""
    return [queue if step == 0 else f"{queue}{_STEP_SEPARATOR}{step}" for step in PRIORITY_STEPS]


def depths(r, queues=(GPU_QUEUE, FINISH_QUEUE, QA_QUEUE)) -> dict[str, int]:
    """How many messages wait on each queue (taken by no worker yet), in one round trip."""
    pipe = r.pipeline(transaction=False)
    for queue in queues:
        for name in queue_lists(queue):
            pipe.llen(name)
    lengths = iter(pipe.execute())
    return {queue: sum(next(lengths) for _ in PRIORITY_STEPS) for queue in queues}
