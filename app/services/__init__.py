"""The use cases: one module each, between the routes and the store.

A service function loads what the pure core needs in one snapshot (``Database.reading``), calls the core,
and writes in one short transaction (``Database.transaction``). It never holds a connection across a call to
another server (a model server's window lookup, the summarizer): it reads, lets the connection go, calls, and
writes afterwards. It takes plain values and the core's types, raises ``app.errors``, and never imports
``app.api``: the wire (bodies, cursors, headers) stays with the routes.
"""
