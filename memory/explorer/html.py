"""HTML built from values, escaped by construction.

`Markup` is text already known to be HTML; everything else that reaches `h()` or `join()` is
escaped on the way in (attribute values too). Pages are built only with these functions, so no
stored atom, memory text or query argument can become markup: there is no format string into
which a raw value could be spliced."""

from __future__ import annotations

import html as _html
from contextvars import ContextVar
from typing import Iterable, Mapping
from urllib.parse import urlencode

# Elements that take no closing tag.
VOID = frozenset({"br", "hr", "img", "input", "link", "meta"})


class Markup(str):
    """A string that is HTML already (made only by this module's builders)."""

    __slots__ = ()

    def __add__(self, other: object) -> "Markup":
        return Markup(str.__add__(self, escape(other)))

    def __radd__(self, other: object) -> "Markup":
        return Markup(str.__add__(escape(other), self))


Child = "Markup | str | int | float | None | Iterable"


def escape(value: object) -> Markup:
    """Any value as HTML text: Markup passes, None is empty, everything else is escaped (quotes included)."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("")
    return Markup(_html.escape(str(value), quote=True))


def join(children: Iterable) -> Markup:
    """Children in order: nested iterables are flattened, each value escaped unless it is Markup."""
    out: list[str] = []
    stack = [iter([children])]
    while stack:
        try:
            item = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        if isinstance(item, (str, int, float)) or item is None:
            out.append(escape(item))
        else:
            stack.append(iter(item))
    return Markup("".join(out))


def _name(name: str) -> str:
    # Tag and attribute names come from this package's code, never from data; refuse anything odd anyway.
    if not name or not all(c.isalnum() or c in "-_:" for c in name):
        raise ValueError(f"not an HTML name: {name!r}")
    return name


def h(tag: str, attrs: Mapping[str, object] | None = None, *children) -> Markup:
    """One element. Attribute values are escaped; True writes a bare attribute; None or False leaves it out.
    A trailing underscore is dropped from names (`class_`) so Python keywords can be passed as keys."""
    parts = [_name(tag)]
    for key, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        key = _name(key.rstrip("_").replace("_", "-"))
        parts.append(key if value is True else f'{key}="{escape(value)}"')
    opening = Markup(f"<{' '.join(parts)}>")
    if tag in VOID:
        return opening
    return Markup(f"{opening}{join(children)}</{tag}>")


# Every page lives under /<token>/ (the Guard strips it before routing): each local link carries it, so the
# token never needs a cookie, which a browser would also send to every other port of the host.
PREFIX: ContextVar[str] = ContextVar("explorer_prefix", default="")


def url(path: str, **params: object) -> str:
    """A local link under the request's token prefix: the path with its query, parameters with None or ""
    left out (escaped later by h())."""
    if not path.startswith("/") or path.startswith("//"):
        raise ValueError(f"not a local path: {path!r}")
    query = urlencode([(k, str(v)) for k, v in params.items() if v is not None and v != ""])
    return f"{PREFIX.get()}{path}?{query}" if query else f"{PREFIX.get()}{path}"


def link(href: str, *children) -> Markup:
    return h("a", {"href": href}, *children)


def table(headers: Iterable[str], rows: Iterable[Iterable], **attrs: object) -> Markup:
    return h("table", attrs, h("thead", None, h("tr", None, [h("th", None, c) for c in headers])),
             h("tbody", None, [h("tr", None, [h("td", None, cell) for cell in row]) for row in rows]))


def definitions(pairs: Iterable[tuple[str, object]]) -> Markup:
    return h("dl", None, [(h("dt", None, k), h("dd", None, v)) for k, v in pairs])


def document(title: str, nav: Markup, body: Markup) -> Markup:
    """A whole page: no script anywhere, one stylesheet served by the explorer itself."""
    return Markup("<!DOCTYPE html>\n") + h(
        "html", {"lang": "en"},
        h("head", None, h("meta", {"charset": "utf-8"}),
          h("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
          h("title", None, title, " · datalog-memory explorer"),
          h("link", {"rel": "stylesheet", "href": url("/static/explorer.css")})),
        h("body", None, nav, h("main", None, h("h1", None, title), body)))
