"""The testable claims of the source papers, read from the data file ``validation/registry.toml`` of this checkout
(docs/sources.md names the papers).

Each study tags its prediction checks with the ids they test (``check(..., kind="prediction",
predictions=["000-P4"])``); ``studies/validation.py`` joins the tags with :data:`PREDICTIONS`. A prediction that
cannot be tested at simulator scale says why in :data:`UNTESTABLE` (what it would take); an identity (algebra, an
invariance of the exact dynamics, a construction) says why in :data:`IDENTITIES` and is counted apart; every other
one must be decided by a study's prediction check, so nothing is silently "not checked".
"""

from __future__ import annotations

import os
import tomllib
from typing import NamedTuple

from ..results._provenance import PACKAGE_DIR

REGISTRY = os.path.join(os.path.dirname(PACKAGE_DIR), "validation", "registry.toml")


class Prediction(NamedTuple):
    """One claim of a source paper.

    Attributes:
        id: the registry id (``"000-P4"``, ``"001-13"``).
        claim: what the paper predicts, in words.
        source: where the paper states it (theorem, equation, figure).
        study: the study meant to check it (``"—"``: none).
    """

    id: str
    claim: str
    source: str
    study: str


def load_registry(path: str = REGISTRY) -> tuple[list[Prediction], dict[str, str], dict[str, str], dict[str, str]]:
    """Read the claims registry.

    Args:
        path: the TOML file (default: ``validation/registry.toml`` beside the ``gflow`` package).

    Returns:
        ``(predictions, identities, untestable, scaling_notes)``: the predictions in file order, and by id the
        reason a claim is an identity (its preamble put before it), why it cannot be tested (likewise), and the
        note on a value fixed by a scaling of ours.

    Raises:
        FileNotFoundError: when ``path`` does not exist (an installed package without its checkout).
        ValueError: for a duplicate id or an entry without its four fields.
    """
    with open(path, "rb") as f:
        data = tomllib.load(f)
    preambles = data.get("preambles", {})
    predictions, identities, untestable, notes = [], {}, {}, {}
    for entry in data.get("prediction", []):
        missing = [k for k in Prediction._fields if k not in entry]
        if missing:
            raise ValueError(f"{path}: prediction {entry.get('id', '?')!r} lacks {missing}")
        p = Prediction(*(entry[k] for k in Prediction._fields))
        if any(q.id == p.id for q in predictions):
            raise ValueError(f"{path}: duplicate prediction id {p.id!r}")
        predictions.append(p)
        if "identity" in entry:
            identities[p.id] = preambles.get("identity", "") + entry["identity"]
        if "untestable" in entry:
            untestable[p.id] = preambles[entry["untestable_preamble"]] + entry["untestable"] \
                if "untestable_preamble" in entry else entry["untestable"]
        if "scaling_note" in entry:
            notes[p.id] = entry["scaling_note"]
    return predictions, identities, untestable, notes


PREDICTIONS, IDENTITIES, UNTESTABLE, SCALING_NOTES = load_registry() if os.path.isfile(REGISTRY) else ([], {}, {}, {})
