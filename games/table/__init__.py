"""The table's domain: every write to a table (``actions``), who may see and sit (``access``), when its next
automatic step is due (``clock``), what a change tells the live side (``events``), and the rows behind it.

Above the engine and the models, below the read side, the live transport and the web views: nothing here
imports them (``.importlinter``)."""
