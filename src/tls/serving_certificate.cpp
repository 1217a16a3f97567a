#include "ray_webhook/tls/serving_certificate.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "ray_webhook/tls/openssl_error.h"

namespace ray_webhook {
namespace {

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

struct ServingCertificate::Pair {
  std::string cert_pem;
  std::string key_pem;
  X509* leaf = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  ~Pair() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

ServingCertificate::ServingCertificate(std::string cert_file, std::string key_file)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}

ServingCertificate::~ServingCertificate() = default;

std::shared_ptr<const ServingCertificate::Pair> ServingCertificate::Current() const {
  MutexLock lock(&mutex_);
  return current_;
}

Result<bool> ServingCertificate::Reload() {
  auto pair = std::make_shared<Pair>();
  if (!ReadAll(cert_file_, &pair->cert_pem)) {
    return Status::Error("cannot read " + cert_file_);
  }
  if (!ReadAll(key_file_, &pair->key_pem)) {
    return Status::Error("cannot read " + key_file_);
  }
  if (auto current = Current(); current && current->cert_pem == pair->cert_pem && current->key_pem == pair->key_pem) {
    return false;
  }
  ERR_clear_error();
  BIO* cert_bio = BIO_new_mem_buf(pair->cert_pem.data(), static_cast<int>(pair->cert_pem.size()));
  pair->leaf = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  pair->chain = sk_X509_new_null();
  while (pair->leaf) {
    X509* extra = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    if (!extra) break;
    sk_X509_push(pair->chain, extra);
  }
  BIO_free(cert_bio);
  ERR_clear_error();  // the end of the PEM stream reads as an error
  if (!pair->leaf) {
    return Status::Error(cert_file_ + " holds no PEM certificate");
  }
  BIO* key_bio = BIO_new_mem_buf(pair->key_pem.data(), static_cast<int>(pair->key_pem.size()));
  pair->key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  if (!pair->key) {
    return Status::Error(key_file_ + " holds no PEM private key (" + OpenSslErrorText("no details") + ")");
  }
  if (X509_check_private_key(pair->leaf, pair->key) != 1) {
    ERR_clear_error();
    return Status::Error("the key in " + key_file_ + " does not match the certificate in " + cert_file_);
  }
  MutexLock lock(&mutex_);
  current_ = std::move(pair);
  return true;
}

int ServingCertificate::OnCertificate(SSL* ssl, void* arg) {
  auto pair = static_cast<ServingCertificate*>(arg)->Current();
  if (!pair) return 0;
  // OpenSSL keeps one certificate per key type: without this, a reload from
  // ECDSA to RSA would leave the old ECDSA pair in its slot, still offered to
  // every client that prefers ECDSA.
  SSL_certs_clear(ssl);
  if (SSL_use_certificate(ssl, pair->leaf) != 1 || SSL_use_PrivateKey(ssl, pair->key) != 1) return 0;
  return SSL_set1_chain(ssl, pair->chain) == 1 ? 1 : 0;
}

bool ServingCertificate::Install(SSL_CTX* ctx) {
  if (!Current()) return false;
  SSL_CTX_set_cert_cb(ctx, &ServingCertificate::OnCertificate, this);
  return true;
}

std::string ServingCertificate::Describe() const {
  auto pair = Current();
  if (!pair) return "none";
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(pair->leaf), subject, sizeof subject);
  BIO* bio = BIO_new(BIO_s_mem());
  ASN1_TIME_print(bio, X509_get0_notAfter(pair->leaf));
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string not_after(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return std::string(subject) + " (valid until " + not_after + ")";
}

std::int64_t ServingCertificate::NotAfterUnixSeconds() const {
  auto pair = Current();
  if (!pair) return 0;
  // The difference from the epoch, so no time zone or time_t range is involved.
  ASN1_TIME* epoch = ASN1_TIME_set(nullptr, 0);
  int days = 0;
  int seconds = 0;
  const bool ok = epoch != nullptr && ASN1_TIME_diff(&days, &seconds, epoch, X509_get0_notAfter(pair->leaf)) == 1;
  ASN1_TIME_free(epoch);
  return ok ? std::int64_t{days} * 86400 + seconds : 0;
}

}  // namespace ray_webhook
