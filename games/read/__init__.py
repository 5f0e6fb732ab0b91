"""The read side: what a viewer sees, built from a seat's view and never from the whole game state: the
table's board (``board``, with its seats drawn in ``seats``), the «Revancha» box, table talk as drawn,
profiles and replays (``profiles``), and the rankings recomputed from their sources (``rankings``)."""
