"""What inspect imports through the ``inspect_ai`` entry point: importing the tasks registers them."""

from mathstress.tasks import INSPECT_TASKS  # noqa: F401
