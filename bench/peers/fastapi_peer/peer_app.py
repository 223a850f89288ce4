"""fastapi-users as a peer in make bench: the database strategy (opaque access tokens, one row
each, looked up on every request), Argon2id at the service's cost. fastapi-users has no refresh
tokens. Sign-in takes the service's JSON body ({"email", "password"}) instead of the OAuth2 form,
through fastapi-users' own authenticate and login. Configured from PEER_* variables."""
import os
import uuid

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi_users import BaseUserManager, FastAPIUsers, UUIDIDMixin, schemas
from fastapi_users.authentication import AuthenticationBackend, BearerTransport
from fastapi_users.authentication.strategy.db import AccessTokenDatabase, DatabaseStrategy
from fastapi_users.db import SQLAlchemyBaseUserTableUUID, SQLAlchemyUserDatabase
from fastapi_users.password import PasswordHelper
from fastapi_users_db_sqlalchemy.access_token import SQLAlchemyAccessTokenDatabase, SQLAlchemyBaseAccessTokenTableUUID
from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

DATABASE_URL = os.environ["PEER_DATABASE_URL"].replace("postgresql://", "postgresql+asyncpg://", 1)
SECRET = os.environ["PEER_SECRET"]


class Base(DeclarativeBase):
    pass


class User(SQLAlchemyBaseUserTableUUID, Base):
    pass


class AccessToken(SQLAlchemyBaseAccessTokenTableUUID, Base):
    pass


engine = create_async_engine(DATABASE_URL, pool_size=10)
sessions = async_sessionmaker(engine, expire_on_commit=False)
password_helper = PasswordHelper(PasswordHash((Argon2Hasher(
    memory_cost=int(os.environ.get("PEER_ARGON2_MEMORY_KIB", "19456")),
    time_cost=int(os.environ.get("PEER_ARGON2_ITERATIONS", "2")),
    parallelism=int(os.environ.get("PEER_ARGON2_PARALLELISM", "1"))),)))


async def get_session():
    async with sessions() as session:
        yield session


async def get_user_db(session: AsyncSession = Depends(get_session)):
    yield SQLAlchemyUserDatabase(session, User)


async def get_token_db(session: AsyncSession = Depends(get_session)):
    yield SQLAlchemyAccessTokenDatabase(session, AccessToken)


class UserManager(UUIDIDMixin, BaseUserManager[User, uuid.UUID]):
    reset_password_token_secret = SECRET
    verification_token_secret = SECRET


async def get_user_manager(user_db=Depends(get_user_db)):
    yield UserManager(user_db, password_helper)


def get_strategy(token_db: AccessTokenDatabase[AccessToken] = Depends(get_token_db)) -> DatabaseStrategy:
    return DatabaseStrategy(token_db, lifetime_seconds=900)


backend = AuthenticationBackend(name="db", transport=BearerTransport(tokenUrl="v1/auth/sign-in"),
                                get_strategy=get_strategy)
users = FastAPIUsers[User, uuid.UUID](get_user_manager, [backend])
current_user = users.current_user(active=True)
app = FastAPI()


class Credentials(BaseModel):
    email: str
    password: str


class Form:
    """What fastapi-users' authenticate reads of an OAuth2 password form."""

    def __init__(self, username, password):
        self.username, self.password = username, password


@app.get("/healthz")
async def healthz():
    return {"status": "ok"}


@app.post("/v1/auth/sign-in")
async def sign_in(body: Credentials, manager: UserManager = Depends(get_user_manager),
                  strategy: DatabaseStrategy = Depends(get_strategy)):
    user = await manager.authenticate(Form(body.email, body.password))
    if user is None or not user.is_active:
        raise HTTPException(status_code=400, detail="LOGIN_BAD_CREDENTIALS")
    response = await backend.login(strategy, user)
    return response


@app.get("/v1/me")
async def me(user: User = Depends(current_user)):
    return {"data": {"uid": str(user.id), "email": user.email}}


async def setup(email, password):
    """Creates the tables and the bench user."""
    async with engine.begin() as connection:
        await connection.run_sync(Base.metadata.create_all)
    async with sessions() as session:
        manager = UserManager(SQLAlchemyUserDatabase(session, User), password_helper)
        await manager.create(schemas.BaseUserCreate(email=email, password=password))


if __name__ == "__main__":
    import asyncio
    import sys

    asyncio.run(setup(sys.argv[1], sys.argv[2]))
