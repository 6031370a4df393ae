"""Scripts run in MPI processes are not tests of their own."""

collect_ignore = ["scripts"]
