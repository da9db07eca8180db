"""Pickled Python objects holding numpy arrays, and a mocked dependency."""
