/* Build-only stand-in for CANN's libascendcl.so (aarch64): the one entry point libflagcx.so calls. */
int aclInit(const char* config_path) {
  return config_path != 0;
}
