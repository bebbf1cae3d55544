"""The testable claims of the source papers and the checks registered to decide them, read from the data file
``validation/registry.toml`` of this checkout (docs/sources.md names the papers).

Every claim has one of four *kinds of result* (:data:`KINDS_OF_RESULT`), counted apart in VALIDATION.md:

- ``"identity"``: true by construction, algebra, an invariance of the exact dynamics, a proven bound on every state,
  a property of the initialization, a central-limit rate or a value fixed by a scaling we chose; verified and shown,
  its reason in :data:`IDENTITIES`;
- ``"reproduction"``: an experimental figure or table of a paper, to be run with the paper's own protocol (optimizer,
  loss, data, sizes, steps, seeds), judged against the sentence the paper writes about it;
- ``"prediction"``: a claim about what training does that could come out otherwise; only these make the headline;
- ``"finding"``: a question the papers leave open that exact flow can settle, reported as a measurement (no
  pass/fail).

Each study tags its checks with the ids they test (``check(..., kind="prediction", predictions=["000-P4"])``);
``studies/validation.py`` joins the tags with :data:`PREDICTIONS`. A claim that cannot be tested at simulator scale
says why in :data:`UNTESTABLE` (what it would take).

Pre-registration: every check that decides a prediction or a reproduction is a ``[[check]]`` table of the registry
(:class:`RegisteredCheck`: statistic, direction, threshold, scope, seeds). :func:`preregistration_problems` lists
every recorded deciding check that is not registered or was decided by anything else; a check written or changed
after its study had been run (``registered_after_run``) decides only on its declared fresh ``confirmatory_seeds``
(:func:`check_role`).
"""

from __future__ import annotations

import math
import os
import tomllib
from typing import NamedTuple

from ..results._provenance import PACKAGE_DIR

REGISTRY = os.path.join(os.path.dirname(PACKAGE_DIR), "validation", "registry.toml")

KINDS_OF_RESULT = ("identity", "reproduction", "prediction", "finding")
"""The four kinds of result, in the order VALIDATION.md counts them apart (see the module docstring)."""

DECIDING_KINDS = ("prediction", "reproduction")
"""The kinds whose verdict (pass / FAIL / inconclusive) is decided by registered checks."""

STATISTICS = ("median", "mean", "min", "max", "clopper_pearson", "value")
"""A registered check's statistic: over seeds (:func:`over_seeds`; ``"clopper_pearson"``: a fraction of 0/1 outcomes
over seeds with its exact binomial interval, gflow.study.k_of_n), or ``"value"`` for a check on one number or a
yes/no decision (:func:`check`)."""

DIRECTIONS = ("<=", "<", ">=", ">", "in")


class Prediction(NamedTuple):
    """One claim of a source paper (a row of the registry).

    Attributes:
        id: the registry id (``"000-P4"``, ``"001-13"``, ``"000-F1"`` for a finding).
        claim: what the paper predicts, in words (for a finding: the question measured).
        source: where the paper states it (theorem, equation, figure).
        study: the study meant to check it (``"—"``: none; ``"a, b"``: two studies).
        kind: its kind of result, one of :data:`KINDS_OF_RESULT`.
        why_kind: why it has that kind, where that is not obvious ("" otherwise).
        figure: for a reproduction, the paper's figure or table it reproduces ("" otherwise).
        protocol: for a reproduction, the paper's protocol it must run with ("" otherwise).
    """

    id: str
    claim: str
    source: str
    study: str
    kind: str = "prediction"
    why_kind: str = ""
    figure: str = ""
    protocol: str = ""


class RegisteredCheck(NamedTuple):
    """A deciding check, registered before the run that decides (a ``[[check]]`` table of the registry).

    Attributes:
        id: the check's registry name; a study records it in the check's entry as ``check_id``.
        predictions: the registry ids (of kind prediction or reproduction) it decides.
        study: the study that runs it.
        statistic: one of :data:`STATISTICS`.
        direction: one of :data:`DIRECTIONS`, or None for a yes/no check (the entry then records none).
        threshold: the bar (a number, or ``[low, high]`` for ``"in"``).
        scope: what the check ranges over, in words (sizes, readings, levels read).
        seeds: the seeds of the exploratory block (the run that was seen).
        match: for a record that carries no ``check_id`` (one made before checks were registered), the start of its
            recorded claim that identifies it.
        reading: the reading of an ambiguous setup the check belongs to (``"grid"``, ``"iid"``), or None.
        registered_after_run: the check was written or changed after its study had been run; it then decides only
            on ``confirmatory_seeds``.
        changed: what was changed after the run, and when (required with ``registered_after_run``).
        confirmatory_seeds: a declared fresh block of seeds, never used before (disjoint from ``seeds``): required
            with ``registered_after_run``; a check registered before its run may declare one too, and then decides on
            either block.
    """

    id: str
    predictions: tuple[str, ...]
    study: str
    statistic: str
    direction: str | None
    threshold: object
    scope: str
    seeds: tuple[int, ...]
    match: str = ""
    reading: str | None = None
    registered_after_run: bool = False
    changed: str = ""
    confirmatory_seeds: tuple[int, ...] = ()


class Registry(NamedTuple):
    """The whole registry (:func:`read_registry`).

    Attributes:
        predictions: the claims in file order.
        identities: id → why it is an identity (its preamble put before it).
        untestable: id → why it cannot be tested at simulator scale.
        scaling_notes: id → the note on a value largely fixed by a scaling of ours.
        checks: the registered deciding checks, in file order.
    """

    predictions: list[Prediction]
    identities: dict[str, str]
    untestable: dict[str, str]
    scaling_notes: dict[str, str]
    checks: list[RegisteredCheck]

    def kind(self, pid: str) -> str | None:
        """The kind of result of a claim.

        Args:
            pid: a registry id.

        Returns:
            Its kind (:data:`KINDS_OF_RESULT`), or None for an id not in the registry.
        """
        return next((p.kind for p in self.predictions if p.id == pid), None)


def parse_seeds(spec) -> tuple[int, ...]:
    """Seeds written as a list of ints or a string of ranges (``"0-9"``, ``"0-9, 20, 30-31"``).

    Args:
        spec: the TOML value.

    Returns:
        The seeds, sorted, without repeats.

    Raises:
        ValueError: for anything else.
    """
    if isinstance(spec, int) and not isinstance(spec, bool):
        return (spec,)
    if isinstance(spec, list) and all(isinstance(s, int) and not isinstance(s, bool) for s in spec):
        return tuple(sorted(set(spec)))
    if isinstance(spec, str):
        out = set()
        for part in (p.strip() for p in spec.split(",")):
            lo, _, hi = part.partition("-")
            if not lo.strip().isdigit() or (hi and not hi.strip().isdigit()):
                raise ValueError(f"seeds {spec!r}: write ranges such as '0-9, 20'")
            out.update(range(int(lo), int(hi or lo) + 1))
        return tuple(sorted(out))
    raise ValueError(f"seeds must be a list of ints or a string such as '0-9', got {spec!r}")


def format_seeds(seeds) -> str:
    """Seeds as ranges.

    Args:
        seeds: ints.

    Returns:
        ``"0–3, 7"`` for ``(0, 1, 2, 3, 7)``; ``"none"`` when empty.
    """
    seeds = sorted(seeds)
    runs, start = [], None
    for i, s in enumerate(seeds):
        if start is None:
            start = s
        if i + 1 == len(seeds) or seeds[i + 1] != s + 1:
            runs.append(f"{start}" if start == s else f"{start}–{s}")
            start = None
    return ", ".join(runs) or "none"


_PREDICTION_REQUIRED = ("id", "claim", "source", "study", "kind")


def _prediction(entry: dict, path: str, preambles: dict) -> tuple[Prediction, str | None, str | None]:
    missing = [k for k in _PREDICTION_REQUIRED if k not in entry]
    if missing:
        raise ValueError(f"{path}: prediction {entry.get('id', '?')!r} lacks {missing}")
    p = Prediction(*(entry.get(k, "") for k in Prediction._fields))
    where = f"{path}: prediction {p.id!r}"
    if p.kind not in KINDS_OF_RESULT:
        raise ValueError(f"{where}: kind must be one of {KINDS_OF_RESULT}, got {p.kind!r}")
    if (p.kind == "identity") != ("identity" in entry):
        raise ValueError(f"{where}: an identity (and only an identity) gives its reason in `identity`")
    if p.kind == "reproduction" and not (p.figure and p.protocol):
        raise ValueError(f"{where}: a reproduction names its `figure` and the paper's `protocol`")
    if p.kind != "reproduction" and (p.figure or p.protocol):
        raise ValueError(f"{where}: only a reproduction has `figure` and `protocol`")
    if "untestable" in entry and p.kind != "prediction":
        raise ValueError(f"{where}: only a prediction can be untestable")
    identity = preambles.get("identity", "") + entry["identity"] if "identity" in entry else None
    untestable = None
    if "untestable" in entry:
        untestable = (preambles[entry["untestable_preamble"]] + entry["untestable"]
                      if "untestable_preamble" in entry else entry["untestable"])
    return p, identity, untestable


def _check(entry: dict, path: str, kinds: dict[str, str]) -> RegisteredCheck:
    where = f"{path}: check {entry.get('id', '?')!r}"
    missing = [k for k in ("id", "prediction", "study", "statistic", "threshold", "scope", "seeds") if k not in entry]
    if missing:
        raise ValueError(f"{where} lacks {missing}")
    predictions = tuple([entry["prediction"]] if isinstance(entry["prediction"], str) else entry["prediction"])
    for pid in predictions:
        if kinds.get(pid) not in DECIDING_KINDS:
            raise ValueError(f"{where}: {pid!r} is not a prediction or reproduction of the registry "
                             f"(kind {kinds.get(pid)!r}); only those are decided by registered checks")
    if entry["statistic"] not in STATISTICS:
        raise ValueError(f"{where}: statistic must be one of {STATISTICS}, got {entry['statistic']!r}")
    direction = entry.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise ValueError(f"{where}: direction must be one of {DIRECTIONS}, got {direction!r}")
    if direction is not None and (direction == "in") != isinstance(entry["threshold"], list):
        raise ValueError(f"{where}: a band [low, high] goes with direction 'in', a number with the others")
    seeds = parse_seeds(entry["seeds"])
    after = bool(entry.get("registered_after_run", False))
    confirmatory = parse_seeds(entry["confirmatory_seeds"]) if "confirmatory_seeds" in entry else ()
    if after and not (confirmatory and entry.get("changed")):
        raise ValueError(f"{where}: a check registered after its run declares what `changed` and a fresh block of "
                         "`confirmatory_seeds`")
    if set(confirmatory) & set(seeds):
        raise ValueError(f"{where}: the confirmatory seeds must be fresh (never used before): "
                         f"{format_seeds(set(confirmatory) & set(seeds))} are in the exploratory block")
    return RegisteredCheck(entry["id"], predictions, entry["study"], entry["statistic"], direction,
                           entry["threshold"], entry["scope"], seeds, entry.get("match", ""), entry.get("reading"),
                           after, entry.get("changed", ""), confirmatory)


def read_registry(path: str = REGISTRY) -> Registry:
    """Read and validate the claims registry.

    Args:
        path: the TOML file (default: ``validation/registry.toml`` beside the ``gflow`` package).

    Returns:
        The :class:`Registry`.

    Raises:
        FileNotFoundError: when ``path`` does not exist (an installed package without its checkout).
        ValueError: for a duplicate id, an entry without its required fields, an unknown kind of result, statistic
            or direction, a check of an id that is not a prediction or reproduction, or a check registered after
            its run without a fresh confirmatory block.
    """
    with open(path, "rb") as f:
        data = tomllib.load(f)
    preambles = data.get("preambles", {})
    predictions, identities, untestable, notes = [], {}, {}, {}
    for entry in data.get("prediction", []):
        p, identity, why_untestable = _prediction(entry, path, preambles)
        if any(q.id == p.id for q in predictions):
            raise ValueError(f"{path}: duplicate prediction id {p.id!r}")
        predictions.append(p)
        if identity is not None:
            identities[p.id] = identity
        if why_untestable is not None:
            untestable[p.id] = why_untestable
        if "scaling_note" in entry:
            notes[p.id] = entry["scaling_note"]
    kinds = {p.id: p.kind for p in predictions}
    checks = []
    for entry in data.get("check", []):
        c = _check(entry, path, kinds)
        if any(q.id == c.id for q in checks):
            raise ValueError(f"{path}: duplicate check id {c.id!r}")
        checks.append(c)
    return Registry(predictions, identities, untestable, notes, checks)


def load_registry(path: str = REGISTRY) -> tuple[list[Prediction], dict[str, str], dict[str, str], dict[str, str]]:
    """Read the claims registry (its rows only; :func:`read_registry` gives the registered checks too).

    Args:
        path: the TOML file (default: ``validation/registry.toml`` beside the ``gflow`` package).

    Returns:
        ``(predictions, identities, untestable, scaling_notes)``: the claims in file order, and by id the reason a
        claim is an identity (its preamble put before it), why it cannot be tested (likewise), and the note on a
        value fixed by a scaling of ours.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        ValueError: as :func:`read_registry`.
    """
    return tuple(read_registry(path)[:4])


# --- pre-registration --------------------------------------------------------------------------------------------------


def deciding_ids(check: dict, registry: Registry) -> list[str]:
    """The ids a recorded check decides: its tags of kind prediction or reproduction, when it is a prediction check.

    Args:
        check: a check entry of a result file.
        registry: the registry.

    Returns:
        The ids (empty for a sanity check, or one tagged only with identities and findings).
    """
    if check.get("kind") != "prediction":
        return []
    return [pid for pid in check.get("predictions") or [] if registry.kind(pid) in DECIDING_KINDS]


def registered_check(result: dict, check: dict, registry: Registry) -> tuple[RegisteredCheck | None, str]:
    """The registered check a recorded check is, by its ``check_id`` or, for a record that carries none (made before
    checks were registered), by its study, reading and the start of its claim (``match``).

    Args:
        result: the result file (its ``study``).
        check: a check entry of it.
        registry: the registry.

    Returns:
        ``(registered, problem)``: the entry and "", or None and why none was found.
    """
    if check.get("check_id"):
        found = [c for c in registry.checks if c.id == check["check_id"]]
        return (found[0], "") if found else (None, f"its check_id {check['check_id']!r} is not in the registry")
    found = [c for c in registry.checks if c.match and c.study == result["study"]
             and check["claim"].startswith(c.match) and c.reading in (None, check.get("reading"))]
    if len(found) == 1:
        return found[0], ""
    if found:
        return None, f"its claim matches several registered checks ({', '.join(c.id for c in found)})"
    return None, "no registered check (the entry carries no check_id and no registered claim matches)"


def _seeds_and_origin(result: dict, check: dict) -> tuple[tuple[int, ...] | None, str]:
    if isinstance(check.get("seeds"), list):
        return tuple(int(s) for s in check["seeds"]), ""
    config = result.get("config") or {}
    if isinstance(config.get("seed_list"), list):
        return tuple(int(s) for s in config["seed_list"]), " (the run's seed_list)"
    n, count = check.get("n"), config.get("seeds")
    if isinstance(count, int) and not isinstance(count, bool) and n is not None and n == count:
        first = int(config.get("first_seed", 0))
        return tuple(range(first, first + count)), " (read off the run's configuration: the entry names none)"
    return None, ""


def recorded_seeds(result: dict, check: dict) -> tuple[int, ...] | None:
    """The seeds a recorded check was decided on.

    Args:
        result: the result file (its ``config``).
        check: a check entry of it.

    Returns:
        Its ``seeds`` field; else the configuration's ``seed_list``; else, for a check over seeds (``n`` recorded) in a
        run whose configuration has ``seeds`` = n, the seeds ``first_seed … first_seed + n − 1`` (``first_seed``
        defaults to 0); else None (the record does not say).
    """
    return _seeds_and_origin(result, check)[0]


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    if isinstance(a, bool) or isinstance(b, bool) or not all(isinstance(v, (int, float)) for v in (a, b)):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-300)


def conformance_problems(result: dict, check: dict, reg: RegisteredCheck) -> list[str]:
    """How a recorded check differs from its registration.

    Args:
        result: the result file.
        check: the recorded check entry.
        reg: its registration (:func:`registered_check`).

    Returns:
        One phrase per difference (study, decided ids, statistic, direction, threshold, reading, whether registered
        after the run where the entry says, seeds); empty when it conforms.
    """
    problems = []
    if result["study"] != reg.study:
        problems.append(f"recorded by {result['study']}, registered for {reg.study}")
    tagged = set(check.get("predictions") or [])
    if not set(reg.predictions) <= tagged:
        problems.append(f"decides {sorted(tagged) or 'nothing'}, registered for {list(reg.predictions)}")
    statistic = check.get("statistic", "value")
    if statistic != reg.statistic:
        problems.append(f"statistic {statistic!r}, registered {reg.statistic!r}")
    if check.get("direction") != reg.direction:
        problems.append(f"direction {check.get('direction')!r}, registered {reg.direction!r}")
    if not _same(check.get("threshold"), reg.threshold):
        problems.append(f"threshold {check.get('threshold')!r}, registered {reg.threshold!r}")
    if reg.reading is not None and check.get("reading") != reg.reading:
        problems.append(f"reading {check.get('reading')!r}, registered {reg.reading!r}")
    if "registered_after_run" in check and bool(check["registered_after_run"]) != reg.registered_after_run:
        problems.append(f"the entry says registered_after_run = {bool(check['registered_after_run'])}, the registry "
                        f"{reg.registered_after_run}")
    seeds, origin = _seeds_and_origin(result, check)
    if seeds is None:
        problems.append("the record does not name the seeds it was decided on")
    else:
        blocks = [reg.seeds] + ([reg.confirmatory_seeds] if reg.confirmatory_seeds else [])
        dropped = int(check.get("seeds_dropped") or 0)
        fits = any(set(seeds) == set(b) or (dropped and set(seeds) < set(b)) for b in blocks)
        if not fits:
            problems.append(f"decided on seeds {format_seeds(seeds)}{origin}, registered {format_seeds(reg.seeds)}"
                            + (f" (confirmatory {format_seeds(reg.confirmatory_seeds)})"
                               if reg.confirmatory_seeds else ""))
    return problems


def check_role(result: dict, check: dict, registry: Registry) -> tuple[str, list[str]]:
    """What a recorded check may do in VALIDATION.md.

    Args:
        result: the result file.
        check: a check entry of it.
        registry: the registry.

    Returns:
        ``(role, problems)``. role is ``"deciding"`` (registered, conforming, and for a check registered after its
        run, decided on its confirmatory seeds), ``"exploratory"`` (a check registered after its run, run on its
        exploratory seeds: shown beside, not counted), ``"not registered"`` (unregistered or not as registered: shown,
        never counted; ``problems`` says why), or ``"not deciding"`` (a sanity check, or one that decides no
        prediction or reproduction).
    """
    if not deciding_ids(check, registry):
        return "not deciding", []
    reg, problem = registered_check(result, check, registry)
    if reg is None:
        return "not registered", [problem]
    problems = conformance_problems(result, check, reg)
    if problems:
        return "not registered", problems
    if reg.registered_after_run and not set(recorded_seeds(result, check)) <= set(reg.confirmatory_seeds):
        return "exploratory", []
    return "deciding", []


# The part of a study run in ``--parts`` that decides a claim (the others are decided by the whole study). Kept in
# code, not in validation/registry.toml: gflow's source hash covers every file of gflow, so editing the registry would
# make every sweep cache on disk look like the work of other code.
STUDY_PARTS = {"000-P15": "A", "000-F2": "A", "001-15": "B", "001-16": "B", "001-17": "B", "001-F1": "B"}


def planned_runs(p) -> list[tuple[str, str | None]]:
    """The runs meant to decide a claim.

    Args:
        p: a :class:`Prediction`.

    Returns:
        (study, part) pairs: its ``study`` field ("a, b" is two studies) with the part of :data:`STUDY_PARTS` (None:
        the whole study).
    """
    return [(s.strip(), STUDY_PARTS.get(p.id)) for s in p.study.split(",") if s.strip() != "—"]


def _studies(p) -> set[str]:
    return {study for study, _ in planned_runs(p)}


def as_measurements(results: list[dict], registry: Registry | None = None) -> list[dict]:
    """The records with every check that a study records for a prediction or reproduction its registry row does not
    give to that study turned into a measurement of a finding.

    The rule: a prediction or reproduction is decided only by the studies its ``study`` field names. Where another
    study records a check with its id, the id is replaced, in a copy, by the findings of the same seed (the id's part
    before the first ``-``) whose ``study`` names the recording study (seed 000's exact-flow studies
    extrapolation_phase and init_scale: the finding 000-F1), and the check's claim says which id it was recorded for
    and which study decides that id. Findings are measured, not decided, so the moved check needs no registration.

    Args:
        results: the recorded result files (gflow.study.load_results).
        registry: the registry (default: the one of this checkout).

    Returns:
        The records, in the same order: those with no such check unchanged (the same objects), the others shallow
        copies whose moved checks are copies.
    """
    registry = registry or REGISTERED
    by_id = {p.id: p for p in registry.predictions}
    out = []
    for r in results:
        checks, changed = [], False
        for c in r.get("checks", []):
            tags = list(c.get("predictions") or [])
            moved = [pid for pid in tags if pid in by_id and by_id[pid].kind in DECIDING_KINDS
                     and r["study"] not in _studies(by_id[pid])]
            if not moved:
                checks.append(c)
                continue
            seeds = {pid.split("-")[0] for pid in moved}
            findings = [p.id for p in registry.predictions if p.kind == "finding" and r["study"] in _studies(p)
                        and p.id.split("-")[0] in seeds]
            kept = [pid for pid in tags if pid not in moved]
            deciders = "; ".join(f"{pid} is decided by {by_id[pid].study}" for pid in moved)
            checks.append({**c, "predictions": kept + [f for f in findings if f not in kept],
                           "claim": f"{c['claim']} (recorded for {', '.join(moved)}; {deciders}: a measurement here)"})
            changed = True
        out.append({**r, "checks": checks} if changed else r)
    return out


def preregistration_problems(records: list[dict], registry: Registry | None = None) -> list[str]:
    """Every recorded deciding check that was not decided as registered (the machine-checked pre-registration).

    A recorded prediction check that decides a prediction or reproduction must be a registered ``[[check]]`` with the
    same study, statistic, direction, threshold, reading and seeds (the exploratory block, or the confirmatory one
    of a check registered after its run). A check registered after its run and recorded on its exploratory seeds is
    not a problem: it is shown beside, and does not decide (:func:`check_role`). A check that a study records for a
    claim another study decides is a measurement, not a problem (:func:`as_measurements`, applied first).

    Args:
        records: the result files (:func:`load_results`).
        registry: the registry (default: the one of this checkout).

    Returns:
        One line per problem, ``"<study>: <ids>: <claim start>: <what differs>"``; empty when all conform.
    """
    registry = registry or REGISTERED
    out = []
    for r in as_measurements(records, registry):
        for c in r.get("checks", []):
            role, problems = check_role(r, c, registry)
            if role == "not registered":
                ids = ", ".join(deciding_ids(c, registry))
                out.append(f"{r['study']}: {ids}: {c['claim'][:70]!r}: {'; '.join(problems)}")
    return out


REGISTERED = read_registry() if os.path.isfile(REGISTRY) else Registry([], {}, {}, {}, [])
"""The registry of this checkout (empty for an installed package without its checkout)."""
PREDICTIONS, IDENTITIES, UNTESTABLE, SCALING_NOTES = REGISTERED[:4]
CHECKS = REGISTERED.checks
KINDS = {p.id: p.kind for p in PREDICTIONS}
"""id → its kind of result (:data:`KINDS_OF_RESULT`)."""
