"""Scores across stored runs (``python -m pytest_bfcl.history RUN...``)."""
