"""studies/regular_language.py (seed 002) at a tiny size, and the regular-language generators."""

import json
import os

import numpy as np
import pytest

import gflow
import regular_language
from gflow.problems import regular_language as rl

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


def _balanced_and_labelled(split, language):
    """A split of 256 training and 512 test strings of length 10: shapes, balance and labels; returns it."""
    z_tr, y_tr, z_te, y_te = split
    assert z_tr.shape == (256, 10) and z_te.shape == (512, 10) and y_tr.sum() == 128 and y_te.sum() == 256
    np.testing.assert_array_equal(gflow.objectives.membership(language, z_tr), y_tr)
    np.testing.assert_array_equal(gflow.objectives.membership(language, z_te), y_te)
    return split


@pytest.mark.parametrize("language", ["d_l1", "parity", "contains"])
def test_held_out_split_is_disjoint_balanced_and_labelled(language):
    z_tr, y_tr, z_te, y_te = _balanced_and_labelled(rl.held_out_split(3, language, 10, 256, 512), language)
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
        rl.held_out_split(0, "d_l1", 6, 16, 16, held_out=1.0)
    with pytest.raises(gflow.GflowInputError):
        rl.held_out_split(0, "parity", 6, 15, 16)
    with pytest.raises(gflow.GflowInputError):  # "contains 111" in 3 bits has one member: nothing to hold out
        rl.held_out_split(0, "contains", 3, 4, 4, pattern="111")
    with pytest.raises(gflow.GflowInputError):
        rl.iid_split(0, "parity", 6, 16, 15)


@pytest.mark.parametrize("language", ["d_l1", "parity", "contains"])
def test_iid_split_draws_train_and_test_from_one_distribution(language):
    z_tr, y_tr, z_te, y_te = _balanced_and_labelled(rl.iid_split(3, language, 10, 256, 512), language)
    assert not np.array_equal(z_tr, z_te[:256])  # independent draws, not one sample reused
    if language == "d_l1":  # the same distribution: both sets cover all 10 members and have a quarter near misses
        for z, y, n in ((z_tr, y_tr, 256), (z_te, y_te, 512)):
            assert len({int(np.argmax(s)) for s, c in zip(z, y) if c}) == 10
            assert np.sum(np.isin(z[y == 0].sum(axis=1), (0, 2))) == n // 4
    if language == "parity":  # drawn with replacement from 512 strings per class: some test strings were seen
        seen = {tuple(z) for z in z_tr}
        assert 0 < np.mean([tuple(z) in seen for z in z_te]) < 0.5
    # a class-stratified sample of D: over many draws each member of a small class is equally frequent
    many = rl.iid_split(7, "d_l1", 6, 2, 6000)[2]
    members = many[gflow.objectives.membership("d_l1", many) == 1]
    _, counts = np.unique(members, axis=0, return_counts=True)
    assert len(counts) == 6 and counts.min() > 0.8 * counts.max()


def test_checks_from_synthetic_accuracies():
    args = regular_language.parse_args(["--quick", "--widths", "4", "8", "--seeds", "3", "--languages", "d_l1",
                                        "parity"])
    table = {("d_l1", 4, "train"): [1.0, 1.0, 1.0], ("d_l1", 4, "test"): [0.9, 0.8, 0.7],
             ("d_l1", 8, "train"): [1.0, 1.0, 0.96], ("d_l1", 8, "test"): [0.95, 0.9, 0.86],
             ("parity", 8, "train"): [1.0, 1.0, 1.0], ("parity", 8, "test"): [0.4, 0.35, 0.45]}
    ood = {4: [0.5, 0.6, 0.55], 8: [0.6, 0.7, 0.65]}

    def per_seed(lang, m, key, split="iid"):
        if key == "test_seen_in_train":
            return np.zeros(3) if split == "ood" else np.full(3, 0.6)
        return np.array(ood[m] if split == "ood" and key == "test" else table[(lang, m, key)])

    checks = regular_language.make_checks(args, per_seed)
    assert [c["kind"] for c in checks] == ["sanity", "sanity", "prediction", "prediction", "prediction", "sanity",
                                           "prediction", "prediction"]
    assert [c["predictions"] for c in checks] == [[], ["002-P6"], ["002-P6"], ["002-P6"], ["002-P5"], ["002-P6"],
                                                  ["002-P6"], []]
    assert [c.get("check_id") for c in checks] == [None, None, "002-P6.dl1-accuracy", "002-P6.dl1-no-fall", None,
                                                   None, "002-P6.parity-accuracy", None]
    assert all(c["seeds"] == [0, 1, 2] for c in checks if c["kind"] == "prediction")
    assert all(checks[i]["status"] == "pass" for i in (0, 1, 5))
    level, fall, gap = checks[2:5]
    assert level["value"] == pytest.approx(0.9) and "pre-registered" in level["claim"]
    assert "finite-size reading, ours" in level["claim"] and "poly" in level["claim"]
    np.testing.assert_allclose(fall["values"], [0.05, 0.1, 0.16])  # test(m=8) − test(m=4), per seed
    assert fall["threshold"] == pytest.approx(-0.05) and "1056b11" in fall["claim"]
    np.testing.assert_allclose(gap["values"], [-0.05, -0.1, -0.2])  # (train − test)(m=8) − (train − test)(m=4)
    assert gap["status"] == "pass" and "interval" in gap
    parity = checks[6]  # PARITY: added after a run; registered, it decides on its confirmatory seeds only
    assert parity["status"] == "FAIL" and "PARITY" in parity["claim"] and parity["registered_after_run"] is True
    assert "1056b11" in parity["claim"] and "exploratory block" in parity["claim"]
    variant = checks[7]  # D_L1's out-of-distribution split: reported beside
    assert variant["status"] == "FAIL" and "out-of-distribution" in variant["claim"]
    assert variant["value"] == pytest.approx(0.65)
    no_ood = regular_language.parse_args(["--quick", "--widths", "4", "8", "--seeds", "3", "--languages", "d_l1",
                                          "--no-ood"])
    assert [c["kind"] for c in regular_language.make_checks(no_ood, per_seed)] == ["sanity"] + ["prediction"] * 3


@pytest.mark.slow
def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = tmp_path / "rl"
    rc = regular_language.main(["--quick", "--widths", "4", "8", "--n-train", "16", "--n-test", "16", "--steps", "20",
                                "--length", "6", "--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "regular_language" and summary["config"]["widths"] == [4, 8]
    checks = summary["checks"]
    # OOD held-out sanity; per language fit (sanity) and test accuracy; for the representable ones the pre-registered
    # "does not fall" and the gap; the OOD variant
    assert len(checks) == 1 + 3 * 2 + 2 * 2 + 1
    assert [c["kind"] for c in checks].count("sanity") == 4
    for c in checks:
        assert {"claim", "source", "kind", "status", "value", "threshold", "passed", "predictions"} <= set(c)
        assert c["status"] in ("pass", "FAIL", "inconclusive")
        assert c["kind"] == "sanity" or ("interval" in c and c["n"] == 2)
    assert checks[0]["status"] == "pass" and checks[0]["value"] == 0.0  # the OOD variant's test strings are held out
    assert rc == gflow.study.exit_code(checks)
    rows = summary["results"]["rows"]
    assert len(rows) == 3 * 2 * 2 + 2 * 2 and all(0.0 <= r["train"] <= 1.0 and 0.0 <= r["test"] <= 1.0 for r in rows)
    assert all(r["test_seen_in_train"] == 0.0 for r in rows if r["split"] == "ood")
    assert {r["split"] for r in rows} == {"iid", "ood"}
    assert "d_l1_out_of_distribution" in summary["results"]["findings"]
    assert os.path.getsize(out / "accuracy_vs_width.png") > 10_000


def test_seed_blocks_are_disjoint_and_recorded():
    assert regular_language.parse_args(["--quick"]).seed_list == [0, 1]
    args = regular_language.parse_args(["--seeds-block", "confirmatory"])
    assert args.seeds_block == "confirmatory" and args.seed_list == list(range(100, 110))


@pytest.mark.parametrize("bad", [["--widths", "8"], ["--languages", "parity"], ["--n-train", "15"],
                                 ["--pattern", "12"], ["--length", "2"],
                                 ["--seeds", "11", "--seeds-block", "confirmatory"], ["--seeds", "101"]])
def test_bad_configuration_is_a_clear_error(bad, tmp_path, capsys):
    with pytest.raises(SystemExit):
        regular_language.parse_args(["--quick", "--out", str(tmp_path)] + bad)
    assert f"error: {bad[0]}" in capsys.readouterr().err  # argparse's error, naming the flag
