"""ASGI entry point of the bare stack: HTTP through Django (a readiness page), WebSockets through Channels."""

from __future__ import annotations

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bare.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

from bare.consumer import BareTableConsumer  # noqa: E402

# As the site does after start-up (pocha_site/asgi.py): what is loaded now lives as long as the process.
gc.freeze()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": URLRouter([path("ws/bare/<int:table_id>/<int:seat>/", BareTableConsumer.as_asgi())]),
    }
)
