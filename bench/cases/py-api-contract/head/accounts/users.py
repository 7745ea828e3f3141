"""User lookup."""

from dataclasses import dataclass


@dataclass(frozen=True)
class User:
    id: int
    name: str
    email: str


_USERS = {1: User(id=1, name="Ada", email="ada@example.com")}


def find_user(user_id: int) -> User | None:
    return _USERS.get(user_id)
