"""studies/regular_language.py (seed 002) at a tiny size, and the regular-language generators."""

import json
import os

import numpy as np
import pytest

import gflow
import regular_language

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def test_languages_label_hand_made_strings():
    z = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1]])
    np.testing.assert_array_equal(gflow.objectives.membership("d_l1", z), [0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(gflow.objectives.membership("parity", z), [0, 1, 0, 1, 0, 0])
    np.testing.assert_array_equal(gflow.objectives.membership("contains", z, pattern="101"), [0, 0, 0, 1, 1, 0])
    np.testing.assert_array_equal(gflow.objectives.membership("contains", z, pattern="11"), [0, 0, 1, 1, 0, 1])
    with pytest.raises(gflow.GflowInputError):
        gflow.objectives.membership("d_l1", np.array([0, 2, 1]))
    with pytest.raises(gflow.GflowInputError):
        gflow.objectives.membership("tomita9", z)


@pytest.mark.parametrize("language", ["d_l1", "parity", "contains"])
def test_balanced_strings_are_balanced_labelled_and_avoid_excluded(language):
    z_tr, y_tr = gflow.objectives.balanced_strings(0, language, 64, 10)
    z_te, y_te = gflow.objectives.balanced_strings(1, language, 64, 10, exclude=z_tr)
    assert z_tr.shape == (64, 10) and y_tr.sum() == 32 and y_te.sum() == 32
    np.testing.assert_array_equal(gflow.objectives.membership(language, z_tr), y_tr)
    seen = {tuple(s) for s in z_tr}
    unseen = [tuple(s) not in seen for s, y in zip(z_te, y_te) if not (language == "d_l1" and y == 1)]
    assert all(unseen)
    if language == "d_l1":  # half of the non-members are near misses with 0 or 2 ones
        assert np.sum(np.isin(z_tr[y_tr == 0].sum(axis=1), (0, 2))) >= 16


def test_encoding_is_seed_002_definition_3_1():
    x = np.asarray(gflow.objectives.encode_strings(np.array([[0, 1, 1]]), eps_x=0.1))
    assert x.shape == (1, 5, 4)
    np.testing.assert_array_equal(x[0, 0], [0, 0, 0, 1])
    np.testing.assert_array_equal(x[0, -1], [0, 0, 0, 1])
    np.testing.assert_allclose(x[0, 1], [0.1 * np.sqrt(3) / 2, 0, 0.05, 0])
    np.testing.assert_allclose(x[0, 2], [0, 0.1 * np.sqrt(3) / 2, 0.05, 0])
    np.testing.assert_allclose(np.linalg.norm(x[0, 1:-1, :3], axis=1), 0.1)  # ε_x · unit true tokens


def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = tmp_path / "rl"
    regular_language.main(["--quick", "--widths", "4", "8", "--n-train", "16", "--n-test", "16", "--steps", "20",
                           "--length", "6", "--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "regular_language" and summary["config"]["widths"] == [4, 8]
    assert len(summary["checks"]) == 2 * 4 + 1  # 4 per representable language, 1 for PARITY
    for c in summary["checks"]:
        assert {"claim", "source", "value", "threshold", "passed", "predictions"} <= set(c)
    rows = summary["results"]["rows"]
    assert len(rows) == 3 * 2 and all(0.0 <= r["train"] <= 1.0 and 0.0 <= r["test"] <= 1.0 for r in rows)
    assert os.path.getsize(out / "accuracy_vs_width.png") > 10_000


@pytest.mark.parametrize("bad", [["--widths", "8"], ["--languages", "parity"], ["--n-train", "15"],
                                 ["--pattern", "12"], ["--length", "2"]])
def test_bad_configuration_is_a_clear_error(bad, tmp_path):
    with pytest.raises(gflow.GflowInputError):
        regular_language.parse_args(["--quick", "--out", str(tmp_path)] + bad)
