"""Who a service acts for, as the services need it: the tenant, and whether it may write a kind."""

from typing import Protocol

from app.engine.kinds import Kind


class Caller(Protocol):
    @property
    def tenant_id(self) -> str: ...

    def may_write_kind(self, kind: Kind) -> bool:
        """Reserved runtime kinds (compaction records, reminders) are the runtime's to write."""
        ...
