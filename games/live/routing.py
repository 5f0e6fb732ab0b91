from django.urls import path, re_path

import pocha_site.converters  # noqa: F401 (the site's path converters: id)
from games.live.consumers import SiteConsumer, TableConsumer, TournamentConsumer
from pocha_site.bad_bytes import deny_socket

websocket_urlpatterns = [
    path("ws/mesa/<id:table_id>/", TableConsumer.as_asgi()),
    path("ws/torneo/<id:tournament_id>/", TournamentConsumer.as_asgi()),
    # Every other page of the site, for a person signed in (``?p=lobby|amigos|other``: what it shows live).
    path("ws/sitio/", SiteConsumer.as_asgi()),
    # Any other path (a NUL byte, a number past the database's range, a path of no socket): the handshake
    # is closed before it opens (Daphne answers 403), rather than Channels' "No route found" error.
    re_path(r"", deny_socket),
]
