"""Product page rendering."""

_CACHE: dict[int, str] = {}


def render_product(product: dict, lang: str) -> str:
    name = product["names"].get(lang) or product["names"]["en"]
    return f"<h1>{name}</h1><p>{product['price']}</p>"


def cached_render(product: dict, lang: str) -> str:
    key = product["id"]
    if key not in _CACHE:
        _CACHE[key] = render_product(product, lang)
    return _CACHE[key]
