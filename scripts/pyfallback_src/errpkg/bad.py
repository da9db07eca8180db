"""fail raises a Python exception for a negative sum; spin runs pure Python
for SPIN_SECONDS so that a caller can interrupt it."""
import time

SPIN_SECONDS = 30.0


def _flat(v):
    if isinstance(v, list):
        for e in v:
            yield from _flat(e)
    else:
        yield v


def fail(x: "Tensor") -> "Tensor":
    """x + 1, or ValueError("bad input: ...") when x.sum() < 0."""
    values = memoryview(x).tolist()
    total = sum(_flat(values))
    if total < 0:
        raise ValueError(f"bad input: sum is {total:.3f}, want >= 0")
    return [[v + 1.0 for v in row] for row in values]


def spin(x: "Tensor") -> "Tensor":
    """Loops in pure Python for SPIN_SECONDS (interruptible between
    bytecodes), then returns x unchanged."""
    deadline = time.monotonic() + SPIN_SECONDS
    n = 0
    while time.monotonic() < deadline:
        n += 1
    return memoryview(x).tolist()
