"""Tournaments: registering, running them (their tables, the late ones, the end and its prizes) and scoring them."""
