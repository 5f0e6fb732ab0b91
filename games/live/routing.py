from django.urls import path

from games.live.consumers import TableConsumer

websocket_urlpatterns = [
    path("ws/mesa/<id:table_id>/", TableConsumer.as_asgi()),
]
