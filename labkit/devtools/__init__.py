"""Maintenance tools of the book itself, behind one entry point: ``python -m labkit.devtools build|check``."""
