// What the process sets up and says about itself (inspector/util/process.cpp), and the CA bundle a
// libcurl without one of its own uses (inspector/net/http_support.cpp). The static binary's behaviour in a
// bare root (no nsswitch modules, a hostile openssl.cnf) is tested on the real package: tests/package.
#include <gnu/libc-version.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "inspector/net/http_support.hpp"
#include "support.hpp"
#include "wheelcheck/process.hpp"

namespace wheelcheck::test {
namespace {

class SslCertFile {
 public:
  explicit SslCertFile(const char* value) {
    if (const char* old = std::getenv("SSL_CERT_FILE")) m_old = old;
    if (value != nullptr) {
      ::setenv("SSL_CERT_FILE", value, 1);
    } else {
      ::unsetenv("SSL_CERT_FILE");
    }
  }
  ~SslCertFile() {
    if (m_old.empty()) {
      ::unsetenv("SSL_CERT_FILE");
    } else {
      ::setenv("SSL_CERT_FILE", m_old.c_str(), 1);
    }
  }
  SslCertFile(const SslCertFile&) = delete;
  SslCertFile& operator=(const SslCertFile&) = delete;

 private:
  std::string m_old;
};

TEST(CaBundle, TheFirstBundleThatExistsUnlessSslCertFileNamesOne) {
  TempDir d;
  const std::string a = d.file("a.crt"), b = d.write("b.crt", "pem\n"), c = d.write("c.crt", "pem\n");
  {
    SslCertFile unset(nullptr);
    EXPECT_EQ(net::detail::find_ca_bundle({a, b, c}), b) << "a does not exist; b is the first that does";
    EXPECT_EQ(net::detail::find_ca_bundle({a}), "") << "none exists";
    EXPECT_EQ(net::detail::find_ca_bundle({d.path()}), "") << "a folder is not a bundle";
  }
  {
    SslCertFile set(c.c_str());
    EXPECT_EQ(net::detail::find_ca_bundle({a, b}), c);
  }
  {
    SslCertFile empty("");
    EXPECT_EQ(net::detail::find_ca_bundle({a, b}), b) << "an empty SSL_CERT_FILE is unset";
  }
  EXPECT_EQ(net::detail::k_ca_bundles.front(), "/etc/ssl/certs/ca-certificates.crt");
}

TEST(Process, BuildDescriptionNamesTheBuildAndWhatItRunsWith) {
  const std::string d = build_description();
  EXPECT_EQ(d.rfind("dynamic, ", 0), 0U) << d << ": the test build links Debian's shared libraries";
  EXPECT_NE(d.find(std::string("glibc ") + gnu_get_libc_version()), std::string::npos) << d;
  EXPECT_NE(d.find("OpenSSL 3."), std::string::npos) << d;
  EXPECT_NE(d.find("libcurl 7."), std::string::npos) << d;
  EXPECT_NE(d.find("libzip 1."), std::string::npos) << d;
  EXPECT_NE(d.find("LIEF 0.9"), std::string::npos) << d;
}

TEST(Process, VersionFlagSaysVersionAndBuild) {
  const auto r = run(shell_quote(binary_path()) + " --version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("wheelcheck ") + WHEELCHECK_VERSION + " (" + build_description() + ")\n");
}

}  // namespace
}  // namespace wheelcheck::test
