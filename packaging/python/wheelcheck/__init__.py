"""wheelcheck: will this wheel's native code load and work in that image?

The package holds no Python code of its own beyond finding the static binary pip installed beside it:
`wheelcheck` on PATH is that binary, and `python -m wheelcheck` runs it (see __main__.py).
"""
import os
import sysconfig

__all__ = ["find_wheelcheck_bin"]


def find_wheelcheck_bin() -> str:
    """The wheelcheck binary this installation put in a scripts folder: the interpreter's own scheme
    (a venv, a system install), the user scheme (pip install --user), or a --target folder's bin/."""
    exe = "wheelcheck"
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # pip install --target DIR puts the package in DIR/ and the scripts in DIR/bin/
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", exe))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("the wheelcheck binary is not where pip installs it; looked in: " + ", ".join(candidates))

