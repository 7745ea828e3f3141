"""Form validation."""


def require(form: dict[str, str], field: str, errors: list[str] = []) -> list[str]:
    """Append an error for an empty ``field`` to ``errors`` and return the list."""
    if not form.get(field, "").strip():
        errors.append(f"{field} is required")
    return errors


def validate_signup(form: dict[str, str]) -> list[str]:
    errors = require(form, "email")
    return require(form, "password", errors)
