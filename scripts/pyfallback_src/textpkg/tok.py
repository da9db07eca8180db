"""Tokenizes a batch of texts into wordpiece ids, BERT style: lowercase,
NFKD normalisation with accents stripped, split into words and punctuation,
then greedy longest-match wordpieces over textpkg.vocab.VOCAB.

Pure Python on purpose (no torch, no numpy): it is the Python-bound part of
the model.
"""
import re
import unicodedata

from .vocab import VOCAB

IDS = {tok: i for i, tok in enumerate(VOCAB)}
UNK = IDS["[UNK]"]
CLS = IDS["[CLS]"]
SEP = IDS["[SEP]"]
MAX_WORD_CHARS = 100

_WORDS = re.compile(r"[^\W_]+|[^\w\s]|_")


def normalize(text):
    """Lowercases, decomposes (NFKD) and drops combining marks: "Café" -> "cafe"."""
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if unicodedata.category(c) != "Mn")


def wordpiece(word):
    """Greedy longest-match wordpieces of one word; [UNK] if some part has none."""
    if len(word) > MAX_WORD_CHARS:
        return [UNK]
    ids = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            i = IDS.get(piece)
            if i is not None:
                ids.append(i)
                break
            end -= 1
        else:
            return [UNK]
        start = end
    return ids


def tokenize_one(text):
    ids = [CLS]
    for word in _WORDS.findall(normalize(text)):
        ids.extend(wordpiece(word))
    ids.append(SEP)
    return ids


def tokenize(texts: "List[str]") -> "Tuple[Tensor, Tensor]":
    """(ids, offsets) for EmbeddingBag: every text's ids, [CLS] ... [SEP],
    concatenated, and where each text starts. Lists of ints become int64."""
    ids = []
    offsets = []
    for text in texts:
        offsets.append(len(ids))
        ids.extend(tokenize_one(text))
    return ids, offsets
