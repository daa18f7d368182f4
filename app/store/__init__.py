"""The storage layer: the only place with SQL.

Repositories are named for their aggregate and scoped by tenant and session in every query. They never
commit: the caller's unit of work (one transaction per request) does. Rows come back as core values
(``PersistedMessage``) or plain dicts, never ORM objects, so hot reads stay cheap.
"""
