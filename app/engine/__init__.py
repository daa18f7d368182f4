"""The engine layer: what a stored message *means*.

Promotion turns a persisted message into an ``EngineMessage`` with an explicit ``kind``. This is the only
place that reads ``metadata.runtimeKind``. Pure code: no database, no provider formats, no clock reads.
"""
