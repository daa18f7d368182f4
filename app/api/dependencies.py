"""Request-scoped dependencies: the database, the settings and the caller."""

from typing import Annotated

from fastapi import Depends, Request

from app.api.auth import Principal, principal_of
from app.settings import Settings
from app.store.database import Database


# Async on purpose: FastAPI runs a plain ``def`` dependency in its thread pool, a thread hop per request
# for an attribute read.
async def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


async def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_principal(request: Request) -> Principal:
    return principal_of(request.scope)


DatabaseDep = Annotated[Database, Depends(get_database)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
