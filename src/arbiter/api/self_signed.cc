// A self-signed serving certificate, as kube-scheduler and kube-controller-manager make one for
// their secure port when none is given (client-go's cert.GenerateSelfSignedCertKey).
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include "arbiter/api/endpoint.h"
#include "arbiter/api/http.h"

namespace arbiter::api {

namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};

std::string Pem(const std::function<int(BIO*)>& write) {
  std::unique_ptr<BIO, Deleter<BIO_free>> bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : "";
}

}  // namespace

Status WriteSelfSignedCertificate(const std::string& host, const std::string& cert_path, const std::string& key_path) {
  std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>> key(EVP_EC_gen("P-256"));
  std::unique_ptr<X509, Deleter<X509_free>> cert(X509_new());
  if (!key || !cert) return Internal("cannot make a key pair for the serving certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  std::unique_ptr<BIGNUM, Deleter<BN_free>> bn(BN_bin2bn(serial, sizeof serial, nullptr));
  BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  const std::string cn = host + "@" + std::to_string(std::time(nullptr));
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  std::string san = "DNS:localhost,IP:127.0.0.1";
  if (!host.empty() && host != "localhost" && host != "0.0.0.0" && host != "::") {
    const bool ip = host.find_first_not_of("0123456789.:abcdefABCDEF") == std::string::npos && host.find_first_of(".:") != std::string::npos;
    san += (ip ? ",IP:" : ",DNS:") + host;
  }
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, san.c_str()},
                            std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                            std::pair{NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign"},
                            std::pair{NID_ext_key_usage, "serverAuth"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) return Internal("cannot make the serving certificate's extensions");
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return Internal("cannot sign the serving certificate");
  const std::string cert_pem = Pem([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  const std::string key_pem =
      Pem([&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  if (cert_pem.empty() || key_pem.empty()) return Internal("cannot encode the serving certificate");
  ARBITER_RETURN_IF_ERROR(WritePrivateFile(cert_path, cert_pem));
  return WritePrivateFile(key_path, key_pem);
}

}  // namespace arbiter::api
