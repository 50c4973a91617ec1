"""PostgreSQL stores (beyond one machine): sessions and long-term memory shared by many app processes.

| module | job |
|---|---|
| `cluster` | a throwaway server from the system's packages, in a temp dir (tests, CI, benchmark, demo) |
| `database` | `PostgresDatabase`: a connection per thread, transactions, errors in Russian |
| `session_store` | `PostgresSessionStore`: the `SessionStore` interface, advisory lock per session |
| `memory_store` | `PostgresMemoryStore`: the `MemoryStore` interface, Russian full-text search |

Importing this package imports nothing heavy: psycopg is loaded only by `database` and the stores,
i.e. only when a `postgresql://` URL is really used.
"""
