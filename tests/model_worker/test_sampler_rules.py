"""Commit rules pick at least one masked position, only masked ones, as each rule defines."""

import pytest
import torch

from model_worker.sampler import SamplerConfig
from model_worker.sampler.rules import select

CONF = torch.tensor([[0.95, 0.30, 0.80, 0.99, 0.10, 0.60]])
CANDIDATES = torch.tensor([[True, True, True, False, True, True]])  # position 3 is already committed
ENTROPY = torch.tensor([[0.05, 1.50, 0.20, 0.00, 2.00, 0.10]])


def chosen(**kwargs) -> list[int]:
    picked = select(SamplerConfig(**kwargs), CONF, ENTROPY, CANDIDATES)
    return picked[0].nonzero().flatten().tolist()


def test_threshold_commits_every_confident_masked_position_and_never_a_committed_one():
    assert chosen(rule="threshold", threshold=0.7) == [0, 2]


def test_threshold_one_still_commits_the_single_most_confident_position():
    assert chosen(rule="threshold", threshold=1.0) == [0]


def test_threshold_zero_commits_the_whole_block():
    assert chosen(rule="threshold", threshold=0.0) == [0, 1, 2, 4, 5]


def test_factor_rule_takes_the_largest_n_with_n_plus_one_times_doubt_below_the_factor():
    # Sorted confidences 0.95, 0.80, 0.60: (2)(0.05)=0.1, (3)(0.2)=0.6, (4)(0.4)=1.6.
    assert chosen(rule="factor", factor=1.0) == [0, 2]
    assert chosen(rule="factor", factor=0.05) == [0]


def test_entropy_bound_takes_low_entropy_positions_while_the_sum_minus_the_largest_fits():
    # Sorted entropies 0.05, 0.10, 0.20, 1.50: sums minus largest 0, 0.05, 0.15, 0.35.
    assert chosen(rule="entropy", entropy_bound=0.3) == [0, 2, 5]
    assert chosen(rule="entropy", entropy_bound=0.0) == [0]


def test_topk_commits_k_positions_or_what_is_left():
    assert chosen(rule="topk", k=2) == [0, 2]
    assert chosen(rule="topk", k=9) == [0, 1, 2, 4, 5]


def test_a_row_without_masked_positions_commits_nothing():
    none = torch.zeros_like(CANDIDATES)
    assert not select(SamplerConfig(rule="topk", k=3), CONF, ENTROPY, none).any()


def test_an_unknown_rule_is_refused_with_the_valid_ones_listed():
    with pytest.raises(ValueError, match=r"unknown commit rule 'greedy'.*threshold, factor, entropy, topk"):
        SamplerConfig(rule="greedy")


@pytest.mark.parametrize("field,value", [("threshold", 1.5), ("k", 0), ("max_new_tokens", 0), ("temperature", -1.0)])
def test_out_of_range_settings_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        SamplerConfig(**{field: value})


# Position 0 committed: the leftmost masked position (1, confidence 0.30) is not the most confident (3).
LATER = torch.tensor([[False, True, True, True, True, True]])


def test_leftmost_fallback_commits_the_next_position_when_nothing_is_confident():
    picked = select(SamplerConfig(rule="threshold", threshold=1.0, fallback="leftmost"), CONF, None, LATER)
    assert picked[0].nonzero().flatten().tolist() == [1]
    picked = select(SamplerConfig(rule="threshold", threshold=1.0), CONF, None, LATER)
    assert picked[0].nonzero().flatten().tolist() == [3]  # the published rule takes the most confident


def test_leftmost_fallback_adds_the_next_position_to_the_confident_ones():
    picked = select(SamplerConfig(rule="threshold", threshold=0.9, fallback="leftmost"), CONF, None, LATER)
    assert picked[0].nonzero().flatten().tolist() == [1, 3]


def test_an_unknown_fallback_is_refused_with_the_valid_ones_listed():
    with pytest.raises(ValueError, match=r"unknown fallback 'random'.*confident, leftmost, prefix"):
        SamplerConfig(fallback="random")


def test_prefix_fallback_commits_only_the_confident_run_that_starts_at_the_next_position():
    def prefix(conf):
        picked = select(SamplerConfig(rule="threshold", threshold=0.9, fallback="prefix"), torch.tensor([conf]),
                        None, LATER)
        return picked[0].nonzero().flatten().tolist()

    assert prefix([0.95, 0.91, 0.95, 0.99, 0.10, 0.96]) == [1, 2, 3]  # 5 is confident but after a gap
    assert prefix([0.95, 0.30, 0.95, 0.99, 0.10, 0.96]) == [1]  # the next one is a guess: nothing after it


def test_prefix_threshold_matches_a_slot_by_slot_reading_of_the_rule():
    """Random rows: the next masked slot always and, only if it is itself confident, each later masked
    slot while it is confident; committed slots neither stop the run nor are taken again."""
    g = torch.Generator().manual_seed(0)
    conf = torch.rand(200, 12, generator=g)
    candidates = torch.rand(200, 12, generator=g) < 0.7
    picked = select(SamplerConfig(rule="threshold", threshold=0.5, fallback="prefix"), conf, None, candidates)
    for row in range(200):
        expected, started = [], False
        for j in range(12):
            if not candidates[row, j]:
                continue
            if not started:
                expected.append(j)
                started = True
                if conf[row, j] < 0.5:
                    break
            elif conf[row, j] >= 0.5:
                expected.append(j)
            else:
                break
        assert picked[row].nonzero().flatten().tolist() == expected
