"""The projection layer: one view of the engine messages.

Each view is a pure function ``(engine messages, ProjectionContext) -> Projection``. Trimming, stubbing and
choosing the live history happen here, never in a serializer. Never imports ``store``, ``api`` or ``providers``.
"""
