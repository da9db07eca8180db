"""Stands for a heavy dependency that objpkg imports at import time but uses
only lazily. The objects archive mocks it (fakedep.**), so this source is
not in the archive: touching it there raises NotImplementedError."""
