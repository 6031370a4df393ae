"""``ft.amp.GradScaler``: PyTorch's loss scaling for float16 training.

The scale is a float32 number kept on the host (PyTorch keeps a 0-d device tensor so
that a GPU never syncs for it; fntorch's eager steps read the gradients' finiteness on
the host anyway). Its arithmetic is float32's, as PyTorch's in-place updates are, so a
run's scales equal PyTorch's step by step.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

from ..fx import dtypes as dt
from ..fx.cell import Cell
from ..fx.core import Tensor
from ..fx.device import devices as _devices
from ..ops import api

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


def _fresh_state() -> dict:
    return {"stage": _READY, "found_inf": None}


class GradScaler:
    """PyTorch's ``torch.amp.GradScaler``: ``scale(loss)`` multiplies the loss by the
    scale, so that small float16 gradients do not flush to zero; ``step(optimizer)``
    unscales the gradients (unless ``unscale_`` did) and skips the optimizer's step when
    one of them is inf or NaN; ``update()`` multiplies the scale by ``backoff_factor``
    after a skipped step, and by ``growth_factor`` after ``growth_interval`` steps in a
    row without one. ``enabled=False`` makes every method a passthrough. For ``"cuda"``
    without a CUDA device it warns and disables itself, as PyTorch's does.

    >>> import fntorch as ft
    >>> w = ft.nn.Parameter(ft.ones(2))
    >>> opt = ft.optim.SGD([w], lr=0.1)
    >>> scaler = ft.amp.GradScaler("cpu", init_scale=1024.0)
    >>> scaler.scale((w * w).sum()).backward()
    >>> w.grad.tolist()
    [2048.0, 2048.0]
    >>> scaler.step(opt); scaler.update(); w.tolist(), scaler.get_scale()
    ([0.800000011920929, 0.800000011920929], 1024.0)
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if device not in ("cpu", "cuda"):
            raise ValueError(f"GradScaler: device must be 'cpu' or 'cuda', got {device!r}")
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda" and not any(d.type == "cuda" for d in _devices()):
            warnings.warn(
                "GradScaler: device 'cuda' was given but no CUDA device is available; "
                "the scaler is disabled",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
            if backoff_factor >= 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be < 1.0, got {backoff_factor}")
        self._scale = np.float32(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._states: dict[int, dict] = {}

    # ------------------------------------------------------------------ scaling

    def scale(self, outputs):
        """``outputs`` (a tensor, or a list/tuple/iterable of them) times the scale; the
        product is computed in float32 and has each output's dtype, as PyTorch's.

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu", init_scale=8.0).scale(ft.asarray(0.5)).item()
        4.0
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return self._scale_one(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, Iterable):
            return map(self.scale, outputs)
        raise ValueError(
            f"GradScaler.scale: outputs must be a tensor or an iterable of tensors, "
            f"got {type(outputs).__name__}"
        )

    def _scale_one(self, t: Tensor) -> Tensor:
        s = float(self._scale)
        if t.dtype == dt.float32:
            # ``s`` is a float32 value; as a weak Python scalar it belongs to no device
            # (a GPU loss is scaled on the GPU) and multiplies in float32
            return t * s
        return (api.astype(t, dt.float32) * s).astype(t.dtype)

    def _grads(self, optimizer):
        """``(param, grad)`` of every parameter of ``optimizer`` that has a gradient."""
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                yield p, (g.data if isinstance(g, Cell) else g)

    def unscale_(self, optimizer) -> None:
        """Divides ``optimizer``'s gradients by the scale in place (``p.grad`` rebound)
        and records whether one of them is inf or NaN; call it before clipping gradients.
        ``step`` then does not unscale again.

        >>> import fntorch as ft
        >>> w = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.SGD([w], lr=0.1)
        >>> scaler = ft.amp.GradScaler("cpu", init_scale=4.0)
        >>> scaler.scale(w.sum()).backward(); scaler.unscale_(opt); w.grad.tolist()
        [1.0]
        """
        if not self._enabled:
            return
        state = self._states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] == _UNSCALED:
            raise RuntimeError(
                "GradScaler.unscale_: unscale_() has already been called on this optimizer "
                "since the last update()"
            )
        if state["stage"] == _STEPPED:
            raise RuntimeError("GradScaler.unscale_: unscale_() is being called after step()")
        # The reciprocal in float64, rounded to float32 (PyTorch's: exact for powers of 2).
        inv = float(np.float32(1.0 / np.float64(self._scale)))
        found = None
        for p, g in self._grads(optimizer):
            if g.dtype == dt.float16:
                raise ValueError(
                    "GradScaler.unscale_: Attempting to unscale FP16 gradients (parameter "
                    f"of shape {tuple(p.shape)}); keep the parameters in float32 and run the "
                    "float16 math under ft.autocast"
                )
            p.grad = g * inv
            bad = api.any(api.logical_not(api.isfinite(g)))
            found = bad if found is None else api.logical_or(found, bad)
        state["found_inf"] = None if found is None else bool(found)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` unless a gradient is inf or NaN (then the
        step is skipped and None returned); unscales first if ``unscale_`` was not called.

        >>> import fntorch as ft
        >>> w = ft.nn.Parameter(ft.ones(1)); opt = ft.optim.SGD([w], lr=0.1)
        >>> scaler = ft.amp.GradScaler("cpu")
        >>> w.grad = ft.asarray([float("inf")]); scaler.step(opt); w.tolist()
        [1.0]
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError(
                "GradScaler.step: a closure is not supported while the scaler is enabled"
            )
        state = self._states.setdefault(id(optimizer), _fresh_state())
        if state["stage"] == _STEPPED:
            raise RuntimeError(
                "GradScaler.step: step() has already been called since the last update()"
            )
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise RuntimeError(
                "GradScaler.step: no inf checks were recorded for this optimizer (none of "
                "its parameters has a .grad); call backward() on the scaled loss first"
            )
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Updates the scale for the next iteration: ``new_scale`` if given, else backed
        off after a skipped step or grown after ``growth_interval`` good steps.

        >>> import fntorch as ft
        >>> scaler = ft.amp.GradScaler("cpu"); scaler.update(8.0); scaler.get_scale()
        8.0
        """
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.size != 1:
                    raise ValueError(
                        "GradScaler.update: new_scale must be a float or a 1-element "
                        f"tensor, got a tensor of shape {tuple(new_scale.shape)}"
                    )
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            found = [s["found_inf"] for s in self._states.values() if s["found_inf"] is not None]
            if not found:
                raise RuntimeError(
                    "GradScaler.update: no inf checks were recorded prior to update(); "
                    "call step(optimizer) (or unscale_) first"
                )
            if any(found):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if np.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._states = {}

    # ------------------------------------------------------------- accessors

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled).

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu").get_scale()
        65536.0
        """
        return float(self._scale) if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by.

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu").get_growth_factor()
        2.0
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Sets the factor the scale grows by.

        >>> import fntorch as ft
        >>> s = ft.amp.GradScaler("cpu"); s.set_growth_factor(4.0); s.get_growth_factor()
        4.0
        """
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a skipped step.

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu").get_backoff_factor()
        0.5
        """
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Sets the factor the scale shrinks by.

        >>> import fntorch as ft
        >>> s = ft.amp.GradScaler("cpu"); s.set_backoff_factor(0.25); s.get_backoff_factor()
        0.25
        """
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """How many steps in a row without inf/NaN gradients grow the scale.

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu").get_growth_interval()
        2000
        """
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Sets the growth interval.

        >>> import fntorch as ft
        >>> s = ft.amp.GradScaler("cpu"); s.set_growth_interval(10); s.get_growth_interval()
        10
        """
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False: every method passes through).

        >>> import fntorch as ft
        >>> ft.amp.GradScaler("cpu", enabled=False).is_enabled()
        False
        """
        return self._enabled

    def state_dict(self) -> dict:
        """PyTorch's five entries (``scale``, ``growth_factor``, ``backoff_factor``,
        ``growth_interval``, ``_growth_tracker``); empty when disabled.

        >>> import fntorch as ft
        >>> sorted(ft.amp.GradScaler("cpu").state_dict())
        ['_growth_tracker', 'backoff_factor', 'growth_factor', 'growth_interval', 'scale']
        """
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Loads what ``state_dict`` returned (PyTorch's too); a no-op when disabled.

        >>> import fntorch as ft
        >>> a = ft.amp.GradScaler("cpu", init_scale=4.0); b = ft.amp.GradScaler("cpu")
        >>> b.load_state_dict(a.state_dict()); b.get_scale()
        4.0
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "GradScaler.load_state_dict: the state dict is empty, possibly because it "
                "was saved from a disabled GradScaler"
            )
        self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    def __repr__(self):
        return (
            f"GradScaler(device={self._device!r}, scale={self.get_scale()}, "
            f"enabled={self._enabled})"
        )
