"""Our exception types: each message names what was wrong and how to fix it."""


class MathstressError(Exception):
    """Base class for errors the CLI reports without a traceback."""

    exit_code = 1


class ConfigError(MathstressError):
    """A config, a path or an option is invalid; nothing was written."""

    exit_code = 2


class RunError(MathstressError):
    """A run folder is in a state the requested command cannot work with."""

    exit_code = 2
