"""The one exception type users see: a single sentence naming what is wrong."""


class MdadError(ValueError):
    """Bad input or an impossible request, explained in one sentence."""
