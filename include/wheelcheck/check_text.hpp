// The check's text renderings of a run's cells (inspector/output/check_text.cpp): one cell (the whole
// report), what the wheels beside it add, one wheel against a few images side by side, and a wheel x image
// matrix. cmd_check picks one by the shape of the run; JSON, SARIF, JUnit and the gates have their own
// renderers in the same folder (include/wheelcheck/format.hpp lists every format).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::output {

// A cell as text: a wheel for another machine, Python or toolkit is one line; else the whole report.
std::string cell_text(const run::Cell& c, bool color);
// What the wheels beside a checked one (--with) add to its answer: their routes that are off, and the
// environment's verdict when it is not the wheel's own ("" when they add nothing).
std::string beside_text(const std::vector<run::Cell>& beside, verdict::Verdict overall, int rc);
// One row per image, one column per wheel ([1], [2], ... named below); with one wheel, the reason in words.
// `cells` are wheel-major; a reason is cut to fit `columns` (the terminal's width).
std::string matrix_text(const std::vector<run::Cell>& cells, const std::vector<std::string>& wheels,
                        const std::vector<run::Target>& images, bool color, std::size_t columns);
// The most images printed side by side (a column each); more make the matrix.
constexpr std::size_t k_side_by_side_max = 4;
// One wheel against a few images, a column each, then what changes between them.
std::string side_by_side_text(const std::vector<run::Cell>& cells, const std::string& wheel,
                              const std::vector<run::Target>& images, bool color);

}  // namespace wheelcheck::output
