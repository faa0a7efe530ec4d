"""The Celery queues both apps route by: `gpu` (pages), `finish` (recording how a page ended, and the
reaper), `qa` (render checks). Recording a finished page has its own queue and worker, so `done` never
waits behind a 20-40 s render check."""

GPU_QUEUE = "gpu"
FINISH_QUEUE = "finish"
QA_QUEUE = "qa"

TASK_ROUTES = {
    "explainer.finish_generation": {"queue": FINISH_QUEUE},
    "explainer.reap_generations": {"queue": FINISH_QUEUE},
    "model_worker.*": {"queue": GPU_QUEUE},
    "explainer.*": {"queue": QA_QUEUE},
}
