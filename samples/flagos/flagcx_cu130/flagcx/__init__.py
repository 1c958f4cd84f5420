# FlagCX (CUDA 13 build): the torch backend entry point (torch.backends: flagcx = flagcx:init).
def init():
    from . import _C  # noqa: F401
