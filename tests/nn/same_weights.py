"""What the ``*_vs_torch`` tests share: PyTorch's weights loaded into the fntorch module,
with the state_dict keys, order and shapes checked."""


def _same_weights(ours, theirs):
    ours.load_state_dict(theirs.state_dict())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
