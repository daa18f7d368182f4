"""Tool-call ids re-keyed for one provider: deterministic, collision-free, the same for call and result.

An id that already fits the provider (charset and length) is kept as it is, so ids a provider issued itself
round-trip untouched. Any other id becomes its cleaned prefix plus a hash of the original, so the same
history always gives the same payload and two different ids never meet. Never used for anything but ids.
"""

import hashlib
import re
from dataclasses import dataclass, field

from app.projections.types import Repair

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SAFE_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


@dataclass(slots=True)
class ToolIdMap:
    max_length: int
    provider: str
    _mapped: dict[str, str] = field(default_factory=dict)
    _taken: set[str] = field(default_factory=set)

    def __call__(self, original: str) -> str:
        if original in self._mapped:
            return self._mapped[original]
        candidate = original
        if not _fits(original, self.max_length) or original in self._taken:
            candidate = self._hashed(original)
        self._mapped[original] = candidate
        self._taken.add(candidate)
        return candidate

    def repairs(self) -> list[Repair]:
        changed = [(old, new) for old, new in self._mapped.items() if old != new]
        return [
            Repair("tool-call-id", f"{self.provider}: tool call id {old[:60]!r} sent as {new!r}")
            for old, new in changed
        ]

    def _hashed(self, original: str) -> str:
        digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()
        stem = _UNSAFE.sub("_", original)
        for width in range(10, len(digest) + 1, 2):
            keep = max(self.max_length - width - 1, 0)
            candidate = f"{stem[:keep]}_{digest[:width]}" if keep else digest[: self.max_length]
            if candidate not in self._taken:
                return candidate
        raise AssertionError("sha256 prefixes of distinct ids cannot all collide")


def _fits(candidate: str, max_length: int) -> bool:
    return 0 < len(candidate) <= max_length and not _UNSAFE.search(candidate)


def all_kept(ids: list[str], max_length: int) -> bool:
    """Whether a ``ToolIdMap`` for ``max_length`` would keep every one of ``ids`` as it is: it does exactly when
    each fits, since only a hashed id can take the text of another. Checked over the whole list at once (no
    call per id), so a history of ids a provider issued itself costs next to nothing to check."""
    joined = "".join(ids)
    return (
        joined.isascii()
        and not joined.encode().translate(None, _SAFE_BYTES)
        and "" not in ids
        and max(map(len, ids), default=0) <= max_length
    )
