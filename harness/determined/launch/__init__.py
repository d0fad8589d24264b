"""Launchers that wrap the training process (``wrap_rank``)."""
