/* A helper library the extension links against; shipped inside the wheel under hello/lib/. */
#include <math.h>

double hello_scale(double x) {
  return sqrt(x) * 2.0;
}
