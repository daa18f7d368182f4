"""Who is calling: a tenant and a role. With no API keys configured, auth is off (local use) and every
caller is the ``runtime`` of the ``default`` tenant; the service says so at start."""

from dataclasses import dataclass
from typing import Literal

from starlette.requests import Request

from app.engine.kinds import RESERVED_RUNTIME_KINDS, Kind
from app.errors import Forbidden

AccessRole = Literal["reader", "writer", "runtime"]
DEFAULT_TENANT = "default"


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    role: AccessRole

    def require_writer(self) -> None:
        if self.role == "reader":
            raise Forbidden("This key can read but not write.")

    def require_runtime(self, action: str) -> None:
        if self.role != "runtime":
            raise Forbidden(f"Only a runtime key may {action}.")

    def may_write_kind(self, kind: Kind) -> bool:
        return self.role == "runtime" or kind not in RESERVED_RUNTIME_KINDS


LOCAL_PRINCIPAL = Principal(tenant_id=DEFAULT_TENANT, role="runtime")


class Authenticator:
    """Resolves the caller of a request. With no keys configured every caller is ``LOCAL_PRINCIPAL``."""

    @property
    def enabled(self) -> bool:
        return False

    async def authenticate(self, request: Request) -> Principal:
        return LOCAL_PRINCIPAL
