"""The site's settings for the server of ``realstack``: the real ones, with the fast password hasher (a
hundred logins in a second or two; the tests' accounts are made with it too)."""

from pocha_site.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
