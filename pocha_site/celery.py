"""The Celery app: worker and beat run the turn clock when REDIS_URL is set."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")

app = Celery("pocha_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
