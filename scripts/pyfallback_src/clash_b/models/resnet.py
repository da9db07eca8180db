"""Package B's models.resnet: same names as package A's, other behaviour."""

NAME = "resnet-b"
SCALE = -3.0
SHIFT = 0.5


def _map(v, f):
    return [_map(e, f) for e in v] if isinstance(v, list) else f(v)


def head(x: "Tensor") -> "Tensor":
    """x * SCALE + SHIFT, element by element, in pure Python over the
    buffer protocol (nested lists of floats become float32)."""
    return _map(memoryview(x).tolist(), lambda v: v * SCALE + SHIFT)


def name() -> str:
    return NAME
