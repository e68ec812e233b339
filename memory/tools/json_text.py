"""The reference tools' compact JSON texts."""

from __future__ import annotations

import json
from typing import Any


def compact_json(value: Any) -> str:
    """The reference tools' JSON texts: no spaces, Unicode kept. Values nested deeper than the C encoder's
    recursion allows (a proof thousands of steps deep) are written with an explicit stack instead."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        return _dumps_iteratively(value)


def _dumps_iteratively(value: Any) -> str:
    out: list[str] = []
    stack: list[Any] = [value]
    close = object()  # marks where a container's closing bracket goes
    while stack:
        item = stack.pop()
        if isinstance(item, tuple) and len(item) == 2 and item[0] is close:
            out.append(item[1])
        elif isinstance(item, dict):
            out.append("{")
            stack.append((close, "}"))
            entries = list(item.items())
            for i, (key, child) in enumerate(reversed(entries)):
                stack.append(child)
                prefix = "," if i < len(entries) - 1 else ""
                stack.append((close, prefix + json.dumps(str(key), ensure_ascii=False) + ":"))
        elif isinstance(item, (list, tuple)):
            out.append("[")
            stack.append((close, "]"))
            for i, child in enumerate(reversed(item)):
                stack.append(child)
                if i < len(item) - 1:
                    stack.append((close, ","))
        else:
            out.append(json.dumps(item, ensure_ascii=False))
    return "".join(out)
