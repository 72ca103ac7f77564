"""ResponseMatrix validation, the npz reader, named datasets and the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from mdad.data import ResponseMatrix, load, load_dataset, read_npz, simulate, simulate_with_truth, write_npz
from mdad.errors import MdadError


def tiny(**overrides):
    args = dict(scores=np.array([[1, 0, 1], [0, 0, 1]], float), models=["a", "b"], items=["i", "j", "k"], subtasks=["s", "s", "t"])
    args.update(overrides)
    return ResponseMatrix(**args)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(models=["a"]), "models has 1 entry but the scores have 2"),
        (dict(models=["a", "a"]), "model name 'a' appears more than once"),
        (dict(items=["i", "i", "k"]), "item name 'i' appears more than once"),
        (dict(scores=np.array([[1, 0, 2], [0, 0, 1]], float)), "must lie in [0, 1]"),
        (dict(scores=np.zeros((0, 3)), models=[]), "empty"),
        (dict(scores=np.array([[1, 0, np.inf], [0, 0, 1]])), "infinite"),
        (dict(subtasks=["s"]), "subtasks has 1 entry"),
        (dict(option_probs=np.ones((2, 3, 4)) / 4), "must be given together"),
        (dict(option_probs=np.ones((2, 3, 4)) / 4, gold=[0, 1, 4]), "gold options must lie between 0 and 3"),
    ],
)
def test_bad_matrices_get_one_clear_sentence(overrides, message):
    with pytest.raises(MdadError, match=None) as info:
        tiny(**overrides)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_inputs_are_copied_not_modified():
    scores = np.array([[1, 0, 1], [0, 0, 1]], float)
    m = tiny(scores=scores)
    scores[0, 0] = 0
    assert m.scores[0, 0] == 1
    with pytest.raises(ValueError):
        m.scores[0, 0] = 0.5


def test_gold_prob_falls_back_to_scores_and_reads_gold_option():
    m = tiny()
    assert np.array_equal(m.gold_prob(), m.scores)
    probs = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3))
    gold = np.array([2, 0, 3])
    m = tiny(option_probs=probs, gold=gold)
    for i in range(2):
        for j in range(3):
            assert m.gold_prob()[i, j] == pytest.approx(probs[i, j, gold[j]], rel=1e-6)


def test_gold_prob_is_computed_once_and_cannot_be_changed():
    """The grid asks for it in every task: the same read-only array each time, and a matrix
    derived from this one (other models or items) computes its own."""
    probs = np.random.default_rng(1).dirichlet(np.ones(4), size=(3, 5))
    scores = (probs[:, :, 0] > 0.3).astype(float)
    m = tiny(scores=scores, models=["a", "b", "c"], items=list("ijklm"), subtasks=["s"] * 5, option_probs=probs, gold=np.array([0, 1, 2, 3, 0]))
    first = m.gold_prob()
    assert m.gold_prob() is first
    with pytest.raises(ValueError):
        first[0, 0] = 0.5
    part = m.take(models=np.array([2, 0]), items=np.array([4, 1]))
    np.testing.assert_array_equal(part.gold_prob(), first[np.ix_([2, 0], [4, 1])])


def test_missing_cells_policy():
    scores = np.array([[1, np.nan, 1], [0, 0, 1], [1, 1, 0]], float)
    m = tiny(scores=scores, models=["a", "b", "c"])
    with pytest.raises(MdadError, match="'a' misses 1 of 3"):
        m.require_complete()
    assert m.require_complete("drop-items").items.tolist() == ["i", "k"]
    assert m.require_complete("drop-models").models.tolist() == ["b", "c"]
    with pytest.raises(MdadError, match="Unknown missing-data policy"):
        m.require_complete("guess")


def test_npz_round_trip_with_option_probs(tmp_path):
    m = simulate(seed=1, n_models=20, n_items=30, n_subtasks=2)
    write_npz(m, tmp_path / "r.npz")
    back = read_npz(tmp_path / "r.npz")
    assert np.array_equal(back.scores, m.scores) and np.array_equal(back.option_probs, m.option_probs)
    assert back.models.tolist() == m.models.tolist() and back.subtasks.tolist() == m.subtasks.tolist()


def test_npz_refuses_pickled_objects(tmp_path):
    np.savez(tmp_path / "evil.npz", scores=np.array([{"x": 1}], dtype=object), models=["a"], items=["i"])
    with pytest.raises(MdadError, match="without pickled objects"):
        read_npz(tmp_path / "evil.npz")


def test_npz_missing_array_and_missing_file(tmp_path):
    np.savez(tmp_path / "r.npz", scores=np.zeros((2, 2)), models=["a", "b"])
    with pytest.raises(MdadError, match="lacks the array 'items'"):
        read_npz(tmp_path / "r.npz")
    with pytest.raises(MdadError, match="No such file"):
        read_npz(tmp_path / "absent.npz")


def test_named_dataset_needs_data_dir(monkeypatch, shared_data_dir):
    monkeypatch.delenv("MDAD_DATA_DIR", raising=False)
    with pytest.raises(MdadError, match="MDAD_DATA_DIR"):
        load_dataset("oll2-gpqa")
    monkeypatch.setenv("MDAD_DATA_DIR", str(shared_data_dir))
    m = load("oll2-gpqa")
    assert (m.n_models, m.n_items) == (420, 448) and "7b_instruct" in m.groups
    with pytest.raises(MdadError, match="No dataset 'nope'"):
        load("nope")


def test_real_data_loads_with_missing_cells(shared_data_dir):
    m = read_npz(shared_data_dir / "mmlu-pro-tiger" / "responses.npz")
    assert m.n_missing > 0 and len(m.subtask_names) == 14
    assert m.require_complete("drop-models").n_missing == 0


def test_simulator_is_deterministic_and_consistent():
    a, truth = simulate_with_truth(seed=7, n_models=60, n_items=200)
    b = simulate(seed=7, n_models=60, n_items=200)
    assert np.array_equal(a.scores, b.scores) and a.simulated
    # 0/1 correctness is exactly "the gold option has the highest probability"
    assert np.array_equal(a.scores == 1, a.option_probs.argmax(axis=2) == a.gold[None, :])
    np.testing.assert_allclose(a.option_probs.sum(axis=2), 1, atol=1e-5)
    # each model's number of correct answers follows the IRT probabilities it was drawn from (independent
    # Bernoulli draws): standardised residuals with mean about 0 and sd about 1 over the 60 models
    expected = truth.p_correct.sum(axis=1)
    z = (a.scores.sum(axis=1) - expected) / np.sqrt((truth.p_correct * (1 - truth.p_correct)).sum(axis=1))
    assert abs(z.mean()) < 0.4 and 0.75 < z.std() < 1.3
    # and a model's chance of a right answer never falls below its subtask's guessing floor
    assert (truth.p_correct >= truth.floor[None, :] - 1e-12).all() and truth.floor.max() > 0
    assert not np.array_equal(simulate(seed=8, n_models=60, n_items=200).scores, a.scores)


def test_repeated_models_with_identical_answers_are_merged(tmp_path):
    scores = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1]], float)
    np.savez(tmp_path / "r.npz", scores=scores, models=["a", "b", "a"], items=["i", "j", "k"])
    m = read_npz(tmp_path / "r.npz")
    assert m.models.tolist() == ["a", "b"] and np.array_equal(m.scores, scores[:2])
    assert m.notes == ("Model 'a' appears 2 times in r.npz with identical answers; one row is kept.",)
    scores[2, 0] = 0
    np.savez(tmp_path / "r.npz", scores=scores, models=["a", "b", "a"], items=["i", "j", "k"])
    with pytest.raises(MdadError, match="model 'a' appears 2 times with different answers"):
        read_npz(tmp_path / "r.npz")


def test_musr_loads_with_its_repeated_submissions_merged(shared_data_dir):
    m = read_npz(shared_data_dir / "oll2-musr" / "responses.npz")
    assert m.n_models == 448 - 19 and len(set(m.models)) == m.n_models
    (note,) = m.notes  # one line for the 19 repeated submissions
    assert note.startswith("19 models appear more than once in responses.npz with identical answers") and "one row of each is kept" in note


def test_mixed_items_use_option_probabilities_where_present_and_scores_elsewhere():
    """Multiple-choice items (gold >= 0) carry option probabilities, generation items (gold -1) do not:
    gold_prob and the methods built on it use each where it applies."""
    import mdad

    rng = np.random.default_rng(3)
    n_models, n_items = 12, 10
    probs = rng.dirichlet(np.ones(3), size=(n_models, n_items))
    gold = np.where(np.arange(n_items) < 6, rng.integers(0, 3, n_items), -1)
    probs[:, gold < 0] = np.nan
    scores = (rng.random((n_models, n_items)) < 0.5).astype(float)
    m = ResponseMatrix(
        scores=scores,
        models=[f"m{i}" for i in range(n_models)],
        items=[f"i{j}" for j in range(n_items)],
        subtasks=["mc"] * 6 + ["gen"] * 4,
        option_probs=probs,
        gold=gold,
    )
    expected = np.array([[probs[a, j, gold[j]] if gold[j] >= 0 else scores[a, j] for j in range(n_items)] for a in range(n_models)])
    np.testing.assert_allclose(m.gold_prob(), expected, rtol=1e-6)
    np.testing.assert_array_equal(m.option_items, gold >= 0)
    chosen = mdad.select(m, "anchor-points", 4)
    cols = [list(m.items).index(i) for i in chosen.item_ids]
    weights = np.asarray(chosen.micro.weights)
    np.testing.assert_allclose(chosen.estimate(m).to_numpy(), expected[:, cols] @ weights, rtol=1e-5)
    assert m.take(items=np.arange(6, 10)).option_probs is None  # generation items only: no option probabilities
