"""Counted nouns in messages: '1 model', '3 models' (never '1 models')."""


def plural(n: int, word: str) -> str:
    """'1 subtask', '3 subtasks'."""
    return f"{n} {word}" + ("" if n == 1 else "s")
