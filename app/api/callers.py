"""Who a request's caller is, for what one caller may hold at once (``app.api.streaming.StreamLimits``): the
tenant its API key speaks for, or, with auth off (every caller is then the same local principal), the client's
address. Behind a proxy that address is the proxy's unless the server is told to trust forwarded headers
(uvicorn's ``--proxy-headers`` with ``--forwarded-allow-ips``)."""

from starlette.types import Scope

from app.api.auth import PRINCIPAL_SCOPE_KEY, Principal


def caller_by_tenant(scope: Scope) -> str:
    principal: Principal | None = scope.get(PRINCIPAL_SCOPE_KEY)
    return f"tenant {principal.tenant_id}" if principal is not None else caller_by_address(scope)


def caller_by_address(scope: Scope) -> str:
    client = scope.get("client")
    return f"address {client[0]}" if client else "address unknown"
