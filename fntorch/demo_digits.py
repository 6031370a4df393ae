"""The demo's PyTorch-style part: a small CNN on 8x8 digits, eager (the tape) and compiled.

The images are scikit-learn's bundled handwritten digits when scikit-learn is installed
(the notebooks extra has it); otherwise the demo draws its own: ten 5x7 glyphs, shifted
and thickened at random and blurred with noise. The demo must run on the plain install,
and a 150 MB dependency is not worth a few seconds of it.
"""

from __future__ import annotations

import time

import numpy as np

import fntorch as torch
import fntorch.nn as nn
from fntorch.nn import functional as F
from fntorch.utils.data import DataLoader, TensorDataset

_GLYPHS = """
.###. ..#.. .###. ####. ...#. ##### ..##. ##### .###. .###.
#...# .##.. #...# ....# ..##. #.... .#... ....# #...# #...#
#..## ..#.. ....# ...#. .#.#. ####. #.... ...#. #...# #...#
#.#.# ..#.. ...#. ..##. #..#. ....# ####. ..#.. .###. .####
##..# ..#.. ..#.. ....# ##### ....# #...# .#... #...# ....#
#...# ..#.. .#... #...# ...#. #...# #...# .#... #...# ...#.
.###. .###. ##### .###. ...#. .###. .###. .#... .###. .##..
"""


def synthetic_digits(n: int = 1800, seed: int = 0):
    """``(images, labels)``: ``n`` noisy 8x8 renderings of the ten glyphs above.

    >>> images, labels = synthetic_digits(20)
    >>> images.shape, images.dtype, sorted(set(labels.tolist()))[:3]
    ((20, 8, 8), dtype('float32'), [0, 1, 2])
    """
    rows = [line.split() for line in _GLYPHS.strip().splitlines()]
    glyphs = np.array([[[c == "#" for c in row[d]] for row in rows] for d in range(10)], float)
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 10
    images = np.zeros((n, 8, 8))
    for i, d in enumerate(labels):
        g = glyphs[d]
        if rng.random() < 0.5:  # a bolder stroke
            g = np.maximum(g, np.roll(g, 1, axis=1) * (np.arange(5) > 0))
        r, c = rng.integers(0, 2), rng.integers(0, 4)
        images[i, r : r + 7, c : c + 5] = g
    blurred = (images + 0.25 * (np.roll(images, 1, 1) + np.roll(images, 1, 2))) / 1.5
    noisy = blurred + 0.15 * rng.standard_normal(images.shape)
    return np.clip(noisy, 0.0, 1.0).astype(np.float32), labels.astype(np.int64)


def load_images():
    """``(images, labels, where they came from)``, images in [0, 1]."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        return (*synthetic_digits(), "synthetic 8x8 glyphs (scikit-learn is not installed)")
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    return images, digits.target.astype(np.int64), "scikit-learn's handwritten digits"


class Net(nn.Module):
    """Conv-BatchNorm-ReLU-MaxPool twice, dropout and a linear layer, as PyTorch code.

    >>> Net()(torch.zeros(2, 1, 8, 8)).shape
    (2, 10)
    """

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


def _run(compiled: bool, start: dict, data, epochs: int):
    """``(model, seconds per step after the first)``: Adam on ``data`` from ``start``."""
    model = Net()
    model.load_state_dict(start)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = torch.compile(step)  # the whole step, tape and update, in one program
    loader = DataLoader(
        data, batch_size=64, shuffle=True, drop_last=True,
        generator=torch.Generator().manual_seed(1),
    )  # fmt: skip
    times = []
    for _ in range(epochs):
        for x, y in loader:
            t0 = time.perf_counter()
            step(x, y).item()
            times.append(time.perf_counter() - t0)
    return model, float(np.median(times[1:]))  # the first call traces and compiles


def tour_digits(epochs: int = 3) -> None:
    print("\n== PyTorch-style: a CNN on 8x8 digits (nn, optim, loss.backward()) ==")
    images, labels, source = load_images()
    order = np.random.default_rng(0).permutation(len(labels))
    cut = int(0.8 * len(labels))
    train, test = order[:cut], order[cut:]
    x_test, y_test = torch.tensor(images[test, None]), torch.tensor(labels[test])
    data = TensorDataset(torch.tensor(images[train, None]), torch.tensor(labels[train]))
    print(f"data: {source}; {len(train)} to train on, {len(test)} held out")
    torch.manual_seed(0)
    start = Net().state_dict()
    for mode in ("eager", "compiled"):
        model, per_step = _run(mode == "compiled", start, data, epochs)
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(
            f"{mode:8s} {epochs} epochs: test accuracy {acc:.3f}, "
            f"{per_step * 1e3:.2f} ms per step (batch 64)"
        )
