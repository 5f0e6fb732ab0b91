"""The suite's shared test infrastructure: the real server in a subprocess (``server``), and the tiers
(``tiers``: which tests run in which ``make`` target)."""
