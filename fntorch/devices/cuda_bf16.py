"""bfloat16 on the GPU: 16-bit storage that CuPy holds, arithmetic that fntorch does.

CuPy has no bfloat16 dtype. A bfloat16 tensor on a CUDA device holds a ``Bf16Array``:
a CuPy ``uint16`` array of the values' bits, reporting ``dtype`` bfloat16 (ml_dtypes',
the CPU's) so the tensor, the tracer and the abstract rules see bfloat16 as everywhere
else.

- **Eagerly**, every impl of the CUDA table is wrapped (``bf16_aware``): when an
  operand is a ``Bf16Array`` or a parameter names bfloat16 (a cast to it, a product's
  ``preferred_element_type``), the operands are widened to float32 (exact: a bfloat16
  is the top half of a float32), the float32 impl runs with bfloat16 parameters read
  as float32, and each result the primitive's abstract rule types bfloat16 is rounded
  back to nearest-even, NaNs kept quiet with their sign (ml_dtypes' rounding, so a
  single operation gives the CPU's bits). This is PyTorch's own scheme for bfloat16
  elementwise math on the GPU: compute in float32 registers, store 16 bits.
- **Under jit** the kernels already read and write bfloat16 as 16-bit storage with
  their own rounding (``cuda_codegen``: ``i16`` loads, the narrow-float rules of
  ``lowering.codegen``); a program hands them the ``uint16`` bits (``bits_of``) and
  wraps the bits its kernels write (``Bf16Array``).

The conversions are CuPy elementwise kernels compiled from the CUDA C below, one
launch each, integer arithmetic on the bits. A float64 result is rounded to bfloat16
once, never through float32 (which would round twice). DLPack has a bfloat16 code but
CuPy cannot export it: ``__dlpack__`` of such a tensor raises and says to cast first.

>>> Bf16Array.dtype
dtype(bfloat16)
"""

from __future__ import annotations

import functools

import numpy as np

from ..fx import dtypes as dt
from ..fx.core import abstract_eval_rules
from ._device import cpu_impls

BF16 = np.dtype(dt.bfloat16)
F32 = np.dtype(np.float32)

_TO_F32 = "f = __uint_as_float(((unsigned int)b) << 16)"
# Round to nearest even on the top 16 bits; a NaN keeps its sign and becomes quiet.
_ROUND = """
unsigned int u = __float_as_uint(v);
if ((u & 0x7fffffffu) > 0x7f800000u) b = (unsigned short)((u >> 16) | 0x40u);
else b = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
"""
_FROM_F32 = "float v = f;" + _ROUND
# float64: rounded once, on the bits (a float64 -> float32 -> bfloat16 chain rounds twice,
# and the GPU's float conversions flush float32 subnormals), as the CPU's cast does.
_FROM_F64 = """
unsigned long long u = (unsigned long long)__double_as_longlong(d);
unsigned int s = (unsigned int)(u >> 48) & 0x8000u;
unsigned long long a = u & 0x7fffffffffffffffULL;
unsigned int r;
if (a > 0x7ff0000000000000ULL) {
  r = 0x7fc0u;
} else {
  int e = (int)(a >> 52) - 1023 + 127;
  unsigned long long m = a & 0xfffffffffffffULL;
  if (e >= 255) {
    r = 0x7f80u;
  } else if (e > 0) {
    unsigned long long c = ((unsigned long long)e << 52) | m;
    r = (unsigned int)((c + 0xfffffffffffULL + ((c >> 45) & 1ULL)) >> 45);
  } else {
    int shift = 46 - e;
    unsigned long long mm = (a >> 52) ? (m | (1ULL << 52)) : m;
    r = shift >= 63 ? 0u
        : (unsigned int)((mm + ((1ULL << (shift - 1)) - 1ULL) + ((mm >> shift) & 1ULL)) >> shift);
  }
}
b = (unsigned short)(s | r);
"""


class Bf16Array:
    """A bfloat16 CuPy buffer: ``bits`` (``uint16``) with bfloat16's ``dtype``.

    >>> import numpy as np
    >>> a = Bf16Array(np.zeros((2, 3), np.uint16))
    >>> a.shape, a.dtype, a.nbytes
    ((2, 3), dtype(bfloat16), 12)
    """

    __slots__ = ("bits",)
    dtype = BF16
    itemsize = 2

    def __init__(self, bits):
        self.bits = bits

    shape = property(lambda self: self.bits.shape)
    ndim = property(lambda self: self.bits.ndim)
    size = property(lambda self: self.bits.size)
    nbytes = property(lambda self: self.bits.nbytes)
    strides = property(lambda self: self.bits.strides)
    flags = property(lambda self: self.bits.flags)
    data = property(lambda self: self.bits.data)
    device = property(lambda self: self.bits.device)

    def __len__(self):
        return len(self.bits)

    def __repr__(self):
        return f"Bf16Array(shape={self.shape})"

    def __dlpack__(self, *args, **kwargs):
        raise TypeError(
            "__dlpack__: a bfloat16 tensor on the GPU cannot be exported by DLPack (CuPy "
            "has no bfloat16 dtype); cast it to float32 first, e.g. t.float()"
        )

    __dlpack_device__ = __dlpack__


@functools.cache
def _kernels(cp):
    ek = cp.ElementwiseKernel
    return (
        ek("uint16 b", "float32 f", _TO_F32, "fntorch_bf16_to_f32"),
        ek("float32 f", "uint16 b", _FROM_F32, "fntorch_f32_to_bf16"),
        ek("float64 d", "uint16 b", _FROM_F64, "fntorch_f64_to_bf16"),
    )


def widen(cp, a):
    """``a``'s values as a float32 CuPy array (exact)."""
    return _kernels(cp)[0](a.bits)


def narrow(cp, x) -> Bf16Array:
    """``x`` (a CuPy array, or anything ``cupy.asarray`` takes) rounded to bfloat16."""
    x = cp.asarray(x)
    if x.dtype == np.float64:
        return Bf16Array(_kernels(cp)[2](x))
    return Bf16Array(_kernels(cp)[1](x.astype(F32, copy=False)))


def to_device(cp, host):
    """A host array (or scalar) on the current GPU: bfloat16 as ``from_host``, else a
    CuPy copy. A 0-d array goes through a 1-element one: CuPy makes a 0-d array with
    ``fill``, which writes zeros with a memset, so its -0.0 would arrive as +0.0.

    >>> bool(np.signbit(to_device(np, np.float32(-0.0))))  # numpy standing in for CuPy
    True
    """
    host = np.asarray(host)
    if host.dtype == BF16:
        return from_host(cp, host)
    if host.ndim == 0:
        return cp.array(host.reshape(1), copy=True).reshape(())
    return cp.array(host, copy=True)


def as_device(cp, x):
    """``x`` itself where it is on the GPU already (a CuPy or ``Bf16Array`` buffer), else
    ``to_device``: what the impls use for operands that may be host values (a compiled
    program's literal operands), where ``cupy.asarray`` would make -0.0 into +0.0.

    >>> a = np.ones(3)  # numpy standing in for CuPy
    >>> as_device(np, a) is a, float(as_device(np, -0.0))
    (True, -0.0)
    """
    return x if isinstance(x, (cp.ndarray, Bf16Array)) else to_device(cp, x)


def from_host(cp, host) -> Bf16Array:
    """A host bfloat16 array on the current GPU (its bits copied)."""
    host = np.asarray(host)  # (np.ascontiguousarray would make a 0-d array 1-d)
    if not host.flags.c_contiguous:
        host = host.copy(order="C")
    return Bf16Array(cp.asarray(host.view(np.uint16)))


def to_host(cp, a) -> np.ndarray:
    """A host copy of ``a``'s values (ml_dtypes' bfloat16)."""
    return cp.asnumpy(a.bits).view(BF16)


def bits_of(a):
    """What a kernel reads of a buffer: a ``Bf16Array``'s bits, any other as it is."""
    return a.bits if type(a) is Bf16Array else a


def _names_bf16(params) -> bool:
    return any(isinstance(v, np.dtype) and v == BF16 for v in params.values())


def _as_f32(v):
    return F32 if isinstance(v, np.dtype) and v == BF16 else v


# Primitives whose bfloat16 operands must stay bfloat16: their sub-programs are typed.
_PASS_THROUGH = frozenset({"cond", "while_loop", "scan", "jit_call"})
# Primitives whose bfloat16 result is not float32's rounded (the next bfloat16 after x
# is no float32 step away; a running sum or product rounds at every step on the CPU):
# the CPU impl on the host copies.
_ON_HOST = frozenset({"nextafter", "cumsum", "cumprod"})


def bf16_aware(cp, prim, impl):
    """``impl`` taking and giving ``Bf16Array`` where bfloat16 is involved (the module
    docstring says how); the plain call otherwise, after one scan of the operands."""
    if prim.name in _PASS_THROUGH:
        return impl
    rule = abstract_eval_rules.get(prim)

    host = cpu_impls.get(prim) if prim.name in _ON_HOST else None
    cast = prim.name == "convert_element_type"

    def run(*args, **params):
        for a in args:
            if type(a) is Bf16Array:
                break
        else:
            if not params or not _names_bf16(params):
                return impl(*args, **params)
        if host is not None:
            got = host(*[to_host(cp, a) if type(a) is Bf16Array else a for a in args], **params)
            return narrow(cp, got) if got.dtype != BF16 else from_host(cp, got)
        if cast and params.get("new_dtype") == BF16:
            # rounded once from the operand itself: a float64 through float32 rounds twice
            return narrow(cp, args[0]) if type(args[0]) is not Bf16Array else args[0]
        out_avals = rule(*args, **params)
        wide = [widen(cp, a) if type(a) is Bf16Array else a for a in args]
        out = impl(*wide, **{k: _as_f32(v) for k, v in params.items()})
        if prim.multiple_results:
            return [narrow(cp, o) if av.dtype == BF16 else o for o, av in zip(out, out_avals)]
        return narrow(cp, out) if out_avals.dtype == BF16 else out

    if hasattr(impl, "through_host"):  # host_primitives still lists it
        run.through_host = impl.through_host
    return run
