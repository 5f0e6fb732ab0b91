"""The settings of the browser tests' servers (``tests/browser/conftest.py``): the suite's server settings
(``support.site_settings``), with the static files cached by the browser for an hour, as a production
server's are (hashed names, cached for good).  With DEBUG on, WhiteNoise's default is to cache nothing: each
card face drawn on a page (an SVG ``<use>`` of the deck's sprite) asked for the sprite again, some 700
requests a whole game, and the page spent a third of its time on them (the bazas game at seven: 46 s, 30 s
with them cached)."""

from support.site_settings import *  # noqa: F403

WHITENOISE_MAX_AGE = 3600
