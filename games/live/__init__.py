"""The live transport: the table's WebSocket (``consumers``), the events between server processes (``hub``,
``push``), the one place that turns committed changes into pushes and timers (``dispatch``), the timers
and the Celery tasks that play what is due (``timers``, ``tasks``), who is connected (``presence``,
``watchers``), each process's loop and load shedding (``loop``, ``capacity``, ``http_limit``), and the
database calls of the socket path (``hotpath``)."""
