"""Preloaded into the multiprocessing forkserver only (never import it elsewhere): the forkserver dies with the run.

Its import arms the kernel's parent-death signal in the forkserver, so when the run is killed
the forkserver goes at once, and the pool workers it forked follow it (``synth.lifeline``).
"""

from synth.lifeline import die_with_parent

die_with_parent(poll=False)
