"""``{{ n|fichas }}``: a chip count as people write it (5.000 in Spanish, 5,000 in English)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import get_language

register = template.Library()


def format_chips(value: Any, language: str | None = None) -> str:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return ""
    text = f"{abs(number):,}"
    if (language or get_language() or "es").startswith("es"):
        text = text.replace(",", ".")
    return ("−" if number < 0 else "") + text


@register.filter
def fichas(value: Any) -> str:
    return format_chips(value)


@register.filter
def signed_fichas(value: Any) -> str:
    text = format_chips(value)
    return text if text.startswith("−") or not text or text == "0" else "+" + text
