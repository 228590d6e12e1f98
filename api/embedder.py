"""The API's embedder: loaded in the background at start-up, so discovery is fast from the first query."""

from __future__ import annotations

import threading

from registry.embeddings import Embedder, try_embedder

__all__ = ["EmbedderHolder"]


class EmbedderHolder:
    def __init__(self) -> None:
        self._embedder: Embedder | None = None
        self._done = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="toolfleet-embedder", daemon=True).start()

    def _load(self) -> None:
        self._embedder = try_embedder()
        self._done.set()

    def get(self, timeout: float = 60.0) -> Embedder | None:
        """The embedder, or None when it failed to load (or is still loading after `timeout`)."""
        self.start()
        self._done.wait(timeout)
        return self._embedder
