"""Print what users and data give literally: never as rich markup, never as terminal control codes.

Names of models, items, files and every error message pass through :func:`literal` before they
reach a rich console, so ``[/b]`` in a path is shown as typed and an ESC or OSC sequence in a
model name is shown as ``\\x1b`` instead of being obeyed by the terminal.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 and C1 control characters, DEL, and the Unicode marks that reorder or hide text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(value: object) -> str:
    """``str(value)`` with every control character spelled out (``\\x1b``, ``\\n``, ``\\u202e``)."""
    return _UNSAFE.sub(
        lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"), str(value)
    )


def literal(value: object) -> str:
    """``value`` as text to embed in rich markup: control characters spelled out, markup escaped."""
    return escape(visible(value))
