"""The site's date and time formats per language (``FORMAT_MODULE_PATH``), over Django's own: a date every reader
reads the same way, its month in words (6 Dec 2026 / 6 dic 2026, never 12/06/2026), and the time on the 24-hour
clock (09:05, never «9:05 a.m.», which also ended a sentence in «a.m..»).  What is not set here is Django's."""
