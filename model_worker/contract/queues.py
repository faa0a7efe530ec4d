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
