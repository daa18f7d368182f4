"""Why message content is ``json`` and not ``jsonb``: reading a 10,000-message window both ways.

One database, two tables holding the same rows of ``bench.dataset`` (content ``jsonb`` as before, content
``json`` as now; metadata ``jsonb`` in both), read in turns so both see the same machine: the fetch alone,
decoded as the service decodes (``orjson.loads`` for ``jsonb``; ``lossless_json.loads`` for ``json``, the
wrapper that falls back to the standard library for an unpaired surrogate), and the writes (one
``executemany`` of the window). Medians.
"""

import asyncio
import time

import asyncpg
import orjson

from app import lossless_json
from bench.dataset import session_rows
from bench.harness import arguments, database, median, ms, plain_dsn

TABLES = {"jsonb": "content_jsonb", "json": "content_json"}


async def main(database_url: str | None, count: int, repeat: int) -> None:
    async with database(database_url) as url:
        connection = await asyncpg.connect(plain_dsn(url))
        await connection.set_type_codec("jsonb", schema="pg_catalog", encoder=str, decoder=orjson.loads, format="text")
        await connection.set_type_codec(
            "json", schema="pg_catalog", encoder=str, decoder=lossless_json.loads, format="text"
        )
        rows = [
            (row[2], orjson.dumps(row[7]).decode(), orjson.dumps(row[8]).decode()) for row in session_rows("s", count)
        ]
        writes: dict[str, list[float]] = {kind: [] for kind in TABLES}
        reads: dict[str, list[float]] = {kind: [] for kind in TABLES}
        for kind, table in TABLES.items():
            await connection.execute(
                f"CREATE TABLE {table} (seq bigint PRIMARY KEY, content {kind} NOT NULL, metadata jsonb NOT NULL)"
            )
        for _ in range(3):
            for kind, table in TABLES.items():
                await connection.execute(f"TRUNCATE {table}")
                started = time.perf_counter()
                await connection.executemany(f"INSERT INTO {table} VALUES ($1, $2, $3)", rows)
                writes[kind].append(time.perf_counter() - started)
        for table in TABLES.values():
            await connection.execute(f"VACUUM ANALYZE {table}")
        for round_ in range(repeat + 2):
            for kind, table in TABLES.items():
                started = time.perf_counter()
                await connection.fetch(f"SELECT seq, content, metadata FROM {table} ORDER BY seq")
                if round_ >= 2:
                    reads[kind].append(time.perf_counter() - started)
        sizes = {
            kind: await connection.fetchval("SELECT pg_total_relation_size($1)", table)
            for kind, table in TABLES.items()
        }
        await connection.close()
    for kind in TABLES:
        print(
            f"content {kind}: read {ms(median(reads[kind]))}, write {ms(median(writes[kind]))},"
            f" {sizes[kind] / 2**20:.1f} MiB on disk ({count:,} messages)"
        )
    print(f"jsonb / json: reads {median(reads['jsonb']) / median(reads['json']):.2f}x,", end=" ")
    print(f"writes {median(writes['jsonb']) / median(writes['json']):.2f}x")


if __name__ == "__main__":
    parser = arguments(__doc__ or "")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.database_url, options.messages, options.repeat))
