"""Runs (opencode's Turn): one request's settings, amended with usage and result when it ends."""

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.errors import Conflict, NotFound
from app.lossless_json import same_fields
from app.services.size_limits import check_merged_metadata, check_row_fields
from app.settings import Settings
from app.store.database import Database
from app.store.messages import MessageRepository, PageBudget
from app.store.metadata import merged_in_python
from app.store.records import RunRecord
from app.store.runs import RunRepository
from app.store.sessions import SessionRepository
from app.store.storable import refuse_unaddressable


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


async def create_run(
    database: Database,
    settings: Settings,
    tenant_id: str,
    session_id: str,
    run_id: str,
    run_settings: dict[str, Any],
) -> tuple[RunRecord, bool]:
    """``run_settings`` are keyed by their wire names (one word each), so a refusal names the field. The run
    and whether this request created it: a run of this id with these settings is a retry whose first try
    landed (its answer lost), answered with the stored run, as a retried append is; other settings are 409."""
    refuse_unaddressable(run_id, "id")
    check_row_fields(run_settings, settings)
    async with database.transaction(locking=(tenant_id, session_id)) as connection:
        if await MessageRepository(connection, tenant_id).lock_session(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        runs = RunRepository(connection, tenant_id)
        row = await runs.create(session_id, run_id, run_settings)
        stored = await runs.get(session_id, run_id) if row is None else None
    if row is not None:
        return row, True
    if stored is not None and same_fields(stored, run_settings):
        return stored, False
    raise Conflict(f"id: a run '{run_id}' already exists in this session with other settings", field="id")


async def get_run(database: Database, tenant_id: str, session_id: str, run_id: str) -> RunRecord:
    async with database.reading() as connection:
        row = await RunRepository(connection, tenant_id).get(session_id, run_id)
    return _found(row, session_id, run_id)


async def amend_run(
    database: Database, settings: Settings, tenant_id: str, session_id: str, run_id: str, changes: dict[str, Any]
) -> RunRecord:
    """Replaces ``usage`` and ``result``, merges ``metadata``; no changes reads the run as it is. The run
    as amended (its merged metadata too) is held to the limits a new run is."""
    check_row_fields(changes, settings)
    async with database.transaction() as connection:
        repository = RunRepository(connection, tenant_id)
        current = _found(await repository.get(session_id, run_id, lock=bool(changes)), session_id, run_id)
        if not changes:
            return current
        if "metadata" in changes:
            check_merged_metadata(merged_in_python(current.metadata, changes["metadata"]), "metadata", settings)
        row = await repository.amend(session_id, run_id, changes)
    return _found(row, session_id, run_id)


@dataclass(frozen=True, slots=True)
class RunPage:
    runs: list[RunRecord]
    """In the order asked for."""
    has_more: bool


async def page_runs(
    database: Database,
    tenant_id: str,
    session_id: str,
    *,
    limit: int,
    after: tuple[datetime, str] | None,
    before: tuple[datetime, str] | None,
    newest_first: bool,
    budget: PageBudget,
) -> RunPage:
    """A session's runs by creation, walked from a key like the message listing: ``after`` towards newer,
    ``before`` towards older, from the oldest (or with ``newest_first`` the newest) without one."""
    backwards = before is not None or (after is None and newest_first)
    async with database.reading() as connection:
        if await SessionRepository(connection, tenant_id).get(session_id) is None:
            raise NotFound(f"session '{session_id}' does not exist")
        rows, has_more = await RunRepository(connection, tenant_id).page(
            session_id, limit=limit, after=after, before=before, backwards=backwards, budget=budget
        )
    if backwards != newest_first:
        rows.reverse()
    return RunPage(rows, has_more)


def _found(row: RunRecord | None, session_id: str, run_id: str) -> RunRecord:
    if row is None:
        raise NotFound(f"run '{run_id}' does not exist in session '{session_id}'")
    return row
