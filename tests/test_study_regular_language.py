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


@pytest.mark.parametrize("language", ["d_l1", "parity", "contains"])
def test_held_out_split_is_disjoint_balanced_and_labelled(language):
    z_tr, y_tr, z_te, y_te = regular_language.held_out_split(3, language, 10, 256, 512)
    assert z_tr.shape == (256, 10) and z_te.shape == (512, 10) and y_tr.sum() == 128 and y_te.sum() == 256
    np.testing.assert_array_equal(gflow.objectives.membership(language, z_tr), y_tr)
    np.testing.assert_array_equal(gflow.objectives.membership(language, z_te), y_te)
    assert not {tuple(z) for z in z_tr} & {tuple(z) for z in z_te}  # no test string is a training string
    if language == "d_l1":  # 10 members: 3 held out (the 1 at unseen positions), 7 for training, cycled evenly
        train_pos = {int(np.argmax(z)) for z, y in zip(z_tr, y_tr) if y}
        test_pos = {int(np.argmax(z)) for z, y in zip(z_te, y_te) if y}
        assert len(train_pos) == 7 and len(test_pos) == 3 and not train_pos & test_pos
        _, counts = np.unique(z_te[y_te == 1], axis=0, return_counts=True)
        assert counts.max() - counts.min() <= 1
        assert np.sum(np.isin(z_te[y_te == 0].sum(axis=1), (0, 2))) == 128  # a quarter of the test set: near misses
    if language == "parity":  # 512 members: enough for distinct strings in both sets
        assert len({tuple(z) for z in z_te}) == 512 and len({tuple(z) for z in z_tr}) == 256


def test_held_out_split_errors():
    with pytest.raises(gflow.GflowInputError):
        regular_language.held_out_split(0, "d_l1", 6, 16, 16, held_out=1.0)
    with pytest.raises(gflow.GflowInputError):
        regular_language.held_out_split(0, "parity", 6, 15, 16)
    with pytest.raises(gflow.GflowInputError):  # "contains 111" in 3 bits has one member: nothing to hold out
        regular_language.held_out_split(0, "contains", 3, 4, 4, pattern="111")


def test_checks_from_synthetic_accuracies():
    args = regular_language.parse_args(["--quick", "--widths", "4", "8", "--seeds", "3", "--languages", "d_l1",
                                        "parity"])
    table = {("d_l1", 4, "train"): [1.0, 1.0, 1.0], ("d_l1", 4, "test"): [0.9, 0.8, 0.7],
             ("d_l1", 8, "train"): [1.0, 1.0, 0.96], ("d_l1", 8, "test"): [0.95, 0.9, 0.86],
             ("parity", 8, "train"): [1.0, 1.0, 1.0], ("parity", 8, "test"): [0.4, 0.35, 0.45]}
    checks = regular_language.make_checks(
        args, lambda lang, m, key: np.zeros(3) if key == "test_seen_in_train" else np.array(table[(lang, m, key)]))
    assert [c["kind"] for c in checks] == ["sanity", "sanity", "prediction", "prediction", "sanity", "prediction"]
    assert all(c["status"] == "pass" for c in checks[:2]) and checks[4]["status"] == "pass"
    gap = checks[3]
    np.testing.assert_allclose(gap["values"], [-0.05, -0.1, -0.2])  # (train − test)(m=8) − (train − test)(m=4)
    assert gap["status"] == "pass" and gap["predictions"] == ["002-P5"] and "interval" in gap
    assert checks[2]["value"] == pytest.approx(0.9) and checks[2]["predictions"] == ["002-P6"]
    assert checks[5]["status"] == "FAIL" and "PARITY" in checks[5]["claim"] and checks[5]["predictions"] == ["002-P6"]


@pytest.mark.slow
def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = tmp_path / "rl"
    rc = regular_language.main(["--quick", "--widths", "4", "8", "--n-train", "16", "--n-test", "16", "--steps", "20",
                                "--length", "6", "--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "regular_language" and summary["config"]["widths"] == [4, 8]
    checks = summary["checks"]
    # held-out sanity, then per language: fit (sanity), test accuracy (prediction), gap (representable only)
    assert len(checks) == 1 + 3 * 2 + 2
    assert [c["kind"] for c in checks].count("sanity") == 4
    for c in checks:
        assert {"claim", "source", "kind", "status", "value", "threshold", "passed", "predictions"} <= set(c)
        assert c["status"] in ("pass", "FAIL", "inconclusive")
        assert c["kind"] == "sanity" or ("interval" in c and c["n"] == 2)
    assert checks[0]["status"] == "pass" and checks[0]["value"] == 0.0  # the test strings are held out
    assert rc == gflow.study.exit_code(checks)
    rows = summary["results"]["rows"]
    assert len(rows) == 3 * 2 * 2 and all(0.0 <= r["train"] <= 1.0 and 0.0 <= r["test"] <= 1.0 for r in rows)
    assert all(r["test_seen_in_train"] == 0.0 for r in rows)
    assert os.path.getsize(out / "accuracy_vs_width.png") > 10_000


@pytest.mark.parametrize("bad", [["--widths", "8"], ["--languages", "parity"], ["--n-train", "15"],
                                 ["--pattern", "12"], ["--length", "2"]])
def test_bad_configuration_is_a_clear_error(bad, tmp_path, capsys):
    with pytest.raises(SystemExit):
        regular_language.parse_args(["--quick", "--out", str(tmp_path)] + bad)
    assert f"error: {bad[0]}" in capsys.readouterr().err  # argparse's error, naming the flag
