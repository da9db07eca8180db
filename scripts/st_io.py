"""Minimal safetensors writer/reader for gosr fixtures (no pip package needed).

Layout: 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}
padded with spaces to an 8-byte boundary, then the tensor bytes in order.
"""
import json
import struct

import torch

DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}
NAMES = {v: k for k, v in DTYPES.items()}


def tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: reinterpret the bits
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def encode(entries, metadata=None):
    """entries: list of (name, tensor). Returns the file bytes."""
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in sorted(metadata.items())}
    blobs, off = [], 0
    for name, t in entries:
        b = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def write(path, entries, metadata=None):
    with open(path, "wb") as f:
        f.write(encode(entries, metadata))


def read(path):
    """Returns (dict name->tensor, metadata); used to self-check the writer."""
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    np_types = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "BF16": np.int16, "I64": np.int64,
                "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
    for name, e in header.items():
        b, end = e["data_offsets"]
        arr = np.frombuffer(body[b:end], dtype=np_types[e["dtype"]]).reshape(e["shape"]).copy()
        t = torch.from_numpy(arr)
        if e["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t
    return out, meta
