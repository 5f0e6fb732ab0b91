"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import gc
import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")

# Set up Django (apps, models) before importing anything that touches models, like the routes.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

import pocha_site.converters  # noqa: E402, F401 (the path converters, for the socket routes too)
from games.live import loop as server_loop  # noqa: E402
from games.live.http_limit import LimitHttp  # noqa: E402
from games.live.routing import websocket_urlpatterns  # noqa: E402
from pocha_site.bad_bytes import RefuseBadSockets  # noqa: E402
from pocha_site.origin import SameOriginValidator  # noqa: E402
from pocha_site.proxy import trust_proxies  # noqa: E402


class BindClockLoop:
    """Hands the server's event loop to the in-process clock (bots' turns, quick tables) on first use."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        server_loop.bind_loop()
        return await self.app(scope, receive, send)


def tune_collector(threshold: tuple[int, ...]) -> None:
    """Everything loaded so far (Django, the apps, the engine) lives as long as the process: keep it out
    of the collector's full passes, which would otherwise stop the event loop for tens of milliseconds now
    and then while bots think in their threads (the usual gc.freeze() after start-up).  Then collect the
    youngest objects only every ``threshold[0]`` new ones (``POCHA_GC_THRESHOLD``): fewer passes, so that
    fewer of the moves' short-lived objects are carried into the older generations, whose full passes
    stopped the loop for up to 180 ms at 375 tables with Python's default of 700."""
    gc.freeze()
    gc.set_threshold(*threshold)


tune_collector(settings.POCHA_GC_THRESHOLD)

# Outermost: pages and sockets alike see the client's own address (pocha_site/proxy.py, TRUSTED_PROXIES).
application = trust_proxies(
    BindClockLoop(
        ProtocolTypeRouter(
            {
                "http": LimitHttp(django_asgi_app),
                # A handshake whose path, query or cookies hold what no parameter can is closed before
                # the session is read (pocha_site/bad_bytes.py); a path of no socket, by the last route.
                "websocket": RefuseBadSockets(
                    SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
                ),
            }
        )
    ),
    settings.TRUSTED_PROXIES,
)
