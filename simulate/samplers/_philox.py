"""Gaussian noise for the CPU sampler from a counter-based generator: Philox4x32-10 and Box-Muller.

Why. A ULA step needs one standard normal per parameter. torch's CPU normal sampler (a Mersenne
twister feeding Box-Muller) costs about 2.5 ns per float32 number on one core, a fifth of a step at
the seed-000 Fig. 2 configuration. Here the numbers come from a counter-based generator whose
rounds and transform are plain integer / floating-point arithmetic that the compiler vectorises.

Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC 2011): a keyed bijection of 128-bit counters. One round maps counter words (c0, c1, c2, c3)
and key (k0, k1) to

    (hi(M1 c2) ^ c1 ^ k0,  lo(M1 c2),  hi(M0 c0) ^ c3 ^ k1,  lo(M0 c0)),
    M0 = 0xD2511F53, M1 = 0xCD9E8D57, hi/lo the upper/lower 32 bits of the 64-bit product,

after which the key is advanced by the Weyl constants (0x9E3779B9, 0xBB67AE85); ten rounds.
The tests check the published known-answer vectors.

Each call draws 128 fresh bits from the caller's ``torch.Generator`` (key k0, k1 and counter words
c2, c3), so the torch generator stays the only random state (checkpoints and resume are exact) and
successive calls use unrelated streams. Counter i (words c0, c1 = its low and high 32 bits) gives
four words, two Box-Muller pairs:

    u1 = (w0 >> 8 + 1) / 2^24  in (0, 1],   u2 = (w1 >> 8) / 2^24  in [0, 1),
    z = sqrt(-2 ln u1) cos(2 pi u2),   z' = sqrt(-2 ln u1) sin(2 pi u2),

the same 24-bit resolution as a float32 uniform (|z| <= 5.77). ln, cos and sin are evaluated with
series accurate to about 1e-15 on their reduced ranges (ln on [1/sqrt 2, sqrt 2] by the
atanh series to s^17; sin / cos on [-pi/4, pi/4] to x^15 / x^14, with quadrant symmetry), so the
normals agree with libm's Box-Muller to a few 1e-15 (tested: 2e-14) before they are rounded.
The normals of a block of 512 counters fill 2048 consecutive elements (word w of counter r of the
block at offset 512 w + r; the last block is shorter), so every pass touches memory in order.

Kernels take arrays and scalars only; :func:`philox_normal_` and :func:`philox_ula_update` are the
validating wrappers.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import torch

from ..checks import check_generator_on

__all__ = ["philox_normal_", "philox_ula_update", "philox4x32"]

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_PM0 = _U(0xD2511F53)
_PM1 = _U(0xCD9E8D57)
_W0 = _U(0x9E3779B9)
_W1 = _U(0xBB67AE85)
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2 = 1.0 / _SQRT2
_LN2 = math.log(2.0)
_P52 = 2.0**-52
_ANG = 2.0 * math.pi * 2.0**-24
_QPI = math.pi / 4.0
_L3, _L5, _L7, _L9, _L11, _L13, _L15, _L17 = [1.0 / k for k in (3, 5, 7, 9, 11, 13, 15, 17)]
_S3, _S5, _S7, _S9, _S11, _S13, _S15 = [1.0 / (k * (k - 1)) for k in (3, 5, 7, 9, 11, 13, 15)]
_C4, _C6, _C8, _C10, _C12, _C14 = [1.0 / (k * (k - 1)) for k in (4, 6, 8, 10, 12, 14)]

# error_model="numpy": no Python zero-division checks, which would stop the loops vectorising
_jit = numba.njit(cache=True, error_model="numpy", nogil=True)


@numba.njit(inline="always", error_model="numpy")
def _rounds(c0, c1, c2, c3, k0, k1):
    a = k0
    b = k1
    for _ in range(10):
        p0 = _PM0 * c0
        p1 = _PM1 * c2
        n0 = (p1 >> _U(32)) ^ c1 ^ a
        n2 = (p0 >> _U(32)) ^ c3 ^ b
        c1 = p1 & _M32
        c3 = p0 & _M32
        c0 = n0
        c2 = n2
        a = (a + _W0) & _M32
        b = (b + _W1) & _M32
    return c0, c1, c2, c3


@numba.njit(inline="always", error_model="numpy")
def _box_muller(x, y):
    """Two standard normals from two 32-bit words (see the module doc)."""
    kk = (x >> _U(8)) + _U(1)  # 1 .. 2^24
    # e = floor(log2 kk) by a branch-free binary search
    e = _U(16) * _U((kk >> _U(16)) != _U(0))
    e += _U(8) * _U((kk >> (e + _U(8))) != _U(0))
    e += _U(4) * _U((kk >> (e + _U(4))) != _U(0))
    e += _U(2) * _U((kk >> (e + _U(2))) != _U(0))
    e += _U(1) * _U((kk >> (e + _U(1))) != _U(0))
    m = float(kk << (_U(52) - e)) * _P52  # kk / 2^e in [1, 2), exact
    ef = float(e)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    ef = ef + 1.0 if big else ef
    s = (m - 1.0) / (m + 1.0)  # ln m = 2 atanh s
    s2 = s * s
    poly = 1.0 + s2 * (_L3 + s2 * (_L5 + s2 * (_L7 + s2 * (_L9 + s2 * (
        _L11 + s2 * (_L13 + s2 * (_L15 + s2 * _L17)))))))
    ln_u = 2.0 * s * poly + (ef - 24.0) * _LN2
    rad = math.sqrt(-2.0 * ln_u)
    j = y >> _U(8)  # 0 .. 2^24 - 1: angle 2 pi j / 2^24
    q = j >> _U(22)  # quadrant
    t = float(j & _U(0x3FFFFF)) * _ANG - _QPI  # in [-pi/4, pi/4)
    t2 = t * t
    sn = t * (1.0 - t2 * _S3 * (1.0 - t2 * _S5 * (1.0 - t2 * _S7 * (1.0 - t2 * _S9 * (
        1.0 - t2 * _S11 * (1.0 - t2 * _S13 * (1.0 - t2 * _S15)))))))
    cs = 1.0 - t2 * 0.5 * (1.0 - t2 * _C4 * (1.0 - t2 * _C6 * (1.0 - t2 * _C8 * (
        1.0 - t2 * _C10 * (1.0 - t2 * _C12 * (1.0 - t2 * _C14))))))
    cb = (cs - sn) * _INV_SQRT2  # cos and sin of t + pi/4
    sb = (cs + sn) * _INV_SQRT2
    odd = (q & _U(1)) != _U(0)
    u = sb if odd else cb
    v = cb if odd else sb
    sc = -1.0 if (q == _U(1)) | (q == _U(2)) else 1.0
    ss = -1.0 if q >= _U(2) else 1.0
    return rad * u * sc, rad * v * ss


_CHUNK = 512  # counters per block: the words of a block stay in L1 between the two passes


@numba.njit(inline="always", error_model="numpy")
def _philox_block(start, m, k0, k1, c2, c3, words):
    """words[w, r] <- word w of counter start + r, r < m (a loop the compiler vectorises)."""
    for r in range(m):
        ii = _U(start + r)
        w0, w1, w2, w3 = _rounds(ii & _M32, ii >> _U(32), c2, c3, k0, k1)
        words[0, r] = w0
        words[1, r] = w1
        words[2, r] = w2
        words[3, r] = w3


@_jit
def _philox4x32_kernel(ctr, key, out):
    """Raw Philox4x32-10: out[r] = rounds(ctr[r], key) for rows of 4 words (uint64 holding 32 bits)."""
    for r in range(ctr.shape[0]):
        w = _rounds(ctr[r, 0], ctr[r, 1], ctr[r, 2], ctr[r, 3], key[0], key[1])
        for k in range(4):
            out[r, k] = w[k]


@numba.njit(inline="always", error_model="numpy")
def _block_normals(b, m, k0, k1, c2, c3, words, dst):
    """The normals of block b (counters b CHUNK + r, r < m) into ``dst`` (at most 4m elements):
    word w of counter r at w m + r, where that lies inside ``dst`` (the last block of an output
    may be cut). Stores go through slices indexed by the loop counter only (no negative-index
    wrap-around to check), which lets the compiler vectorise the loops."""
    _philox_block(b * _CHUNK, m, k0, k1, c2, c3, words)
    for p in range(2):
        oa = dst[2 * p * m:(2 * p + 1) * m]
        ob = dst[(2 * p + 1) * m:(2 * p + 2) * m]
        wa = words[2 * p]
        wb = words[2 * p + 1]
        k = min(m, oa.shape[0], ob.shape[0])
        for r in range(k):
            za, zb = _box_muller(wa[r], wb[r])
            oa[r] = za
            ob[r] = zb
        for r in range(k, oa.shape[0]):  # a pair whose second normal is cut
            oa[r] = _box_muller(wa[r], wb[r])[0]


@_jit
def _normal_kernel(k0, k1, c2, c3, out):
    """out (n,) float32/float64 <- standard normals of (key, counter words c2, c3).

    Layout: block b holds the 4m elements from e0 = 4 b CHUNK on (m = CHUNK, or fewer in the
    last block); word w of counter b CHUNK + r lands at e0 + w m + r, so each block touches one
    contiguous stretch of memory."""
    n = out.shape[0]
    words = np.empty((4, _CHUNK), dtype=np.uint64)
    for b in range((n + 4 * _CHUNK - 1) // (4 * _CHUNK)):
        e0 = 4 * _CHUNK * b
        m = min(_CHUNK, (n - e0 + 3) // 4)
        _block_normals(b, m, k0, k1, c2, c3, words, out[e0:e0 + 4 * m])


@_jit
def _ula_kernel(theta, g, out, eps, scale, k0, k1, c2, c3):
    """out = theta - eps * g + scale * xi, xi the normals of :func:`_normal_kernel` (same layout):
    per block the normals go to an L1-resident scratch first, then one contiguous update loop
    (fusing the two into one loop ran 1.6x slower in float64)."""
    n = out.shape[0]
    words = np.empty((4, _CHUNK), dtype=np.uint64)
    z = np.empty(4 * _CHUNK, dtype=np.float64)
    for b in range((n + 4 * _CHUNK - 1) // (4 * _CHUNK)):
        e0 = 4 * _CHUNK * b
        m = min(_CHUNK, (n - e0 + 3) // 4)
        _block_normals(b, m, k0, k1, c2, c3, words, z[:4 * m])
        e1 = min(e0 + 4 * m, n)
        o = out[e0:e1]
        t = theta[e0:e1]
        gg = g[e0:e1]
        for r in range(o.shape[0]):
            o[r] = t[r] - eps * gg[r] + scale * z[r]


def philox4x32(counter, key) -> np.ndarray:
    """Philox4x32-10 of counters (R, 4) under key (2,), all 32-bit words: (R, 4) uint64 array
    holding the output words (the raw generator, for known-answer tests)."""
    ctr = np.ascontiguousarray(np.asarray(counter, dtype=np.uint64).reshape(-1, 4))
    k = np.ascontiguousarray(np.asarray(key, dtype=np.uint64).reshape(2))
    if (ctr > 0xFFFFFFFF).any() or (k > 0xFFFFFFFF).any():
        raise ValueError("counter and key must hold 32-bit words (0 <= w < 2^32)")
    out = np.empty_like(ctr)
    _philox4x32_kernel(ctr, k, out)
    return out


def _draw_words(generator: torch.Generator):
    """Four 32-bit words from the torch generator: key (k0, k1) and counter words (c2, c3)."""
    check_generator_on(generator, "cpu", what="the Philox noise (a CPU tensor)")
    w = torch.randint(0, 2**32, (4,), generator=generator, dtype=torch.int64,
                      device=generator.device)
    return tuple(np.uint64(int(v)) for v in w.tolist())


def _cpu_flat(name, t: torch.Tensor) -> np.ndarray:
    if not torch.is_tensor(t) or t.device.type != "cpu" or t.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} must be a float32 or float64 CPU tensor, got "
                         f"{(t.dtype, str(t.device)) if torch.is_tensor(t) else type(t).__name__}")
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")
    return t.detach().view(-1).numpy()


def philox_normal_(out: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Fill the contiguous float32/float64 CPU tensor ``out`` with standard normals (module doc);
    draws four 32-bit words from ``generator``. Returns ``out``."""
    o = _cpu_flat("out", out)
    k0, k1, c2, c3 = _draw_words(generator)
    _normal_kernel(k0, k1, c2, c3, o)
    return out


def philox_ula_update(theta: torch.Tensor, g: torch.Tensor, out: torch.Tensor, *, step_size: float,
                      generator: torch.Generator) -> torch.Tensor:
    """``out = theta - step_size * g + sqrt(2 step_size) * xi`` in one pass, xi the normals that
    :func:`philox_normal_` would draw from the same generator state; theta, g, out contiguous CPU
    tensors of one float dtype and shape (out may be theta itself). Returns ``out``."""
    t, gg, o = _cpu_flat("theta", theta), _cpu_flat("g", g), _cpu_flat("out", out)
    if not (theta.shape == g.shape == out.shape and theta.dtype == g.dtype == out.dtype):
        raise ValueError(f"theta, g and out must share shape and dtype, got {tuple(theta.shape)} "
                         f"{theta.dtype}, {tuple(g.shape)} {g.dtype}, {tuple(out.shape)} {out.dtype}")
    k0, k1, c2, c3 = _draw_words(generator)
    _ula_kernel(t, gg, o, float(step_size), math.sqrt(2.0 * step_size), k0, k1, c2, c3)
    return out
