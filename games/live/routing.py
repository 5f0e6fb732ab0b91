from django.urls import path

from games.live.consumers import TableConsumer, TournamentConsumer

websocket_urlpatterns = [
    path("ws/mesa/<id:table_id>/", TableConsumer.as_asgi()),
    path("ws/torneo/<id:tournament_id>/", TournamentConsumer.as_asgi()),
]
