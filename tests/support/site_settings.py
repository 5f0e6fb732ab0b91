"""The site's settings for the suite's server processes (``server.child_env``): the real ones, with Django's
MD5 hasher first, as the suite's own process has it (``tests/conftest.py``).  Django's default hasher spends
about a third of a second of CPU on every account made and every password checked, by design; the browser
tests make and log in hundreds.  The default hashers stay listed after it, so a password stored
with one of them still checks."""

from django.conf import global_settings

from pocha_site.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
