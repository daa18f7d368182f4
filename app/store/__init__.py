"""The storage layer: the only place with SQL.

Repositories are named for their aggregate and scoped by tenant and session in every query. They never
commit: the caller's unit of work (one short transaction) does. Rows come back as core values
(``EngineMessage``, ``PersistedMessage``) or typed records (``app.store.records``), never ORM objects or
dicts, so hot reads stay cheap and a column is named in one place.
"""
