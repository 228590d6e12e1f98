"""How many messages wait in a broker queue (Redis lists or RabbitMQ queues)."""

from __future__ import annotations

from kombu import Connection

__all__ = ["queue_depths"]

# kombu's Redis transport keeps one list per priority step: "<queue>", "<queue>\\x06\\x163", ...
_REDIS_PRIORITY_SUFFIXES = ["", "\x06\x163", "\x06\x166", "\x06\x169"]


def queue_depths(broker_url: str, queues: list[str], timeout: float = 3.0) -> dict[str, int | None]:
    """Messages waiting (not yet delivered) per queue; None where the broker could not say."""
    out: dict[str, int | None] = {}
    with Connection(broker_url, connect_timeout=timeout) as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
        channel = conn.default_channel
        if broker_url.startswith(("redis://", "rediss://", "redis+socket://")):
            client = channel.client
            for q in queues:
                out[q] = sum(int(client.llen(q + suffix)) for suffix in _REDIS_PRIORITY_SUFFIXES)
        else:
            for q in queues:
                try:
                    out[q] = int(channel.queue_declare(queue=q, passive=True).message_count)
                except Exception:  # the queue does not exist yet: nothing is waiting in it
                    out[q] = 0
                    channel = conn.channel()
    return out
