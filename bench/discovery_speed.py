"""Discovery speed at 1k, 10k and 100k tools (synthetic descriptions).

    .venv/bin/python bench/discovery_speed.py [--sizes 1000,10000,100000] [--queries 100]

For each size: ingest rate (tools/s, embeddings batched, into Postgres with the HNSW index),
p50/p95 query time split into embedding time and database time (hybrid search), and recall@10
of the HNSW index against an exact scan of the same vectors.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchdb import bench_database  # noqa: E402

VERBS = ["convert", "upload", "download", "summarise", "translate", "resize", "validate", "monitor", "schedule",
         "archive", "encrypt", "compress", "index", "search", "render", "parse", "deploy", "backup", "restore",
         "scan", "label", "classify", "merge", "split", "sync", "notify", "measure", "clean", "export", "import"]
OBJECTS = ["invoices", "photos", "log files", "spreadsheets", "emails", "videos", "database rows", "web pages",
           "pdf reports", "audio clips", "source code", "calendar events", "tickets", "contracts", "sensor data",
           "chat messages", "product images", "customer records", "dns zones", "container images"]
PLACES = ["in an S3 bucket", "on a local disk", "from a REST API", "in Google Drive", "over FTP", "in Postgres",
          "in a git repository", "from an RSS feed", "on a Kubernetes cluster", "in Slack", "from a webcam",
          "in a data lake", "on a remote server", "in Dropbox", "from a message queue"]
STYLES = ["quickly", "in batches", "on a schedule", "with retries", "incrementally", "securely", "in parallel",
          "with a progress report", "and keep a history", "and email the result"]


def synthetic(n: int, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        v, o, p, s = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(PLACES), rng.choice(STYLES)
        out.append((f"{v}_{o.split()[0]}_{i}", f"{v.capitalize()} {o} {p} {s}."))
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()

    from psycopg.types.json import Jsonb

    from registry.db import connect
    from registry.definitions import ToolDefinition
    from registry.discovery import refresh_search, search
    from registry.embeddings import get_embedder, to_pgvector

    embedder = get_embedder()
    rng = random.Random(11)
    rows = []
    with bench_database() as url, connect(url) as conn:
        for size in [int(x) for x in args.sizes.split(",")]:
            conn.execute("TRUNCATE tools")
            tools = synthetic(size, rng)
            definitions = [ToolDefinition(name=name, description=desc, category="synthetic", actions=["run"],
                                          run_file="x.py") for name, desc in tools]
            print(f"{size} tools: ingesting ...", flush=True)
            started = time.perf_counter()
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO tools (name, description, category, actions, run_file, module) "
                    "VALUES (%s, %s, 'synthetic', %s, 'x.py', '')",
                    [(d.name, d.description, Jsonb(["run"])) for d in definitions])
            step = max(1000, size // 10)
            for start in range(0, size, step):
                refresh_search(conn, definitions[start:start + step], embedder)
                print(f"  {min(size, start + step)}/{size} embedded and indexed", flush=True)
            ingest_s = time.perf_counter() - started
            conn.execute("ANALYZE tools")
            queries = [f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(PLACES)}" for _ in range(args.queries)]
            embed_ms, db_ms, total_ms = [], [], []
            for q in queries:
                t0 = time.perf_counter()
                result = search(conn, q, k=10, embedder=embedder, use_track_record=True)
                total_ms.append((time.perf_counter() - t0) * 1000)
                embed_ms.append(result.embed_ms)
                db_ms.append(result.db_ms)
            # recall@10 of the HNSW index against an exact scan
            hits = 0
            for q in queries:
                vec = to_pgvector(embedder.embed([q])[0])
                conn.execute("SET hnsw.ef_search = 100")
                approx = [r["name"] for r in conn.execute(
                    "SELECT name FROM tools ORDER BY embedding <=> %s::vector LIMIT 10", (vec,)).fetchall()]
                with conn.transaction():
                    conn.execute("SET LOCAL enable_indexscan = off")
                    exact = [r["name"] for r in conn.execute(
                        "SELECT name FROM tools ORDER BY embedding <=> %s::vector LIMIT 10", (vec,)).fetchall()]
                hits += len(set(approx) & set(exact))
            recall = hits / (10 * len(queries))
            rows.append((size, size / ingest_s, pct(total_ms, 50), pct(total_ms, 95), statistics.median(embed_ms),
                         pct(embed_ms, 95), statistics.median(db_ms), pct(db_ms, 95), recall))
    print()
    print(f"{'tools':>7} {'ingest/s':>9} {'p50 ms':>7} {'p95 ms':>7} {'embed p50':>9} {'embed p95':>9} "
          f"{'db p50':>7} {'db p95':>7} {'HNSW recall@10':>14}")
    for r in rows:
        print(f"{r[0]:>7} {r[1]:9.0f} {r[2]:7.1f} {r[3]:7.1f} {r[4]:9.1f} {r[5]:9.1f} {r[6]:7.1f} {r[7]:7.1f} "
              f"{r[8]:14.3f}")


if __name__ == "__main__":
    main()
