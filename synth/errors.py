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


class UnsafePathError(RunError):
    """A path derived from a manifest, a config or an option would leave its folder, or is not ours to delete."""

    exit_code = 2


class LockedError(RunError):
    """Another mathstress process holds the run folder's lock."""

    exit_code = 2


class ResumableError(MathstressError):
    """The work stopped part-way (disk full, a killed worker); what was committed is kept and verified on resume."""

    exit_code = 3


class EvalFailuresError(MathstressError):
    """Evaluation finished but more items than tolerated are left failed after retries; their reasons are stored."""

    exit_code = 4
