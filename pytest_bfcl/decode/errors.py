"""The one exception every decoder raises on output it cannot read."""


class DecodeError(ValueError):
    """The model output could not be decoded into calls."""
