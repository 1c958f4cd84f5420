// Wheel variants (PEP 825/850 drafts): PyTorch 2.10's real variants file read and validated, what images
// support by the providers' rules, and the order an installer prefers the variants in (the worked picks of
// ../shared/reference/variants.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/variant.hpp"

namespace unity_test_variant {

using namespace wheelcheck;

variant::File torch_210() {
  const std::string path = test::source_dir() + "/tests/variants/data/torch-2.10.0-variants.json";
  return variant::parse(test::read_file(path), "torch-2.10.0-variants.json");
}

image::Image cuda_image(const std::string& driver, const std::string& gpus) {
  image::Image im;
  im.name = "cuda";
  im.toolkit = image::Toolkit{};
  im.toolkit->kind = image::ToolkitKind::Cuda;
  im.toolkit->version = image::Fact::known_as("13.0", "", image::Origin::Declared);
  if (driver.empty()) {
    im.driver = image::Fact::unknown("the runners' host GPU driver versions are not published");
    im.driver.set = true;
  } else {
    im.driver = image::Fact::known_as(driver, "", image::Origin::Declared);
  }
  if (gpus.empty()) {
    im.gpu_archs = image::Fact::unknown("the runners' GPUs are not published");
    im.gpu_archs.set = true;
  } else {
    im.gpu_archs = image::Fact::known_as(gpus, "", image::Origin::Declared);
  }
  return im;
}

std::vector<std::string> labels_of(const std::vector<variant::Ranked>& ranked, variant::Ranked::State state) {
  std::vector<std::string> out;
  for (const auto& r : ranked) {
    if (r.state == state) out.push_back(r.label);
  }
  return out;
}

using State = variant::Ranked::State;

TEST(VariantFile, PyTorch210IsReadAndItsSchemaDriftSaid) {
  const auto f = torch_210();
  EXPECT_EQ(f.labels,
            (std::vector<std::string>{"null", "cuda12.6", "cuda12.8", "cuda13.0", "xpu", "rocm7.0", "rocm7.1"}));
  EXPECT_EQ(f.schema_version, "v0.0.3");
  EXPECT_EQ(f.namespace_priorities, (std::vector<std::string>{"nvidia", "intel", "amd", "priority"}));
  ASSERT_NE(f.static_of("priority"), nullptr);
  EXPECT_EQ(f.static_of("priority")->at("order"), (variant::Values{"1", "2", "3"}));
  ASSERT_NE(f.provider("priority"), nullptr);
  EXPECT_FALSE(f.provider("priority")->install_time);
  EXPECT_EQ(f.variants.at("cuda13.0").at("nvidia").at("cuda_version_lower_bound"), (variant::Values{"13.0"}));
  EXPECT_TRUE(f.variants.at("null").empty());
  // Exactly one issue: the schema version uv's preview does not read.
  ASSERT_EQ(f.issues.size(), 1U);
  EXPECT_TRUE(f.issues[0].error);
  EXPECT_NE(f.issues[0].text.find("v0.0.3"), std::string::npos) << f.issues[0].text;
  EXPECT_NE(f.issues[0].text.find("v0.1.1"), std::string::npos) << f.issues[0].text;
}

TEST(VariantFile, WhatUvRefusesIsAnIssue) {
  const auto f = variant::parse(R"({"$schema": "https://variants-schema.wheelnext.dev/v0.1.1.json",
    "default-priorities": {"namespace": ["nvidia", "nvidia"]},
    "providers": {"nvidia": {"plugin-api": "p:P", "requires": ["p"]}},
    "variants": {"null": {"nvidia": {"sm_arch": ["90_real"]}},
                 "Cuda": {"amd": {"gfx_arch": ["gfx942", "gfx942"], "Bad": []}}}})",
                                "t.json");
  std::vector<std::string> texts;
  for (const auto& i : f.issues) texts.push_back(i.text);
  const auto has = [&](const std::string& words) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& t) { return t.find(words) != std::string::npos; });
  };
  EXPECT_TRUE(has("lists 'nvidia' twice")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("variants.null has properties")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("'Cuda' is not a variant label")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("lists 'gfx942' twice")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("'Bad' is not a feature name")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("is an empty list")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("which default-priorities.namespace does not list")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("which has no provider")) << testing::PrintToString(texts);
  EXPECT_FALSE(has("schema")) << testing::PrintToString(texts);
  // Not a variants file at all: an error naming it.
  for (const char* bad :
       {"[1]", "{\"variants\": []}", "{", "{\"default-priorities\": {\"namespace\": \"nvidia\"}, \"variants\": {}}"}) {
    try {
      variant::parse(bad, "bad.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  }
}

TEST(VariantFile, AWheelHoldsItsOwnLabelAndAgreesWithTheIndex) {
  const auto release = torch_210();
  // rocm7.1 as PyTorch's TOML config makes it: rocm_version 7.0.
  auto wheel = variant::parse(R"({"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
    "default-priorities": {"namespace": ["nvidia", "intel", "amd", "priority"]},
    "providers": {"amd": {"plugin-api": "amd_variant_provider.plugin:AMDVariantPlugin", "requires": ["amd-variant-provider>=0.0.2,<1.0.0"],
                          "enable-if": "platform_system == 'Linux'"}},
    "variants": {"rocm7.1": {"amd": {"gfx_arch": ["gfx942"], "rocm_version": ["7.0"]}}}})",
                              "variant.json");
  variant::check_in_wheel(wheel, "rocm7.1");
  EXPECT_FALSE(wheel.has_errors() && wheel.issues.size() > 1) << wheel.issues.back().text;
  const auto diff = variant::compare(wheel, release, "rocm7.1");
  ASSERT_EQ(diff.size(), 1U);
  EXPECT_NE(diff[0].find("amd :: rocm_version :: 7.0"), std::string::npos) << diff[0];
  EXPECT_NE(diff[0].find("amd :: rocm_version :: 7.1"), std::string::npos) << diff[0];
  variant::check_in_wheel(wheel, "rocm7.0");
  EXPECT_NE(wheel.issues.back().text.find("holds its own variant alone ('rocm7.0')"), std::string::npos);
}

TEST(VariantSupport, NvidiaRulesFromTheImage) {
  const auto release = torch_210();
  const auto s = variant::supported(cuda_image("580.65.06", "sm_86,sm_90"), release);
  const auto* lower = s.values("nvidia", "cuda_version_lower_bound");
  ASSERT_NE(lower, nullptr);
  EXPECT_EQ(lower->front(), "13.0");
  EXPECT_NE(std::find(lower->begin(), lower->end(), "12.0"), lower->end());
  EXPECT_EQ(std::find(lower->begin(), lower->end(), "13.1"), lower->end());
  const auto* sm = s.values("nvidia", "sm_arch");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(*sm, (variant::Values{"90_real", "90_virtual"}));  // the highest GPU alone, its major alone
  EXPECT_EQ(s.disabled.count("amd"), 1U);
  EXPECT_EQ(s.disabled.count("intel"), 1U);  // an image built for NVIDIA: its devices are NVIDIA's
  EXPECT_EQ(*s.values("priority", "order"), (variant::Values{"1", "2", "3"}));
  EXPECT_EQ(variant::driver_cuda("570.26"), (std::pair{12, 8}));
  EXPECT_EQ(variant::driver_cuda("575.57.08"), (std::pair{12, 9}));
  EXPECT_FALSE(variant::driver_cuda("440.1"));
}

// The worked picks of ../shared/reference/variants.md.
TEST(VariantOrder, TheDraftsPicksForPyTorch210) {
  const auto release = torch_210();
  const auto cuda13 = variant::order(release, variant::supported(cuda_image("580.65.06", "sm_90"), release));
  EXPECT_EQ(labels_of(cuda13, State::Compatible),
            (std::vector<std::string>{"cuda13.0", "cuda12.8", "cuda12.6", "null"}));
  EXPECT_EQ(cuda13.front().label, "cuda13.0");

  const auto cuda12 = variant::order(release, variant::supported(cuda_image("570.26", "sm_86"), release));
  EXPECT_EQ(labels_of(cuda12, State::Compatible), (std::vector<std::string>{"cuda12.8", "cuda12.6", "null"}));
  const auto it = std::find_if(cuda12.begin(), cuda12.end(), [](const auto& r) { return r.label == "cuda13.0"; });
  ASSERT_NE(it, cuda12.end());
  EXPECT_EQ(it->state, State::Incompatible);
  ASSERT_FALSE(it->why_not.empty());
  EXPECT_NE(it->why_not[0].find("cuda_version_lower_bound :: 13.0"), std::string::npos) << it->why_not[0];

  image::Image cpu;  // no toolkit, no driver, no GPU
  cpu.name = "debian12";
  const auto none = variant::order(release, variant::supported(cpu, release));
  EXPECT_EQ(labels_of(none, State::Compatible), (std::vector<std::string>{"null"}));
  EXPECT_TRUE(labels_of(none, State::Undecided).empty());

  // Unknown driver and GPUs: the CUDA variants wait on them; null is what is known to fit.
  const auto unknown = variant::order(release, variant::supported(cuda_image("", ""), release));
  EXPECT_EQ(labels_of(unknown, State::Compatible), (std::vector<std::string>{"null"}));
  EXPECT_EQ(labels_of(unknown, State::Undecided), (std::vector<std::string>{"cuda12.6", "cuda12.8", "cuda13.0"}));
  const auto& u = *std::find_if(unknown.begin(), unknown.end(), [](const auto& r) { return r.label == "cuda13.0"; });
  ASSERT_EQ(u.depends_on.size(), 2U);
  EXPECT_NE(testing::PrintToString(u.depends_on).find("--assume driver="), std::string::npos);
  EXPECT_NE(testing::PrintToString(u.depends_on).find("--assume gpu_archs="), std::string::npos);

  // A user's statement replaces the provider's rule (PEP 850's user static list).
  auto stated = cuda_image("", "");
  image::assume(stated, "nvidia::sm_arch", "86_real,80_real", "--assume");
  image::assume(stated, "driver", "580.65.06", "--assume");
  const auto s = variant::order(release, variant::supported(stated, release));
  EXPECT_EQ(labels_of(s, State::Compatible), (std::vector<std::string>{"cuda13.0", "cuda12.8", "cuda12.6", "null"}));
  EXPECT_THROW(image::assume(stated, "nvidia::SM", "x", "--assume"), Error);
}

// Requires-Dist markers of a variant: evaluated against its label and properties (PEP 825's variant_* markers).
TEST(VariantMarkers, EvaluatedAgainstTheWheelsVariant) {
  WheelProfile w;
  w.filename = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
  w.variant_json = R"({"$schema": "https://variants-schema.wheelnext.dev/v0.1.1.json",
    "default-priorities": {"namespace": ["nvidia"]}, "providers": {"nvidia": {"plugin-api": "p:P"}},
    "variants": {"cuda12.8": {"nvidia": {"sm_arch": ["86_real", "90_real"]}}}})";
  lock::MarkerEnv env;
  env.values["platform_system"] = "Linux";
  lock::set_variant(env, w);
  EXPECT_TRUE(lock::evaluate_marker("platform_system == 'Linux' and variant_label == 'cuda12.8'", env));
  EXPECT_FALSE(lock::evaluate_marker("variant_label == 'cuda13.0'", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia' in variant_namespaces", env));
  EXPECT_FALSE(lock::evaluate_marker("'amd' in variant_namespaces", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia :: sm_arch' in variant_features", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia::sm_arch::90_real' in variant_properties", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia :: sm_arch :: 80_real' not in variant_properties", env));
  // A plain wheel: no label, empty sets.
  WheelProfile plain;
  plain.filename = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  lock::set_variant(env, plain);
  EXPECT_FALSE(lock::evaluate_marker("'nvidia' in variant_namespaces", env));
  EXPECT_TRUE(lock::evaluate_marker("variant_label == ''", env));
}

// The pick among a release's files: variants by the drafts' order, then null, then plain wheels; without the
// release's variants file no variant is taken; pip's pick (plain wheels only) beside it.
TEST(VariantPick, ARelease) {
  const auto release = torch_210();
  std::vector<lock::File> files;
  for (const char* label : {"", "-null", "-cuda12.6", "-cuda12.8", "-cuda13.0", "-rocm7.1"}) {
    lock::File f;
    f.filename = std::string("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64") + label + ".whl";
    f.url = "https://example.invalid/" + f.filename;
    files.push_back(f);
  }
  lock::Package pkg;
  pkg.name = "torch";
  pkg.version = "2.10.0";
  auto im = cuda_image("570.26", "sm_86");
  im.arch = image::Fact::known_as("x86_64", "", image::Origin::Declared);
  im.python = image::Fact::known_as("3.12", "", image::Origin::Declared);
  im.libc_kind = image::Fact::known_as("glibc", "", image::Origin::Declared);
  im.libc_version = image::Fact::known_as("2.39", "", image::Origin::Declared);
  auto p = lock::pick_wheel(files, pkg, im, &release);
  ASSERT_NE(p.file, nullptr) << p.why;
  EXPECT_EQ(p.variant, "cuda12.8");
  ASSERT_NE(p.without_variants, nullptr);
  EXPECT_EQ(p.without_variants->filename, "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  // No variants file: only the plain wheel.
  p = lock::pick_wheel(files, pkg, im, nullptr);
  ASSERT_NE(p.file, nullptr);
  EXPECT_EQ(p.file->filename, "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  // Unknown driver and GPUs: null, with what it depends on.
  p = lock::pick_wheel(
      files, pkg,
      [&] {
        auto u = im;
        u.driver = image::Fact::unknown("not published");
        u.gpu_archs = image::Fact::unknown("not published");
        return u;
      }(),
      &release);
  ASSERT_NE(p.file, nullptr);
  EXPECT_EQ(p.variant, "null");
  EXPECT_EQ(p.undecided, (std::vector<std::string>{"cuda12.6", "cuda12.8", "cuda13.0"}));
  EXPECT_EQ(p.depends_on.size(), 2U);
}

}  // namespace unity_test_variant
