"""Product page rendering."""


def render_product(product: dict, lang: str) -> str:
    name = product["names"].get(lang) or product["names"]["en"]
    return f"<h1>{name}</h1><p>{product['price']}</p>"
