from django.urls import URLPattern

# WebSocket routes (the table consumers) are added here; asgi.py mounts this list.
websocket_urlpatterns: list[URLPattern] = []
