"""After the game, learning from it: «Analizar la partida» and the yardstick of «Juega esta mano».

- ``analyses``: asking for a finished game's analysis, the queue and its places, and the job that works it
  out round by round (the engine's ``games.engine.analysis``) and keeps it;
- ``practice``: difícil's result in the person's seat on a practice table's deal, the yardstick its end
  compares with;
- ``worker``: where that work runs — the Celery worker with Redis, else a thread of the server process that
  hands the searching to a process of its own — never on a request or a socket.
"""
