from ._hello import *  # noqa: F401,F403
