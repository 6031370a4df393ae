"""``ft.utils``: PyTorch's ``torch.utils`` spellings; ``ft.utils.data`` holds the data pipeline.

>>> import fntorch as ft
>>> len(ft.utils.data.TensorDataset(ft.zeros((4, 2))))
4
"""

from . import data
