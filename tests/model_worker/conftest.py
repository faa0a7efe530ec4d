import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    # Tiny tensors: thread hand-offs would cost more than the arithmetic on a shared machine.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
