# Tables, seats, rounds, bids, tricks, plays and deadlines will live here.
# The rules themselves belong to games.engine, which knows nothing of Django.
