"""Stands for a heavy submodule (mocked in the objects archive)."""


def compute(x):
    return ("fakedep.heavy.compute", x)
