"""Context management: how full a session's model context is, and how to make room.

Window resolution, token accounting, compaction planning and pruning planning are pure functions over
engine messages. Only two client modules talk to the network: ``model_server`` (a model server's
``/v1/models``) and ``summarizer`` (its ``/v1/chat/completions``). Nothing here touches the database or
reads the clock: the store loads and writes, the API wires, and callers pass ``now`` in.
"""
