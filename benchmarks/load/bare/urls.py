"""HTTP: one page, for the load tool to know the stack answers."""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from django.urls import path


def ready(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"bare stack, pid {os.getpid()}\n", content_type="text/plain")


urlpatterns = [path("", ready)]
