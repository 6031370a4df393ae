"""fntorch\x27s version: one place that the package and the kernel cache\x27s key read."""

__version__ = "0.1.0"
