"""The pairs of models ``mdad estimate --compare`` names, read against the models of the results.

Each ``--compare`` value is either one model's name or two names joined by a comma (``A,B``). A value
that is exactly a model's name is that model, even when the name holds a comma (a model named
``a,b``); names given one per option are paired in turn (``--compare A --compare B``). A name the
results do not hold, but that matches one of their models once both are put in the same Unicode
normal form (NFKC, invisible characters dropped), is taken as that model, with a note saying so; two
compared names that differ only in that way get a note too, since they print alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from mdad.data.matrix import INVISIBLE
from mdad.errors import MdadError


def _shown(name: str) -> str:
    """The name as it prints: NFKC normal form, invisible characters dropped."""
    return unicodedata.normalize("NFKC", name.translate(INVISIBLE))


def check_values(values: Sequence[str]) -> None:
    """Refuse an empty ``--compare`` value before any work."""
    for text in values:
        if not text.strip() or text.strip() == ",":
            raise MdadError(f"--compare takes a model name, or two separated by a comma (A,B), got {text!r}.")


def resolve(values: Sequence[str], models: Sequence[str], source: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The pairs ``values`` name among ``models`` (of ``source``), and the notes on names matched or alike; one sentence
    for a name no model has, a value that cannot be read as one or two names, an unpaired name, or a model paired with
    itself."""
    known = {str(m): str(m) for m in models}
    alike: dict[str, list[str]] = {}
    for name in known:
        alike.setdefault(_shown(name), []).append(name)
    notes: list[str] = []

    def model(name: str) -> str | None:
        if name in known:
            return name
        matches = alike.get(_shown(name), [])
        if len(matches) == 1:
            notes.append(f"--compare {ascii(name)} is taken as the model {ascii(matches[0])}, which differs from it only in Unicode spelling.")
            return matches[0]
        return None

    names: list[str] = []
    for text in values:
        whole = model(text) or model(text.strip())
        if whole is not None:
            names.append(whole)
            continue
        splits = [(model(text[:i].strip()), model(text[i + 1 :].strip())) for i, c in enumerate(text) if c == ","]
        found = [(a, b) for a, b in splits if a is not None and b is not None]
        if len(found) > 1:
            raise MdadError(f"--compare {text!r} splits into two models of {source} in more than one way; give each with its own --compare.")
        if not found:
            unknown = text.strip() if "," not in text else next(part.strip() for part in _parts(text) if model(part.strip()) is None)
            raise MdadError(
                f"No model {unknown!r} in {source}; --compare takes model names as the results spell them (A,B, or --compare A --compare B)."
            )
        names.extend(found[0])
    if len(names) % 2:
        raise MdadError(
            f"--compare names {len(names)} models; give them in pairs (A,B, or --compare A --compare B), the last one {names[-1]!r} has no partner."
        )
    pairs = list(zip(names[0::2], names[1::2], strict=True))
    for first, second in pairs:
        if first == second:
            raise MdadError(f"--compare names the model {first!r} twice in one pair; give two different models.")
        if _shown(first) == _shown(second):
            notes.append(
                f"The compared models {ascii(first)} and {ascii(second)} print alike: "
                "their names differ only in Unicode spelling or invisible characters."
            )
    return pairs, list(dict.fromkeys(notes))


def _parts(text: str) -> list[str]:
    """The comma-separated parts of ``text`` (for naming the unknown one)."""
    return [part for part in text.split(",") if part.strip()] or [text]
