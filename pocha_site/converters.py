"""The site's path converters: every parameter of every URL goes through one of these.

Each accepts only what the parameter can really hold (a player's name, a table's number, a private code, a
password-reset link's parts, a ranking's name, a date), of a bounded length, so anything else (a NUL byte,
which PostgreSQL refuses in a query; a control character; a name of ten thousand letters; a number past
PostgreSQL's bigint) does not match the URL: a 404, before any view or query (and before that,
``pocha_site.bad_bytes`` answers 400 to a path holding bytes no parameter can hold).  Registered once,
when this module is first imported (``pocha_site.urls`` and ``games.live.routing`` do so before their
patterns); ``tests/test_url_walk.py`` walks every pattern of the site and of the sockets with such values.
"""

from __future__ import annotations

from datetime import date

from django.urls import register_converter

#: Django's longest user name (``AbstractUser.username``).
NAME_MAX = 150


class _Text:
    regex = ""

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return str(value)


class NameConverter(_Text):
    """A player's name, as Django's user names are: letters, digits and ``@.+-_``, up to 150."""

    regex = rf"[\w.@+-]{{1,{NAME_MAX}}}"


class CodeConverter(_Text):
    """A private table's code as it may be typed in a link: letters, any case (the view says which are
    right and counts the wrong ones)."""

    regex = r"[A-Za-z]{1,40}"


class TokenConverter(_Text):
    """A part of a one-time link (a password reset's user and token): URL-safe base64 letters."""

    regex = r"[0-9A-Za-z_-]{1,100}"


class KeyConverter(_Text):
    """A short fixed word of the site's own, such as a ranking's period (``semana``)."""

    regex = r"[a-z0-9_-]{1,40}"


class IdConverter:
    """A row's number as the site writes it: a positive whole number without leading zeros, of at most 18
    digits, so it always fits PostgreSQL's bigint (the rows' ids).  So ``/mesa/01/`` is not a second
    address of table 1, and ``-1``, ``0`` or twenty digits are 404s (on the sockets, a closed handshake)."""

    regex = r"[1-9][0-9]{0,17}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class IsoDateConverter:
    """``2026-11-23``: a real calendar date, or the URL does not match (a 404)."""

    regex = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"

    def to_python(self, value: str) -> date:
        return date.fromisoformat(value)  # ValueError for 2026-02-30: the URL does not match

    def to_url(self, value: date) -> str:
        return value.isoformat()


CONVERTERS = {
    "name": NameConverter,
    "code": CodeConverter,
    "token": TokenConverter,
    "key": KeyConverter,
    "id": IdConverter,
    "isodate": IsoDateConverter,
}

for _name, _converter in CONVERTERS.items():
    register_converter(_converter, _name)
