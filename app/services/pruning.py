"""Pruning: marking old tool results ``compactedAt`` (their content is kept) so the model view clears them."""

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from app.context.pruning import PrunePlan, compacted_at_patch, plan_prune
from app.errors import NotFound
from app.projections.types import ProjectionContext
from app.services.context_config import prune_policy
from app.services.heavy_work import content_weight, run_weighed
from app.settings import Settings
from app.store.database import Database
from app.store.events import Notice, NoticeKind, notify
from app.store.messages import MessageRepository

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PruneAsk:
    """Thresholds left as None come from the settings."""

    session_id: str
    ctx: ProjectionContext
    dry_run: bool = False
    protect_user_turns: int | None = None
    protect_tool_tokens: int | None = None
    minimum_savings_tokens: int | None = None
    protected_tools: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Pruned:
    plan: PrunePlan
    marked_message_ids: list[str]


async def prune(database: Database, settings: Settings, tenant_id: str, ask: PruneAsk, now: datetime) -> Pruned:
    """Plans on the live history and marks in the same transaction, under the session's append lock, so
    the plan is made on exactly the history it marks."""
    defaults = prune_policy(settings)
    policy = dataclasses.replace(
        defaults,
        protect_user_turns=_given(ask.protect_user_turns, defaults.protect_user_turns),
        protect_tool_tokens=_given(ask.protect_tool_tokens, defaults.protect_tool_tokens),
        minimum_savings_tokens=_given(ask.minimum_savings_tokens, defaults.minimum_savings_tokens),
        protected_tool_names=_given(ask.protected_tools, defaults.protected_tool_names),
    )
    async with database.transaction() as connection:
        repository = MessageRepository(connection, tenant_id)
        if await repository.lock_session(ask.session_id) is None:
            raise NotFound(f"session '{ask.session_id}' does not exist")
        history = await repository.live_history(ask.session_id)
        # Planning a long history takes a while: in a worker thread once it is large, so the event loop goes
        # on serving other requests (the session stays locked: the plan is still made on what it marks).
        weight = content_weight(message.content for message in history)
        plan = await run_weighed(weight, plan_prune, history, policy, ask.ctx)
        marked: list[str] = []
        if plan.applied and not ask.dry_run:
            stamp = compacted_at_patch(now)["compactedAt"]
            marked = await repository.mark_compacted(ask.session_id, list(plan.message_ids), stamp)
            if marked:
                details = {"count": len(marked), "compactedAt": stamp}
                await notify(connection, Notice(tenant_id, ask.session_id, NoticeKind.PRUNE, 0, 0, details))
    return Pruned(plan, marked)


def _given(value: T | None, default: T) -> T:
    return default if value is None else value
