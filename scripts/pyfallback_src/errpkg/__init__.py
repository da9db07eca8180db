"""Fallbacks that fail: one raises, one runs for a long time."""
