"""The GPU worker: the Celery app and task, and the Celery-free entry they share with `manage.py explain`."""
