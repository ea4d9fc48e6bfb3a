"""inspect-ai tasks over mathstress run folders: ``inspect eval mathstress/detect -T run=outputs/quickstart``.

Installed with ``pip install "mathstress[inspect]"``; inspect finds the tasks through the ``inspect_ai`` entry
point (``mathstress._registry``). Every evaluation task of ``synth.evaluate.TASKS`` is an inspect task of the same
id, with the same prompts, answer parsing and scoring; ``mathstress report --from-inspect LOGDIR`` rebuilds the
paired analysis (deltas against the clean controls, clustered intervals, worst case) from inspect's logs.

This package is the top layer beside the CLI (nothing in synth/, perturb/ or render/ imports it), and it is
the only one that imports inspect-ai at module level: importing it without the extra is an ImportError.
"""
