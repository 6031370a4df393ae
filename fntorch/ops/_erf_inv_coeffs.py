"""The erf_inv approximation's coefficients, shared by the eager impl (devices) and the
kernel expansion (lowering), so the two compute the same polynomial.

>>> len(GILES_CENTRAL), len(GILES_TAIL)
(9, 9)
"""

# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision.
GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
GILES_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)
