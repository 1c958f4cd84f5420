/* A stand-in for a CPython extension module: it needs the helper (found through RUNPATH $ORIGIN/lib),
   libm at a versioned symbol, and one interpreter symbol left undefined, as real extensions do. */
double hello_scale(double x);
extern void* PyModule_Create2(void* def, int api);

int hello_answer(void) {
  return (int)hello_scale(441.0);
}
void* PyInit__hello(void) {
  return PyModule_Create2(0, 1013);
}
