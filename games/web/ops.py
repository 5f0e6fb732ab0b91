"""What a server process says about itself to the site's staff (and to nobody else)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, JsonResponse

from games.live import hub


async def hub_stats(request: HttpRequest) -> JsonResponse:
    """The table events this process has heard (``games.live.hub.stats``): the process that answers is the
    one the request reached (behind a load balancer, any of them).  Anyone but staff gets a 404."""
    user = await request.auser()
    if not user.is_staff:
        raise Http404
    return JsonResponse(hub.stats())
