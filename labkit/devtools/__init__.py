"""Maintenance tools of the book itself: notebook regeneration and the offline book check."""
