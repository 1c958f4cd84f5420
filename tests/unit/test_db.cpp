// The db of image descriptions, through the library: every file loads and composes, every export reference
// is a real table, the seven FlagOS images say what is unknown, and composition follows its documented rules.
#include <filesystem>
#include <set>

#include "db_support.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_db {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

image::Db source_db() {
  return image::Db(source_dir() + "/db");
}

bool contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST(Db, EveryDescriptionComposesAndEveryExportReferenceIsARealTable) {
  const auto db = source_db();
  std::vector<std::string> all = db.image_names();
  for (const auto& l : db.layer_names()) all.push_back(l);
  ASSERT_GE(all.size(), 20U);
  std::set<std::string> tables;
  for (const auto& name : all) {
    SCOPED_TRACE(name);
    const image::Image im = db.get(name);
    EXPECT_EQ(im.name, name);
    EXPECT_FALSE(im.summary.empty());
    for (const auto& l : im.libraries) {
      if (!l.exports.empty()) tables.insert(l.exports_file);
      EXPECT_TRUE(!l.exports.empty() || !l.exports_unknown.empty() || !l.versions.empty() ||
                  l.origin == image::Origin::Probed)
          << l.soname << ": a declared library must say what it exports or why that is unknown";
    }
    for (const auto& d : im.distributions) {
      for (const auto& l : d.libraries) {
        if (!l.exports.empty()) tables.insert(l.exports_file);
      }
    }
  }
  ASSERT_GE(tables.size(), 50U);
  std::size_t empty = 0;
  for (const auto& t : tables) {
    SCOPED_TRACE(t);
    ASSERT_TRUE(fs::exists(t));
    const auto table = exports::load_table(t);
    EXPECT_FALSE(table.library.empty());
    // A few shims export nothing at all (Debian's libtorch.so only pulls libtorch_cpu in).
    if (table.symbols().empty()) ++empty;
  }
  EXPECT_LT(empty * 10, tables.size());
}

TEST(Db, SevenFlagOsImagesMarkDriverAndTorchExportsUnknown) {
  const auto db = source_db();
  for (const char* name : k_flagos) {
    SCOPED_TRACE(name);
    const image::Image im = db.get(name);
    EXPECT_EQ(im.group, "flagos");
    EXPECT_FALSE(im.driver.known());
    EXPECT_FALSE(im.driver.note.empty());
    const auto* torch = im.distribution("torch");
    ASSERT_NE(torch, nullptr);
    EXPECT_EQ(torch->version.rfind("2.10.0", 0), 0U) << torch->version;
    EXPECT_FALSE(torch->exports_unknown.empty());
    const auto unknowns = im.unknowns();
    EXPECT_TRUE(contains(unknowns, "driver version"));
    EXPECT_TRUE(contains(unknowns, "torch 2.10.0"));
    ASSERT_TRUE(im.toolkit.has_value());
    EXPECT_FALSE(im.toolkit->runtime_sonames.empty());
  }
  // The facts of the platform table.
  const auto cuda = db.get("cuda13.0");
  EXPECT_EQ(cuda.arch.text(), "x86_64");
  EXPECT_EQ(cuda.toolkit->version.text(), "13.0");
  EXPECT_EQ(cuda.libc_version.text(), "2.39");
  ASSERT_EQ(cuda.pythons.size(), 1U);
  EXPECT_EQ(cuda.pythons[0].version, "3.12");
  // torch's libraries sit in the image's site-packages once composed.
  EXPECT_EQ(cuda.distribution("torch")->location, cuda.pythons[0].site_packages.front());
  // The CUDA 13.0 runtime's libraries come from the probed layer, with tables.
  bool cudart13 = false;
  for (const auto& l : cuda.libraries) cudart13 = cudart13 || (l.soname == "libcudart.so.13" && !l.exports.empty());
  EXPECT_TRUE(cudart13);
  EXPECT_EQ(db.get("ascend-cann9").arch.text(), "aarch64");
  EXPECT_EQ(db.get("ascend-cann9").distribution("torch-npu"), nullptr) << "torch_npu is deliberately absent";
  EXPECT_EQ(db.get("musa5.1").pythons.at(0).version, "3.10");
}

TEST(Db, GeneratedAndTargetImagesCarryTheirFacts) {
  const auto db = source_db();
  EXPECT_EQ(db.get("debian12").libc_version.text(), "2.36");
  EXPECT_EQ(db.get("debian13").libc_version.text(), "2.41");
  EXPECT_EQ(db.get("debian13").glibcxx.text(), "3.4.33");
  for (const char* name : {"torch1.13-debian", "torch2.6-debian", "torch2.14-debian", "torch2.6-debian-aarch64"}) {
    SCOPED_TRACE(name);
    const auto im = db.get(name);
    EXPECT_EQ(im.kind, image::ImageKind::Layer);
    EXPECT_EQ(im.generated_by, std::string("scripts/gen-db.sh ") + name);
    const auto* torch = im.distribution("torch");
    ASSERT_NE(torch, nullptr);
    bool c10 = false;
    for (const auto& l : torch->libraries) c10 = c10 || (l.path == "torch/lib/libc10.so" && !l.exports.empty());
    EXPECT_TRUE(c10);
  }
  EXPECT_EQ(db.get("torch2.6-debian-aarch64").distribution("torch")->libraries.at(0).machine, "aarch64");
  const std::map<std::string, std::string> glibc = {{"manylinux2014", "2.17"},
                                                    {"manylinux_2_28", "2.28"},
                                                    {"manylinux_2_34", "2.34"},
                                                    {"manylinux_2_39", "2.39"},
                                                    {"musllinux_1_2", "1.2"}};
  for (const char* name : k_targets) {
    SCOPED_TRACE(name);
    const auto im = db.get(name);
    EXPECT_EQ(im.group, "target");
    EXPECT_EQ(im.origin, image::Origin::Derived);
    EXPECT_EQ(im.libc_version.text(), glibc.at(name));
    EXPECT_FALSE(im.libraries.empty());
  }
  // The policy's versions, not invented ones: manylinux_2_28 allows GLIBC_2.28 and not GLIBC_2.29.
  const auto m = db.get("manylinux_2_28");
  for (const auto& l : m.libraries) {
    if (l.soname != "libc.so.6") continue;
    EXPECT_NE(std::find(l.versions.begin(), l.versions.end(), "GLIBC_2.28"), l.versions.end());
    EXPECT_EQ(std::find(l.versions.begin(), l.versions.end(), "GLIBC_2.29"), l.versions.end());
  }
}

// db/policies is auditwheel's data unchanged (scripts/gen-db.sh targets copies it from ../shared).
TEST(Db, PoliciesAreAuditwheelsOwnData) {
  if (!fs::exists(shared_dir() + "/reference/manylinux-policy.json")) GTEST_SKIP() << "../shared/reference is absent";
  for (const char* f : {"manylinux-policy.json", "musllinux-policy.json", "android-policy.json"}) {
    EXPECT_EQ(read_file(source_dir() + "/db/policies/" + f), read_file(shared_dir() + "/reference/" + f)) << f;
  }
  EXPECT_EQ(source_db().policies().all().size(), 127U);
}

TEST(Db, CompositionOverridesFactsAndMergesLists) {
  TempDir d;
  fs::create_directories(d.file("db/images"));
  fs::create_directories(d.file("db/layers"));
  d.write("db/layers/base.json", R"({"schema": "wheelcheck-image/1", "name": "base", "kind": "layer", "summary": "b",
    "arch": "x86_64", "libc": {"kind": "glibc", "version": "2.35"},
    "libraries": [{"path": "/usr/lib/libfoo.so.1", "soname": "libfoo.so.1", "exports_unknown": "test"}],
    "pythons": [{"version": "3.11", "abi_tags": ["cp311"], "site_packages": ["/sp"]}]})");
  d.write("db/layers/torch.json", R"({"schema": "wheelcheck-image/1", "name": "torch", "kind": "layer", "summary": "t",
    "distributions": [{"name": "torch", "version": "9.9", "location": "{site-packages}", "exports_unknown": "test"}]})");
  d.write("db/images/img.json", R"({"schema": "wheelcheck-image/1", "name": "img", "summary": "i",
    "layers": ["base", "torch"], "libc": {"version": {"value": "unknown", "note": "not published"}},
    "libraries": [{"path": "/usr/lib/libbar.so.2", "soname": "libbar.so.2", "exports_unknown": "test"}],
    "env": {"LD_LIBRARY_PATH": "/opt/a:/opt/b"}})");
  d.write("db/images/loop.json",
          R"({"schema": "wheelcheck-image/1", "name": "loop", "summary": "l", "layers": ["loop2"]})");
  d.write("db/layers/loop2.json",
          R"({"schema": "wheelcheck-image/1", "name": "loop2", "summary": "l", "layers": ["loop"]})");
  d.write("db/images/bad.json", R"({"schema": "wheelcheck-image/1", "name": "bad", "summary": "x", "arch": 5})");
  image::Db db(d.file("db"));
  const auto im = db.get("img");
  EXPECT_EQ(im.arch.text(), "x86_64");
  EXPECT_EQ(im.arch.layer, "base");
  EXPECT_EQ(im.libc_kind.text(), "glibc");
  EXPECT_FALSE(im.libc_version.known()) << "the image's own unknown overrides the layer's 2.35";
  EXPECT_EQ(im.libc_version.layer, "img");
  EXPECT_EQ(im.libraries.size(), 2U);
  ASSERT_NE(im.distribution("torch"), nullptr);
  EXPECT_EQ(im.distribution("torch")->location, "/sp");
  EXPECT_EQ(im.distribution("torch")->python, "3.11");
  EXPECT_EQ(im.loader.ld_library_path, (std::vector<std::string>{"/opt/a", "/opt/b"}));
  EXPECT_EQ(db.image_names(), (std::vector<std::string>{"bad", "img", "loop"}));
  try {
    db.get("loop");
    FAIL() << "a layer cycle must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
  try {
    db.get("bad");
    FAIL() << "a wrong type must be an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("arch"), std::string::npos) << e.what();
  }
  try {
    db.get("imgg");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("did you mean \"img\""), std::string::npos) << e.what();
  }
}

TEST(Db, MalformedDescriptionsAreClearErrors) {
  TempDir d;
  const std::pair<const char*, const char*> cases[] = {
      {"{", "not valid JSON"},
      {"[]", "expected an object"},
      {R"({"name": "x"})", "schema"},
      {R"({"schema": "wheelcheck-image/9", "name": "x"})", "not supported"},
      {R"({"schema": "wheelcheck-image/1", "name": "x", "colour": "red"})", "colour: unknown field"},
      {R"({"schema": "wheelcheck-image/1", "name": "x", "libraries": [{"path": "relative/libx.so"}]})", "absolute"},
      {R"({"schema": "wheelcheck-image/1", "name": "x", "driver": {"note": "n"}})", "missing \"value\""},
      {R"({"schema": "wheelcheck-image/1", "name": "x", "origin": "guessed"})", "unknown origin"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    d.write("x.json", text);
    try {
      image::load_file(d.file("x.json"));
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(Db, JsonRoundTripIsStable) {
  const auto db = source_db();
  // A packaging target (made from the policy data, not a file) survives the round trip too.
  const auto target = image::to_json(db.get("manylinux_2_17_aarch64")).dump(2);
  EXPECT_EQ(image::to_json(image::from_json(nlohmann::json::parse(target), "target")).dump(2), target);
  for (const auto& name : db.file_image_names()) {
    SCOPED_TRACE(name);
    const auto path = source_dir() + "/db/images/" + name + ".json";
    const auto once = image::load_file(path);
    const auto text = image::to_json(once).dump(2);
    const auto twice = image::from_json(nlohmann::json::parse(text), "round trip");
    EXPECT_EQ(image::to_json(twice).dump(2), text);
  }
}

// The images the FlagOS CI plans to move to, declared beside today's: each is marked planned, says what the
// switch waits on, carries its toolkit's version, keeps the host driver unknown, and states the toolkit's
// published minimum driver where one is published (unknown, with the reason, where none is).
TEST(Db, PlannedImagesStandBesideTodaysWithTheirToolkits) {
  const auto db = source_db();
  struct Planned {
    const char* name;
    const char* today;
    const char* version;
    const char* floor;  // "" when not published
  };
  const Planned planned[] = {{"cuda13.3", "cuda13.0", "13.3", "610.43.02"},
                             {"metax-maca3.8.1.3", "metax-maca3.8", "3.8.1.3", ""},
                             {"musa5.2", "musa5.1", "5.2", ""},
                             {"gcu-tops1.9.10", "gcu-tops", "1.9.10", ""}};
  for (const auto& p : planned) {
    SCOPED_TRACE(p.name);
    const image::Image im = db.get(p.name);
    const image::Image today = db.get(p.today);
    EXPECT_EQ(im.status, image::ImageStatus::Planned);
    EXPECT_EQ(today.status, image::ImageStatus::Current);
    EXPECT_NE(im.planned_note.find("driver confirmation"), std::string::npos) << im.planned_note;
    EXPECT_EQ(im.group, "flagos");
    EXPECT_EQ(im.arch.text(), today.arch.text());
    ASSERT_TRUE(im.toolkit.has_value());
    EXPECT_EQ(im.toolkit->kind, today.toolkit->kind);
    EXPECT_EQ(im.toolkit->version.text(), p.version);
    EXPECT_EQ(im.toolkit->runtime_sonames, today.toolkit->runtime_sonames);
    EXPECT_FALSE(im.driver.known()) << "the floor a toolkit publishes is not the runners' driver";
    EXPECT_NE(im.driver.note.find("not published"), std::string::npos) << im.driver.note;
    ASSERT_TRUE(im.toolkit->driver_floor.set);
    if (*p.floor != '\0') {
      EXPECT_EQ(im.toolkit->driver_floor.text(), p.floor);
    } else {
      EXPECT_FALSE(im.toolkit->driver_floor.known());
      EXPECT_NE(im.toolkit->driver_floor.note.find("not published"), std::string::npos);
      EXPECT_TRUE(contains(im.unknowns(), "toolkit's minimum driver (not published"));
    }
    ASSERT_NE(im.distribution("torch"), nullptr);
    EXPECT_EQ(im.distribution("torch")->version, "2.10.0+cpu");
    EXPECT_FALSE(im.sources.empty());
  }
  // CUDA 13.3: Python 3.12 and Ubuntu 24.04 as today's, its runtime declared without an export table (no
  // CUDA 13.3 binary here), never CUDA 13.0's tables under the 13.3 name.
  const auto cuda = db.get("cuda13.3");
  ASSERT_EQ(cuda.pythons.size(), 1U);
  EXPECT_EQ(cuda.pythons[0].version, "3.12");
  EXPECT_EQ(cuda.libc_version.text(), "2.39");
  bool cudart = false;
  for (const auto& l : cuda.libraries) {
    EXPECT_EQ(l.path.find("cuda-13.0"), std::string::npos) << l.path;
    if (l.soname != "libcudart.so.13") continue;
    cudart = true;
    EXPECT_TRUE(l.exports.empty());
    EXPECT_NE(l.exports_unknown.find("13.3"), std::string::npos) << l.exports_unknown;
  }
  EXPECT_TRUE(cudart);
  EXPECT_EQ(db.get("cuda13.0").toolkit->driver_floor.text(), "580.65.06");
}

TEST(Db, StatusAndDriverFloorAreReadWrittenAndNotInherited) {
  const auto planned = image::from_json(nlohmann::json::parse(R"({"schema": "wheelcheck-image/1", "name": "p",
    "status": "planned", "planned_note": "waits on driver confirmation",
    "toolkit": {"kind": "cuda", "version": "13.3", "driver_floor": {"value": "unknown", "note": "not published"}}})"),
                                        "p");
  EXPECT_EQ(planned.status, image::ImageStatus::Planned);
  EXPECT_FALSE(planned.toolkit->driver_floor.known());
  const auto j = image::to_json(planned);
  EXPECT_EQ(j["status"], "planned");
  EXPECT_EQ(j["planned_note"], "waits on driver confirmation");
  EXPECT_EQ(j["toolkit"]["driver_floor"]["note"], "not published");
  // A current image writes no status (the default); `image show --json` (provenance) always does.
  const auto current = image::from_json(nlohmann::json::parse(R"({"schema": "wheelcheck-image/1", "name": "c"})"), "c");
  EXPECT_FALSE(image::to_json(current).contains("status"));
  EXPECT_EQ(image::to_json(current, true)["status"], "current");
  // The status is the description's own: an image over a planned layer is current.
  EXPECT_EQ(image::compose(planned, current).status, image::ImageStatus::Current);
  EXPECT_EQ(image::compose(current, planned).planned_note, "waits on driver confirmation");
  // A layer's floor stands until the top states its own.
  auto layer = planned;
  layer.toolkit->driver_floor = image::Fact::known_as("580.65.06", "release notes", image::Origin::Declared);
  auto top = planned;
  top.toolkit->driver_floor = image::Fact{};
  EXPECT_EQ(image::compose(layer, top).toolkit->driver_floor.text(), "580.65.06");
  top.toolkit->driver_floor = image::Fact::known_as("610.43.02", "release notes", image::Origin::Declared);
  EXPECT_EQ(image::compose(layer, top).toolkit->driver_floor.text(), "610.43.02");
  for (const auto& [doc, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"schema": "wheelcheck-image/1", "name": "x", "planned_note": "waits"})", "planned_note"},
           {R"({"schema": "wheelcheck-image/1", "name": "x", "status": "later"})", "status"},
           {R"({"schema": "wheelcheck-image/1", "name": "x", "toolkit": {"kind": "cuda", "driver_floor": 5}})",
            "toolkit.driver_floor"}}) {
    SCOPED_TRACE(doc);
    try {
      image::from_json(nlohmann::json::parse(doc), "x");
      FAIL() << "must be refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

}  // namespace unity_test_db
