"""What a finished run left undone, from its stats.json, for `mathstress generate` to say after "wrote N items"."""

from __future__ import annotations

import json
from pathlib import Path


def unfilled(run_dir: Path) -> list[tuple[bool, str]]:
    """The error slots the config asked for that the run left unfilled, per subtype, with the injectors' reasons
    (from stats.json): a config whose injection never succeeds otherwise ends in "wrote N items" of clean pages.
    Severe (a warning) when more than a tenth of the subtype's slots are unfilled, else a note. Also the chains
    generate.paraphrase left in the template wording (severe when fewer than half were reworded)."""
    try:
        stats = json.loads((run_dir / "stats.json").read_text(encoding="utf-8"))
        generate, inject = stats["rejections"]["generate"], stats["rejections"]["inject"]
        # the pages made (a photo of a page fills no slot of its own); subtypes for runs of an earlier version
        made = stats["counts"].get("subtype_pages", stats["counts"]["subtypes"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    lines = []
    for key, n in sorted(generate.items()):
        parts = key.split(":")
        if len(parts) != 3 or parts[0] != "allocation" or parts[2] != "unfilled" or not n:
            continue
        subtype = parts[1]
        reasons: dict[str, int] = {}
        for name, tally in inject.items():
            if name.split("/")[0].split(".")[-1] == subtype and isinstance(tally, dict):
                for why, k in (tally.get("rejected") or {}).items():
                    reasons[why] = reasons.get(why, 0) + int(k)
        why = ", ".join(f"{w} {k}" for w, k in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
        done = int(made.get(subtype, 0))
        lines.append((n > 0.1 * (n + done), f"{n} {subtype} slots the config asks for are unfilled ({done} made)"
                      + (f"; the injector's refusals: {why}" if why else "") + " (stats.json: rejections)"))
    # generate.paraphrase: a model that rewords no chain (every call failed) left the run in the template wording
    for name, tally in sorted(inject.items()):
        if not name.startswith("paraphrase.") or not isinstance(tally, dict) or not tally.get("attempted"):
            continue
        tried, kept = int(tally["attempted"]), int(tally.get("kept") or 0)
        refused = tally.get("rejected") or {}
        why = ", ".join(f"{w} {k}" for w, k in sorted(refused.items(), key=lambda kv: -kv[1])[:3])
        if kept < tried:
            lines.append((kept < 0.5 * tried, f"{tried - kept} of {tried} {name.split('.', 1)[1]} chains were not "
                          f"reworded by generate.paraphrase and keep the template wording ({why}; stats.json: "
                          f"rejections.inject.{name})"))
    return lines
