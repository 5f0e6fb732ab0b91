"""The HTTP views: thin adapters from requests to the table's actions and the read side."""
