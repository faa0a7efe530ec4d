"""The repair command's figures: render-check pass rate before and after each round of repairs."""

from __future__ import annotations

import pytest

from model_worker.contract.pages import PageRequest
from model_worker.lab.repair import repair_run
from tests.support.denoiser import DeterministicDenoiser


@pytest.mark.browser
def test_a_page_fixed_by_the_second_repair_counts_after_it_and_not_before():
    result = repair_run(DeterministicDenoiser(), [PageRequest(question="[[broken]] Why do planets orbit?")],
                        attempts=2)
    assert (result["passed_before"], result["passed_after_each_repair"]) == (0, [0, 1])
    assert result["still_failing"] == [] and len(result["tokens"]) == 3


def test_a_request_that_writes_no_page_counts_as_failing_without_a_render_check():
    result = repair_run(DeterministicDenoiser(), [PageRequest(question="[[fail]] What is friction?")], attempts=1)
    assert (result["passed_before"], result["passed_after"]) == (0, 0)
    assert "asked to fail" in result["still_failing"][0]
