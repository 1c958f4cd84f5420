// The loader's rules one by one, through the library, on wheels built here and images described in code:
// the dynamic string tokens (every one of an entry), LD_LIBRARY_PATH against RPATH and RUNPATH,
// DF_1_NODEFLIB, candidates of another ELF class skipped, the cache before the default folders; and the
// checks around them (the driver a CUDA runtime needs, the x86-64 ISA level, RECORD problems, an
// unreadable export table).
#include <filesystem>

#include "support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_resolve {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

std::string build_so(const TempDir& dir, const std::string& name, const std::string& source, const std::string& flags,
                     const std::string& compiler = "gcc") {
  std::string err;
  auto so = build_shared(dir, name, name + ".c", source, flags, compiler, &err);
  if (!so) ADD_FAILURE() << name << ": " << err;
  return so.value_or("");
}

image::Library lib(const std::string& path, const std::string& soname, const std::string& machine = "x86_64",
                   int cls = 64) {
  image::Library l;
  l.path = path;
  l.names = {path};
  l.soname = soname;
  l.machine = machine;
  l.elf_class = cls;
  l.exports_unknown = "described in the test";
  return l;
}

// A Debian-like x86_64 image with Python 3.12 and the libraries given.
image::Image image_with(std::vector<image::Library> libs, std::vector<std::string> ld_library_path = {},
                        std::vector<image::CacheEntry> cache = {}) {
  image::Image im;
  im.name = "test";
  im.arch = image::Fact::known_as("x86_64", "", image::Origin::Declared);
  im.loader.default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
  im.loader.ld_library_path = std::move(ld_library_path);
  im.loader.cache = std::move(cache);
  im.loader.cache_format = im.loader.cache.empty() ? "" : "new";
  im.libraries = std::move(libs);
  image::Python py;
  py.version = "3.12";
  py.abi_tags = {"cp312", "abi3"};
  py.site_packages = {"/sp"};
  im.pythons.push_back(py);
  return im;
}

// The need `name` of the wheel's member `member`, after loading it.
resolve::Need need_of(const WheelProfile& w, const image::Image& im, const std::string& member,
                      const std::string& name) {
  resolve::Space space(im, w, {});
  for (const auto* o : space.wheel_members()) {
    if (o->member != member) continue;
    for (const auto& n : resolve::load(space, *o).needs) {
      if (n.name == name) return n;
    }
  }
  ADD_FAILURE() << "no need " << name << " of " << member;
  return {};
}

}  // namespace

TEST(Resolve, DynamicStringTokens) {
  EXPECT_EQ(resolve::expand_tokens("$ORIGIN/../lib", "/sp/pkg", "lib/x86_64-linux-gnu"), "/sp/pkg/../lib");
  EXPECT_EQ(resolve::expand_tokens("${ORIGIN}/lib", "/sp/pkg", "lib64"), "/sp/pkg/lib");
  EXPECT_EQ(resolve::expand_tokens("/opt/$LIB", "/o", "lib/x86_64-linux-gnu"), "/opt/lib/x86_64-linux-gnu");
  EXPECT_EQ(resolve::expand_tokens("/opt/${LIB}/x", "/o", "lib64"), "/opt/lib64/x");
  EXPECT_EQ(resolve::expand_tokens("$ORIGINAL/x", "/o", "lib"), "$ORIGINAL/x") << "not a token: a longer name";
  EXPECT_EQ(resolve::expand_tokens("/a/$PLATFORM", "/o", "lib"), "/a/$PLATFORM") << "left for the loader state";
  // $LIB and $PLATFORM in a real RUNPATH, resolved against the image's folders.
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string ext = build_so(d, "ext.so", "int dep(void);\nint ext(void) { return dep(); }\n",
                                   "-L" + d.path() + " -ldep -Wl,--enable-new-dtags,-rpath,'/opt/$LIB/$PLATFORM'");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/ext.so", ext}}));
  const auto n = need_of(w, image_with({lib("/opt/lib/x86_64-linux-gnu/x86_64/libdep.so.1", "libdep.so.1")}),
                         "t/ext.so", "libdep.so.1");
  EXPECT_EQ(n.rule, resolve::How::Runpath);
  EXPECT_EQ(n.where, "/opt/lib/x86_64-linux-gnu/x86_64/libdep.so.1");
}

// glibc gives every $PLATFORM of an entry the same value, and expands every $ORIGIN and $LIB.
TEST(Resolve, EveryTokenOfAnEntryIsExpanded) {
  EXPECT_EQ(resolve::expand_tokens("$ORIGIN/$LIB/${ORIGIN}/$LIB", "/o", "lib64"), "/o/lib64//o/lib64");
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string ext =
      build_so(d, "ext.so", "int dep(void);\nint ext(void) { return dep(); }\n",
               "-L" + d.path() + " -ldep -Wl,--enable-new-dtags,-rpath,'/opt/$PLATFORM/x/${PLATFORM}'");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/ext.so", ext}}));
  const auto n =
      need_of(w, image_with({lib("/opt/x86_64/x/x86_64/libdep.so.1", "libdep.so.1")}), "t/ext.so", "libdep.so.1");
  EXPECT_EQ(n.rule, resolve::How::Runpath);
  EXPECT_EQ(n.where, "/opt/x86_64/x/x86_64/libdep.so.1");
  EXPECT_EQ(n.platforms, std::vector<std::string>{"x86_64"}) << "found only where $PLATFORM is x86_64";
  ASSERT_FALSE(n.tried.empty());
  EXPECT_EQ(n.tried.front().rule, resolve::How::Runpath);
  EXPECT_EQ(n.tried.front().platform, "haswell");
  const std::string first = resolve::attempt_text(n.tried.front());
  EXPECT_EQ(first.rfind("/opt/haswell/x/haswell/libdep.so.1 (DT_RUNPATH", 0), 0U) << first;
}

TEST(Resolve, LdLibraryPathBeforeRunpathButAfterRpath) {
  TempDir d;
  const std::string dep = build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::copy_file(dep, d.file("libdep.so"));
  auto wheel_with = [&](const std::string& dtags) {
    TempDir b;
    const std::string ext = build_so(b, "ext.so", "int dep(void);\nint ext(void) { return dep(); }\n",
                                     "-L" + d.path() + " -ldep -Wl," + dtags + ",-rpath,'$ORIGIN/lib'");
    return inspect_wheel(make_wheel(d, "t" + dtags.substr(2, 3) + "-1.0-cp312-cp312-linux_x86_64.whl",
                                    {{"t/ext.so", ext}, {"t/lib/libdep.so.1", dep}}));
  };
  const auto im = image_with({lib("/opt/ld/libdep.so.1", "libdep.so.1")}, {"/opt/ld"});
  const auto runpath = need_of(wheel_with("--enable-new-dtags"), im, "t/ext.so", "libdep.so.1");
  EXPECT_EQ(runpath.rule, resolve::How::LdLibraryPath);
  EXPECT_EQ(runpath.where, "/opt/ld/libdep.so.1");
  const auto rpath = need_of(wheel_with("--disable-new-dtags"), im, "t/ext.so", "libdep.so.1");
  EXPECT_EQ(rpath.rule, resolve::How::Rpath);
  EXPECT_EQ(rpath.where, "/sp/t/lib/libdep.so.1");
}

TEST(Resolve, NodeflibSkipsTheCacheAndTheDefaultFolders) {
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string plain =
      build_so(d, "plain.so", "int dep(void);\nint p(void) { return dep(); }\n", "-L" + d.path() + " -ldep");
  const std::string nodeflib = build_so(d, "nodeflib.so", "int dep(void);\nint n(void) { return dep(); }\n",
                                        "-L" + d.path() + " -ldep -Wl,-z,nodefaultlib");
  const auto w = inspect_wheel(
      make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/plain.so", plain}, {"t/nodeflib.so", nodeflib}}));
  const std::string path = "/usr/lib/x86_64-linux-gnu/libdep.so.1";
  const auto cached = image_with({lib(path, "libdep.so.1")}, {}, {{"libdep.so.1", path, "libc6,x86-64"}});
  EXPECT_EQ(need_of(w, cached, "t/plain.so", "libdep.so.1").rule, resolve::How::LdSoCache);
  EXPECT_EQ(need_of(w, image_with({lib(path, "libdep.so.1")}), "t/plain.so", "libdep.so.1").rule,
            resolve::How::DefaultPath);
  const auto n = need_of(w, cached, "t/nodeflib.so", "libdep.so.1");
  EXPECT_EQ(n.found, nullptr);
  ASSERT_FALSE(n.tried.empty());
  EXPECT_EQ(n.tried.back().result, resolve::Attempt::Result::Skipped);
  EXPECT_NE(resolve::attempt_text(n.tried.back()).find("DF_1_NODEFLIB"), std::string::npos)
      << resolve::attempt_text(n.tried.back());
}

// Under DF_1_NODEFLIB glibc refuses a cache entry only in a system folder (a prefix of its text): an
// ld.so.conf folder such as /opt/conf is still taken from the cache.
TEST(Resolve, NodeflibTakesTheCacheOutsideTheSystemFolders) {
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string nodeflib = build_so(d, "nodeflib.so", "int dep(void);\nint n(void) { return dep(); }\n",
                                        "-L" + d.path() + " -ldep -Wl,-z,nodefaultlib");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/nodeflib.so", nodeflib}}));
  const auto conf = image_with({lib("/opt/conf/libdep.so.1", "libdep.so.1")}, {},
                               {{"libdep.so.1", "/opt/conf/libdep.so.1", "libc6,x86-64"}});
  const auto n = need_of(w, conf, "t/nodeflib.so", "libdep.so.1");
  EXPECT_EQ(n.rule, resolve::How::LdSoCache);
  EXPECT_EQ(n.where, "/opt/conf/libdep.so.1");
  EXPECT_EQ(n.by.rule, resolve::How::LdSoCache);
  EXPECT_EQ(n.by.result, resolve::Attempt::Result::Found);
  // "/usr/lib/" is a system folder: a subfolder's entry is refused too.
  const std::string sub = "/usr/lib/x86_64-linux-gnu/blas/libdep.so.1";
  const auto blas = image_with({lib(sub, "libdep.so.1")}, {}, {{"libdep.so.1", sub, "libc6,x86-64"}});
  EXPECT_EQ(need_of(w, blas, "t/nodeflib.so", "libdep.so.1").found, nullptr);
}

// An image library is searched with its own RUNPATH, $ORIGIN being the folder of the name it was
// found by (a link in a default folder), not of the file the link leads to; and a ".." out of a linked
// folder climbs from where the link leads (loader.dir_links), as the kernel does.
TEST(Resolve, ImageLibrariesUseTheirOwnSearchPaths) {
  TempDir d;
  build_so(d, "libv.so.1", "int v(void) { return 1; }\n", "-Wl,-soname,libv.so.1");
  fs::rename(d.file("libv.so.1"), d.file("libv.so"));
  const std::string ext =
      build_so(d, "ext.so", "int v(void);\nint e(void) { return v(); }\n", "-L" + d.path() + " -lv");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/ext.so", ext}}));
  image::Library v = lib("/opt/vendor/lib/libv.so.1.2", "libv.so.1");
  v.names = {"/usr/lib/x86_64-linux-gnu/libv.so.1", "/opt/vendor/lib/libv.so.1.2"};
  v.needed = {"libdep.so.1"};
  v.runpath = {"$ORIGIN/vendor-deps"};
  v.dynamic_recorded = true;
  auto im = image_with({v, lib("/usr/lib/x86_64-linux-gnu/vendor-deps/libdep.so.1", "libdep.so.1"),
                        lib("/opt/vendor/lib/vendor-deps/libdep.so.1", "libdep.so.1")});
  resolve::Space space(im, w, {});
  const auto ld = resolve::load(space, *space.wheel_members().front());
  const resolve::Need* dep = nullptr;
  for (const auto& n : ld.needs) {
    if (n.name == "libdep.so.1") dep = &n;
  }
  ASSERT_NE(dep, nullptr);
  EXPECT_EQ(dep->rule, resolve::How::Runpath);
  EXPECT_EQ(dep->where, "/usr/lib/x86_64-linux-gnu/vendor-deps/libdep.so.1") << "the link's folder";
  EXPECT_EQ(dep->by.entry, "$ORIGIN/vendor-deps");
  // A merged /usr: /lib is a link to /usr/lib, so /lib/x86_64-linux-gnu/../../opt is /usr/opt.
  image::Library up = lib("/usr/lib/x86_64-linux-gnu/libv.so.1", "libv.so.1");
  up.names = {"/lib/x86_64-linux-gnu/libv.so.1", "/usr/lib/x86_64-linux-gnu/libv.so.1"};
  up.needed = {"libdep.so.1"};
  up.runpath = {"$ORIGIN/../../opt"};
  auto merged = image_with({up, lib("/usr/opt/libdep.so.1", "libdep.so.1"), lib("/opt/libdep.so.1", "libdep.so.1")}, {},
                           {{"libv.so.1", "/lib/x86_64-linux-gnu/libv.so.1", "libc6,x86-64"}});
  merged.loader.dir_links = {{"/lib", "/usr/lib"}};
  resolve::Space s2(merged, w, {});
  EXPECT_EQ(s2.physical("/lib/x86_64-linux-gnu/../../opt/libdep.so.1"), "/usr/opt/libdep.so.1");
  const auto ld2 = resolve::load(s2, *s2.wheel_members().front());
  for (const auto& n : ld2.needs) {
    if (n.name != "libdep.so.1") continue;
    ASSERT_NE(n.found, nullptr);
    EXPECT_EQ(n.found->path, "/usr/opt/libdep.so.1");
  }
}

// A program is loaded as glibc starts it: nothing in the process before it (no libc), so a
// DF_1_NODEFLIB program whose libc.so.6 is only in the system folders does not start.
TEST(Resolve, ProgramsAreLoadedAsPrograms) {
  TempDir d;
  std::string err;
  const std::string src = d.write("p.c", "int main(void) { return 42; }\n");
  ASSERT_EQ(run("gcc -o " + d.file("plain") + " " + src).exit_code, 0);
  ASSERT_EQ(run("gcc -o " + d.file("nodeflib") + " " + src + " -Wl,-z,nodefaultlib").exit_code, 0);
  const auto w = inspect_wheel(
      make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl",
                 {{"t-1.0.data/scripts/plain", d.file("plain")}, {"t-1.0.data/scripts/nodeflib", d.file("nodeflib")}}));
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  const auto im = image_with({lib(libc, "libc.so.6")}, {}, {{"libc.so.6", libc, "libc6,x86-64"}});
  resolve::Space space(im, w, {});
  for (const auto* o : space.wheel_members()) {
    ASSERT_NE(o->binary, nullptr);
    EXPECT_TRUE(resolve::is_program(*o->binary)) << o->member << ": a PIE is a program";
    const auto ld = resolve::load(space, *o);
    EXPECT_TRUE(ld.program);
    EXPECT_TRUE(ld.global.empty()) << "no interpreter, no libc before the program";
    ASSERT_EQ(ld.needs.size(), 1U);
    EXPECT_EQ(ld.needs[0].name, "libc.so.6");
    if (o->member.ends_with("nodeflib")) {
      EXPECT_EQ(ld.needs[0].found, nullptr) << "glibc refuses libc.so.6 from a system folder";
    } else {
      EXPECT_EQ(ld.needs[0].rule, resolve::How::LdSoCache);
    }
  }
}

TEST(Resolve, CandidatesOfAnotherClassAreSkipped) {
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string ext =
      build_so(d, "ext.so", "int dep(void);\nint e(void) { return dep(); }\n", "-L" + d.path() + " -ldep");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/ext.so", ext}}));
  const auto im = image_with({lib("/opt/lib32/libdep.so.1", "libdep.so.1", "i686", 32),
                              lib("/usr/lib/x86_64-linux-gnu/libdep.so.1", "libdep.so.1")},
                             {"/opt/lib32"});
  const auto n = need_of(w, im, "t/ext.so", "libdep.so.1");
  EXPECT_EQ(n.rule, resolve::How::DefaultPath);
  EXPECT_EQ(n.where, "/usr/lib/x86_64-linux-gnu/libdep.so.1");
  ASSERT_FALSE(n.tried.empty());
  EXPECT_EQ(n.tried.front().result, resolve::Attempt::Result::OtherClass);
  EXPECT_NE(resolve::attempt_text(n.tried.front()).find("skipped, i686/32-bit where x86_64/64-bit is needed"),
            std::string::npos)
      << resolve::attempt_text(n.tried.front());
}

TEST(VerdictChecks, DriverTooOldIsAnErrorWhenTheDriverIsKnown) {
  TempDir d;
  build_so(d, "libcudart.so.13", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n",
           "-Wl,-soname,libcudart.so.13");
  fs::rename(d.file("libcudart.so.13"), d.file("libcudart.so"));
  const std::string k =
      build_so(d, "libk.so", "int cudaGetDeviceCount(int*);\nint k(void) { int n; return cudaGetDeviceCount(&n); }\n",
               "-L" + d.path() + " -lcudart");
  const auto w = inspect_wheel(make_wheel(d, "k-1.0-py3-none-any.whl", {{"k/libk.so", k}}));
  auto im = image_with({lib("/usr/local/cuda/lib64/libcudart.so.13", "libcudart.so.13")}, {"/usr/local/cuda/lib64"});
  im.toolkit = image::Toolkit{
      image::ToolkitKind::Cuda, image::Fact::known_as("13.0", "", image::Origin::Declared), {}, {"libcudart.so.13"}};
  im.driver = image::Fact::known_as("535.54.03", "nvidia-smi on the runner", image::Origin::Declared);
  auto r = verdict::check(w, im);
  bool too_old = false;
  for (const auto& f : r.findings) {
    if (f.kind == verdict::FindingKind::DriverTooOld) {
      too_old = true;
      EXPECT_EQ(f.severity, verdict::Severity::Error);
      EXPECT_EQ(f.required_version, "580.65.06");
    }
  }
  EXPECT_TRUE(too_old) << verdict::render_text(r, false);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
  im.driver = image::Fact::known_as("580.82.07", "", image::Origin::Declared);
  r = verdict::check(w, im);
  for (const auto& f : r.findings) EXPECT_NE(f.kind, verdict::FindingKind::DriverTooOld);
  for (const auto& f : r.findings) EXPECT_NE(f.kind, verdict::FindingKind::Driver);
}

TEST(VerdictChecks, IsaLevelAndRecordProblemsAreReported) {
  TempDir d;
  std::string err;
  auto v3 = build_shared(d, "libv3.so", "v3.c", "int v3(int x) { return x * 3; }\n",
                         "-march=x86-64-v3 -Wl,-z,x86-64-v3", "gcc", &err);
  if (!v3) GTEST_SKIP() << "this linker cannot mark x86-64-v3: " << err;
  const auto w = inspect_wheel(
      make_wheel(d, "v-1.0-py3-none-any.whl", {{"v/libv3.so", *v3}, {"v/data.txt", *v3}}, {"--tamper", "v/data.txt"}));
  const auto r = verdict::check(w, image_with({}));
  bool isa = false, record = false;
  for (const auto& f : r.findings) {
    if (f.kind == verdict::FindingKind::IsaLevel) {
      isa = true;
      EXPECT_EQ(f.severity, verdict::Severity::Condition);
      EXPECT_EQ(f.required_version, "x86-64-v3");
    }
    if (f.kind == verdict::FindingKind::Record) {
      record = true;
      EXPECT_EQ(f.member, "v/data.txt");
      EXPECT_EQ(f.severity, verdict::Severity::Error) << "a wheel that is not what its RECORD says";
    }
  }
  EXPECT_TRUE(isa) << verdict::render_text(r, false);
  EXPECT_TRUE(record) << verdict::render_text(r, false);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << "RECORD decides before the runner's CPU";
}

// A corrupt export table in the db is not a crash, nor a silent "absent": the symbols it would have
// answered for are conditions that say the table could not be read.
TEST(VerdictChecks, UnreadableExportTableIsSaid) {
  TempDir d;
  build_so(d, "libdep.so.1", "int dep(void) { return 1; }\n", "-Wl,-soname,libdep.so.1");
  fs::rename(d.file("libdep.so.1"), d.file("libdep.so"));
  const std::string ext =
      build_so(d, "ext.so", "int dep(void);\nint e(void) { return dep(); }\n", "-L" + d.path() + " -ldep");
  const auto w = inspect_wheel(make_wheel(d, "t-1.0-cp312-cp312-linux_x86_64.whl", {{"t/ext.so", ext}}));
  d.write("broken.exports.gz", "\x1f\x8b this is not a gzip stream");
  auto l = lib("/usr/lib/x86_64-linux-gnu/libdep.so.1", "libdep.so.1");
  l.exports_unknown.clear();
  l.exports = "broken.exports.gz";
  l.exports_file = d.file("broken.exports.gz");
  const auto r = verdict::check(w, image_with({l}));
  bool said = false;
  for (const auto& f : r.findings) {
    if (f.kind == verdict::FindingKind::MissingSymbol && f.classification == verdict::Why::UnknownExports) {
      said = f.explanation.find("could not be read") != std::string::npos &&
             f.explanation.find("broken.exports.gz") != std::string::npos;
      EXPECT_EQ(f.severity, verdict::Severity::Condition);
    }
  }
  EXPECT_TRUE(said) << verdict::render_text(r, false);
}

}  // namespace unity_test_resolve
