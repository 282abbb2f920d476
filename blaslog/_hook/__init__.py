"""The start-up hook `blaslog record` puts first on the recorded command's PYTHONPATH.

Its one module, ``sitecustomize``, runs in every Python process of the recorded command before any user code:
it names the BLAS libraries' log files by the process's rank and writes what it learns about the process
(rank, pid, library versions, torch's matmul settings) into the run folder. It uses the standard library only,
so that it runs under any Python the command uses, and never fails the process it runs in.
"""
