"""Counted nouns in messages: '1 model', '3 models' (never '1 models')."""


def plural(n: int, word: str) -> str:
    """'1 subtask', '3 subtasks'."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def points(value: float) -> str:
    """'1 point', '0.5 points', '4.5 points': accuracy points as printed (``:g``)."""
    return f"{value:g} point" + ("" if value == 1 else "s")


def with_article(count: int, noun: str) -> str:
    """'a 10-item', 'an 80-item', 'an 11-item': the indefinite article as the number is spoken."""
    digits = str(abs(count))
    an = digits.startswith("8") or (len(digits) % 3 == 2 and digits[:2] in ("11", "18"))
    return f"{'an' if an else 'a'} {count}-{noun}"
