"""Who a service acts for, as the services need it: the tenant, whether it may write a kind, and whether it
may write the metadata it asks to."""

from typing import Any, Protocol

from app.engine.kinds import Kind


class Caller(Protocol):
    @property
    def tenant_id(self) -> str: ...

    def may_write_kind(self, kind: Kind) -> bool:
        """Reserved runtime kinds (compaction records, reminders) are the runtime's to write."""
        ...

    def require_may_set(self, metadata: dict[str, Any] | None, where: str) -> None:
        """Refuses, naming the field under ``where``, metadata only the runtime may write (``compactedAt``
        marks pruning)."""
        ...
