# FlagTree installs the module `triton`; its native core is triton/_C/libtriton.so.
