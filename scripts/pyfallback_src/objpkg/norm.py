"""A normalizer pickled into the objects archive (objs/normalizer.pkl), and
a fallback for its model. numpy is extern; fakedep is mocked: imported
here, touched only by Normalizer.heavy."""
import numpy as np

import fakedep.heavy


class Normalizer:
    """(x - mean) / std per feature, with float32 numpy arrays (not tensors),
    a dict of metadata and a name."""

    def __init__(self, mean, std, meta, name):
        self.mean = np.asarray(mean, dtype=np.float32)
        self.std = np.asarray(std, dtype=np.float32)
        self.meta = meta
        self.name = name

    def __call__(self, x):
        return ((np.asarray(x, dtype=np.float32) - self.mean) / self.std).astype(np.float32)

    def describe(self):
        return f"{self.name}: {len(self.mean)} features, labels {self.meta['labels']}"

    def heavy(self, x):
        # Only here is the mocked module touched: in the archive this raises.
        return fakedep.heavy.compute(x)


def l2_normalize(x: "Tensor") -> "Tensor":
    """Each row divided by its L2 norm (rows of zeros stay zero)."""
    a = np.asarray(x, dtype=np.float32)
    norm = np.sqrt((a * a).sum(axis=-1, keepdims=True))
    return (a / np.where(norm == 0, 1, norm)).astype(np.float32)
