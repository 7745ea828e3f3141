"""The profile page."""

from accounts.users import find_user


def profile_title(user_id: int) -> str:
    user = find_user(user_id)
    if user is None:
        return "Unknown user"
    return f"{user['name']} <{user['email']}>"
