"""Arithmetic whose results are the same on every machine, where a selection decides on them.

A matrix product's rounding depends on the BLAS kernel the CPU selects (its blocking, vector
width and use of fused multiply-add) and on the number of threads, so a choice that compares
products (the nearest centre, the smallest distance, which item is a duplicate of which) can
change with the machine. Two tools remove that dependence (docs/reproducibility.md):

- :func:`integer_grid` rounds values to integers on a dyadic grid coarse enough that every
  product and partial sum of a matrix product with ``terms`` terms is an integer below 2**53:
  the product is then exact, whatever the kernel, the order of summation or FMA;
- :func:`snap` rounds values to a grid relative to their magnitude, so that numbers that are
  equal in exact arithmetic but were computed with different rounding become the same number
  and their ties can be broken by index; :func:`on_estimate_grid` does so for accuracy
  estimates, on a fixed grid of 2**-30, so that two models with the same answers get the same
  estimate to the bit (a tie) on every machine.
"""

from __future__ import annotations

import math

import numpy as np

MANTISSA_BITS = 53  # float64 holds every integer below 2**53 exactly
SNAP_BITS = 20  # relative resolution of ``snap``: 2**-20 (about 1e-6) of the largest magnitude
ESTIMATE_BITS = 30  # accuracy estimates are multiples of 2**-30 (about 1e-9)


def product_bits(terms: int) -> int:
    """Bits per factor for which a sum of ``terms`` products of two integers below 2**bits in
    magnitude stays below 2**53 at every partial sum (exact in float64)."""
    return (MANTISSA_BITS - math.ceil(math.log2(max(int(terms), 1)))) // 2


def power_of_two_above(value: float) -> float:
    """The smallest power of two at least ``value`` (1.0 for zero): an exact, rounding-free scale."""
    value = float(value)
    if not value > 0 or not math.isfinite(value):
        return 1.0
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
    return math.ldexp(1.0, exponent - 1 if mantissa == 0.5 else exponent)


def integer_grid(values: np.ndarray, bits: int, *, axis: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``values`` as integers (float64) of at most ``bits`` bits, and the unit they count.

    unit = 2**-bits times the smallest power of two at least the largest magnitude (along
    ``axis``: one unit per slice); values = integers * unit up to half a unit."""
    values = np.asarray(values, dtype=np.float64)
    largest = np.max(np.abs(values), axis=axis, keepdims=axis is not None, initial=0.0)
    scale = np.vectorize(power_of_two_above, otypes=[np.float64])(largest)
    unit = np.ldexp(scale, -int(bits))
    return np.rint(values / unit), unit


def snap(values: np.ndarray, bits: int = SNAP_BITS, *, axis: int | None = None) -> np.ndarray:
    """``values`` rounded to multiples of 2**-bits of their largest magnitude's power of two
    (along ``axis``: per slice). Rounding is symmetric, so snap(-x) == -snap(x)."""
    integers, unit = integer_grid(values, bits, axis=axis)
    return integers * unit


def on_estimate_grid(estimates: np.ndarray) -> np.ndarray:
    """Accuracy estimates rounded to multiples of 2**-30 (about 1e-9), NaN kept: far below any
    difference between models, and coarse enough that estimates equal in exact arithmetic
    (models with the same answers) are equal numbers, whatever the rounding of the machine."""
    return np.ldexp(np.rint(np.ldexp(np.asarray(estimates, dtype=np.float64), ESTIMATE_BITS)), -ESTIMATE_BITS)
