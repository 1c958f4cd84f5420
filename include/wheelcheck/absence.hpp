// "Unknown is not absent": whether a library that nothing in an image provides is known to be absent there,
// or only not stated by a description that does not list every library (docs/images.md). The rules live in
// absence_of, and nowhere else: the check asks it for every need the loader does not find.
#pragma once

#include <string>
#include <vector>

#include "wheelcheck/image.hpp"

namespace wheelcheck::toolkit {
struct Provider;
}

namespace wheelcheck::verdict {

// On what grounds the answer stands, in the order absence_of tries them.
enum class AbsenceBasis {
  Stated,        // the description (or --assume library=!NAME) states that the image has no such library
  Inventory,     // the image's inventory is complete (probed, or says "complete": true): not in it, not there
  Libc,          // a library of glibc on an image whose C library is another
  Toolkit,       // the runtime of another toolkit, or of another major version, than the one the image states
  Distribution,  // a library a Python distribution ships (db/providers.json), which the image does not install
  NotStated,     // none of these: the description does not say
};

struct Absence {
  bool known = false;  // the image's absence is certain: an error; otherwise a condition
  AbsenceBasis basis = AbsenceBasis::NotStated;
  std::string because;   // why, in words: "libcudart.so.12 is the runtime of CUDA 12; the image's toolkit is ..."
  std::string state_it;  // not known: how to state it (probe, a layer, --assume library=NAME or =!NAME)
};

// The absence of `soname` from `image` (nothing there provides it): known, and why, or not stated, and how to
// state it. `providers` (db/providers.json and the db's distributions) may be null: that rule is then skipped.
Absence absence_of(const image::Image& image, const std::string& soname,
                   const std::vector<toolkit::Provider>* providers);

}  // namespace wheelcheck::verdict
