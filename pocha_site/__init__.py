# Load the Celery app with Django so that `@shared_task` binds to it. The site itself runs
# without Celery (one-command local mode), so a missing install must not break the import.
try:
    from .celery import app as celery_app
except ImportError:  # pragma: no cover - only without the celery package
    celery_app = None

__all__ = ("celery_app",)
