// docs/image.schema.json against the library that reads image descriptions: every db file validates;
// documents image::from_json refuses, the schema refuses too, and what it accepts, the schema accepts.
// The validator is Python's jsonschema (Debian: python3-jsonschema, scripts/install-deps.sh). What the
// command line writes is checked in tests/cli/test_image_schema_cli.cpp.
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "image_schema_support.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_image_schema {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using json = nlohmann::json;

namespace {

// The smallest description from_json accepts, and cases patched onto it (RFC 7386: null removes a key).
const char* const k_base = R"({"schema": "wheelcheck-image/1", "name": "t", "arch": "x86_64"})";

}  // namespace

TEST(ImageSchema, EveryDbFileValidates) {
  SKIP_WITHOUT_JSONSCHEMA();
  std::vector<std::string> files;
  for (const char* dir : {"/db/images", "/db/layers"}) {
    for (const auto& f : find_files(source_dir() + dir, ".json")) files.push_back(f);
  }
  ASSERT_GE(files.size(), 20U);
  const auto r = validate(files);
  EXPECT_EQ(r.exit_code, 0) << "db files that do not follow docs/image.schema.json:\n" << r.out << r.err;
}

TEST(ImageSchema, RefusesWhatFromJsonRefuses) {
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir tmp;
  // The base itself is valid to both, so each refusal below is the patch's doing.
  ASSERT_NO_THROW(image::from_json(json::parse(k_base), "base"));
  const auto base = validate({tmp.write("base.json", k_base)});
  ASSERT_EQ(base.exit_code, 0) << base.out << base.err;

  struct Case {
    const char* label;
    const char* patch;
    const char* expected;  // in the validator's report
  };
  const Case cases[] = {
      {"unknown top-level key", R"({"colour": "red"})", "'colour' was unexpected"},
      {"fact object without value", R"({"arch": {"note": "not probed"}})", "/arch: 'value' is a required property"},
      {"bad origin of a fact", R"({"arch": {"value": "x86_64", "origin": "guessed"}})", "/arch/origin: 'guessed'"},
      {"bad origin of the document", R"({"origin": "guessed"})", "/origin: 'guessed'"},
      {"wrong schema string", R"({"schema": "wheelcheck-image/2"})", "/schema: 'wheelcheck-image/1' was expected"},
      {"no schema", R"({"schema": null})", "'schema' is a required property"},
      {"no name", R"({"name": null})", "'name' is a required property"},
      {"empty name", R"({"name": ""})", "/name: "},
      {"unknown key in a fact", R"({"arch": {"value": "x86_64", "source": "me"}})", "'source' was unexpected"},
      {"fact neither string nor object", R"({"arch": 64})", "/arch: 64 is not of type"},
      {"bad kind", R"({"kind": "container"})", "/kind: "},
      {"unknown key in libc", R"({"libc": {"kind": "glibc", "flavour": "gnu"}})", "'flavour' was unexpected"},
      {"library with neither path nor soname", R"({"libraries": [{"machine": "x86_64"}]})", "/libraries/0: "},
      {"library with a relative path", R"({"libraries": [{"path": "usr/lib/libz.so.1"}]})", "/libraries/0/path: "},
      {"library class as a string", R"({"libraries": [{"soname": "libz.so.1", "class": "64"}]})",
       "/libraries/0/class: "},
      {"python without version", R"({"pythons": [{"abi_tags": ["cp312"]}]})", "'version' is a required property"},
      {"distribution without version", R"({"distributions": [{"name": "torch"}]})", "'version' is a required property"},
      {"distribution library with an absolute path",
       R"({"distributions": [{"name": "torch", "version": "2.6.0", "libraries": [{"path": "/torch/lib/libc10.so"}]}]})",
       "/distributions/0/libraries/0/path: "},
      {"cache entry of two", R"({"loader": {"cache": [["libc.so.6", "libc6,x86-64"]]}})", "/loader/cache/0: "},
      {"cache entry of four", R"({"loader": {"cache": [["libc.so.6", "libc6,x86-64", "/lib/libc.so.6", "x"]]}})",
       "/loader/cache/0: "},
      {"toolkit without kind", R"({"toolkit": {"version": "13.0"}})", "'kind' is a required property"},
      {"env value not a string", R"({"env": {"PATH": ["/usr/bin"]}})", "/env/PATH: "},
  };
  // One validator run for all (a Python start each would be slow); its report is read file by file.
  std::vector<std::string> files;
  std::vector<json> docs;
  for (const auto& c : cases) {
    json doc = json::parse(k_base);
    doc.merge_patch(json::parse(c.patch));
    EXPECT_THROW(image::from_json(doc, c.label), Error) << c.label << ": " << doc.dump();
    files.push_back(tmp.write("refused-" + std::to_string(files.size()) + ".json", doc.dump(2)));
    docs.push_back(std::move(doc));
  }
  const auto r = validate(files);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  std::map<std::string, std::string> report;  // file -> its error lines
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) report[line.substr(0, colon)] += line.substr(colon + 2) + "\n";
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(cases[i].label);
    const std::string& errors = report[files[i]];
    EXPECT_FALSE(errors.empty()) << "the schema accepts " << docs[i].dump();
    EXPECT_NE(errors.find(cases[i].expected), std::string::npos) << "expected \"" << cases[i].expected << "\" in:\n"
                                                                 << errors;
  }
}

TEST(ImageSchema, AcceptsWhatFromJsonAcceptsAndToJsonWrites) {
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir tmp;
  // The forms db files rarely use: bare "unknown", a library known only by soname, a distribution without
  // a location, a finding, a comment.
  const json doc = json::parse(R"({
    "$comment": "hand-written",
    "schema": "wheelcheck-image/1",
    "name": "edge",
    "kind": "layer",
    "group": "mine",
    "origin": "probed",
    "arch": "unknown",
    "python": {"value": "3.12", "note": "said by the vendor", "origin": "declared"},
    "libc": {"kind": "glibc", "version": {"value": "unknown", "note": "not published"}},
    "libstdcxx": {"cxxabi": "1.3.15"},
    "loader": {"default_dirs": ["/lib64"], "default_dirs_note": {"value": "lib64", "origin": "derived"},
               "cache_format": "new", "cache": [["libc.so.6", "libc6,x86-64", "/lib64/libc.so.6"]]},
    "libraries": [{"soname": "libcuda.so.1", "exports_unknown": "the host's driver"},
                  {"path": "/lib64/libc.so.6", "names": ["/lib64/libc.so.6", "/lib/libc.so.6"], "class": 64,
                   "versions": ["GLIBC_2.2.5"], "exports": "x/libc.so.6.exports.gz", "exports_upto": "GLIBC_2.28",
                   "origin": "derived"}],
    "pythons": [{"version": "3.12", "abi_tags": ["cp312", "abi3"], "site_packages": ["/opt/venv/lib/python3.12/site-packages"]}],
    "distributions": [{"name": "torch", "version": "2.6.0", "exports_unknown": "declared",
                       "libraries": [{"path": "torch/lib/libc10.so", "soname": "libc10.so"}]}],
    "toolkit": {"kind": "cuda", "version": "13.0", "runtime": {"value": "unknown", "note": "not published"},
                "runtime_sonames": ["libcudart.so.13"]},
    "driver": {"value": "unknown", "note": "the host's"},
    "gpu_archs": "sm_90",
    "env": {"CUDA_HOME": "/usr/local/cuda"},
    "findings": [{"kind": "not-elf", "path": "/lib64/libfake.so", "detail": "named like a shared library"}]
  })");
  image::Image im;
  ASSERT_NO_THROW(im = image::from_json(doc, "edge"));
  im.layers = {"base"};
  for (auto* f : {&im.arch, &im.python, &im.libc_kind, &im.libc_version, &im.cxxabi, &im.driver, &im.gpu_archs}) {
    f->layer = "edge";
  }
  im.libraries[0].layer = "edge";
  const auto r = validate({tmp.write("edge.json", doc.dump(2)), tmp.write("compact.json", image::to_json(im).dump(2)),
                           tmp.write("provenance.json", image::to_json(im, true).dump(2))});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The compact form is what from_json reads back.
  EXPECT_NO_THROW(image::from_json(json::parse(image::to_json(im).dump()), "compact"));
}

}  // namespace unity_test_image_schema
