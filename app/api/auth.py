"""Who is calling: a tenant and a role, resolved from ``Authorization: Bearer <key>``.

``Authentication`` is a pure ASGI middleware that resolves the caller from the header alone, before anything
reads the body: a request without a valid key is answered 401 without a byte of its body being received, so
an anonymous caller cannot make the service buffer and parse a large body. The principal travels in the
ASGI scope to the routes (``principal_of``).

Keys are configured by environment (``PROJECTOR_API_KEYS``) or file (``PROJECTOR_API_KEYS_FILE``) and held only
as SHA-256 digests; a presented key is hashed and compared in constant time against every configured digest.
With no keys configured, auth is off (local use) and every caller is the ``runtime`` of the ``default`` tenant;
the service says so at start.

This module must never log, echo or keep a presented key or a configured secret: errors name the entry's
position in the list, not its value.
"""

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.problems import problem
from app.engine.kinds import RESERVED_RUNTIME_KINDS, Kind
from app.errors import Forbidden, Unauthorized
from app.settings import Settings

AccessRole = Literal["reader", "writer", "runtime"]
DEFAULT_TENANT = "default"
REALM = "projector"


ROLE_RANK: dict[AccessRole, int] = {"reader": 0, "writer": 1, "runtime": 2}
"""Each role may do all that the one below it may."""

RUNTIME_ONLY_METADATA = ("compactedAt",)
"""Metadata only the runtime may write or amend: ``compactedAt`` marks a pruned tool result (the views stub it,
analytics count it as pruned), and pruning is its job."""


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    role: AccessRole
    redacts_exports: bool = False
    """Exports are redacted whatever the request asks (reader keys, unless the operator turns it off)."""

    def may_act_as(self, role: AccessRole) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]

    def require_writer(self) -> None:
        if self.role == "reader":
            raise Forbidden("This key can read but not write.")

    def require_runtime(self, action: str) -> None:
        if self.role != "runtime":
            raise Forbidden(f"Only a runtime key may {action}.")

    def may_write_kind(self, kind: Kind) -> bool:
        return self.role == "runtime" or kind not in RESERVED_RUNTIME_KINDS

    def require_may_set(self, metadata: dict[str, Any] | None, where: str) -> None:
        """Refuses, naming the field (``where`` is the metadata's), metadata that only the runtime may write,
        in an append as in an amendment."""
        if self.role == "runtime" or not metadata:
            return
        for key in RUNTIME_ONLY_METADATA:
            if key in metadata:
                raise Forbidden(f"{where}.{key}: only a runtime key may set it (pruning)", field=f"{where}.{key}")


LOCAL_PRINCIPAL = Principal(tenant_id=DEFAULT_TENANT, role="runtime")


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A configured key: the SHA-256 digest of its secret (never the secret) and whom it speaks for."""

    digest: bytes
    tenant_id: str
    role: AccessRole

    def __repr__(self) -> str:
        return f"ApiKey(tenant_id={self.tenant_id!r}, role={self.role!r})"


def digest_of(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


class _KeyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    key: str | None = Field(default=None, min_length=16, repr=False)
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{64}$")
    tenant: str = Field(min_length=1, max_length=128)
    role: AccessRole

    @model_validator(mode="after")
    def _one_secret(self) -> "_KeyEntry":
        if (self.key is None) == (self.sha256 is None):
            raise ValueError('give exactly one of "key" and "sha256"')
        return self

    def to_api_key(self) -> ApiKey:
        digest = digest_of(self.key) if self.key is not None else bytes.fromhex(self.sha256 or "")
        return ApiKey(digest=digest, tenant_id=self.tenant, role=self.role)


_ENTRIES = TypeAdapter(list[_KeyEntry])


class ApiKeyConfigError(ValueError):
    """Raised at start for a malformed key list; the message never contains a secret."""


def parse_api_keys(document: str, source: str) -> tuple[ApiKey, ...]:
    """Reads a JSON list of ``{"key" | "sha256", "tenant", "role"}``. Plaintext keys are hashed at once."""
    try:
        entries = _ENTRIES.validate_json(document)
    except ValidationError as error:
        problems = "; ".join(
            f"[{'.'.join(str(part) for part in item['loc'])}] {item['msg']}" for item in error.errors()
        )
        raise ApiKeyConfigError(f"{source}: {problems}") from None
    keys = tuple(entry.to_api_key() for entry in entries)
    if len({key.digest for key in keys}) != len(keys):
        raise ApiKeyConfigError(f"{source}: the same key is listed twice")
    return keys


def load_api_keys(settings: Settings) -> tuple[ApiKey, ...]:
    """Keys from ``api_keys`` and ``api_keys_file`` together; none at all means auth is off."""
    keys: list[ApiKey] = []
    if settings.api_keys is not None and settings.api_keys.get_secret_value().strip():
        keys.extend(parse_api_keys(settings.api_keys.get_secret_value(), "PROJECTOR_API_KEYS"))
    if settings.api_keys_file is not None:
        path = Path(settings.api_keys_file)
        try:
            document = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8"
            raise ApiKeyConfigError(f"PROJECTOR_API_KEYS_FILE: cannot read {path}: {reason}") from None
        keys.extend(parse_api_keys(document, str(path)))
    if len({key.digest for key in keys}) != len(keys):
        raise ApiKeyConfigError("the same key is listed in both PROJECTOR_API_KEYS and PROJECTOR_API_KEYS_FILE")
    return tuple(keys)


class AuthenticationRequired(Unauthorized):
    """401 with the RFC 6750 challenge, so clients know to send a bearer key."""

    def __init__(self, detail: str, *, invalid: bool) -> None:
        super().__init__(detail)
        self.challenge = f'Bearer realm="{REALM}"' + (', error="invalid_token"' if invalid else "")


class Authenticator:
    """Resolves the caller of a request. With no keys configured every caller is ``LOCAL_PRINCIPAL``."""

    def __init__(self, keys: Sequence[ApiKey] = (), *, redact_reader_exports: bool = True) -> None:
        self._keys = tuple(keys)
        self._redact_reader_exports = redact_reader_exports

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def identify(self, authorization: str | None) -> Principal:
        """The principal for an ``Authorization`` header value; raises ``AuthenticationRequired``."""
        if not self._keys:
            return LOCAL_PRINCIPAL
        if not authorization:
            raise AuthenticationRequired("Send an API key: Authorization: Bearer <key>.", invalid=False)
        scheme, _, secret = authorization.strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            raise AuthenticationRequired("Authorization must be 'Bearer <key>'.", invalid=True)
        presented = digest_of(secret)
        # Compare against every key without stopping early, so timing says nothing about which digest
        # (or how much of one) matched.
        found: ApiKey | None = None
        for key in self._keys:
            if hmac.compare_digest(presented, key.digest):
                found = key
        if found is None:
            raise AuthenticationRequired("The API key is not valid.", invalid=True)
        redacts = found.role == "reader" and self._redact_reader_exports
        return Principal(tenant_id=found.tenant_id, role=found.role, redacts_exports=redacts)


OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def declare_bearer_auth(openapi: dict[str, Any]) -> None:
    """Marks every operation but the open probes as needing ``Authorization: Bearer <key>``."""
    openapi.setdefault("components", {}).setdefault("securitySchemes", {})["apiKey"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key configured in PROJECTOR_API_KEYS; its role decides what it may do.",
    }
    for path, operations in openapi.get("paths", {}).items():
        if path in OPEN_PATHS:
            continue
        for operation in operations.values():
            operation["security"] = [{"apiKey": []}]


PRINCIPAL_SCOPE_KEY = "projector.principal"


def principal_of(scope: Scope) -> Principal:
    """The caller ``Authentication`` resolved for this request."""
    principal: Principal = scope[PRINCIPAL_SCOPE_KEY]
    return principal


class Authentication:
    """Puts the caller in the scope, or answers 401 with the RFC 6750 challenge, before the body is read.
    ``open_paths`` (probes, the API document) and whatever lies under ``open_prefixes`` (the docs' and the
    viewer's pages and assets) need no key."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator,
        open_paths: frozenset[str],
        open_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.open_paths = open_paths
        self.open_prefixes = open_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        authorization = next((value for name, value in scope["headers"] if name == b"authorization"), None)
        try:
            principal = self.authenticator.identify(authorization.decode("latin-1") if authorization else None)
        except AuthenticationRequired as refused:
            path: str = scope["path"]
            if path in self.open_paths or path.startswith(self.open_prefixes):
                await self.app(scope, receive, send)
                return
            response = problem(refused, Request(scope))
            response.headers["WWW-Authenticate"] = refused.challenge
            await response(scope, receive, send)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal  # in place: outer middleware read what the router adds
        await self.app(scope, receive, send)
