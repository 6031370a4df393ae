"""The erf_inv and float32 erf approximations' coefficients, shared by the eager impls
(devices) and the kernel expansions (lowering), so the two compute the same polynomials.

>>> len(GILES_CENTRAL), len(GILES_TAIL), len(ERF_F32_P), len(ERF_F32_Q)
(9, 9, 7, 5)
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

# Eigen's float32 erf (also XLA's): erf(x) = x P(x^2) / Q(x^2) on [-4, 4], where erf is 1
# to float32 precision beyond; relative error about 6e-7.
ERF_F32_P = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
ERF_F32_Q = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
