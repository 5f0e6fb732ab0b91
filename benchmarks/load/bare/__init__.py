"""The bare stack: a minimal Channels game server for the load tool's comparison mode (``run.py --compare``).

Same Django, Channels, channels_redis, Daphne, PostgreSQL and Redis as the site, and nothing else: one
WebSocket consumer per seat of a 4-seat table; a move is one database transaction (lock the table row,
insert the move, bump the seq), one ``group_send``, and one template render per socket.
"""
