#include "ray_webhook/coalesced_answer_writes.h"

#include <openssl/bio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string>

namespace ray_webhook {
namespace {

// Private BIO_ctrl commands, far above OpenSSL's BIO_CTRL_* and BIO_C_* numbers.
constexpr int kCtrlHold = 0x52570001;
constexpr int kCtrlRelease = 0x52570002;
constexpr int kCtrlHeld = 0x52570003;

// Held records above this capacity are not kept between answers: an idle
// connection should cost little more than its socket.
constexpr std::size_t kKeptCapacity = 16 * 1024;

struct HeldRecords {
  std::string bytes;
  bool holding = false;
  bool failed = false;
};

HeldRecords* State(BIO* b) { return static_cast<HeldRecords*>(BIO_get_data(b)); }

// Writes every held byte to next; a blocking socket only stops early on a
// signal, which is retried, or on an error, which fails the connection.
bool WriteHeld(HeldRecords& s, BIO* next) {
  std::size_t done = 0;
  while (done < s.bytes.size() && !s.failed) {
    const std::size_t left = std::min<std::size_t>(s.bytes.size() - done, INT_MAX);
    const int n = BIO_write(next, s.bytes.data() + done, static_cast<int>(left));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (!(BIO_should_retry(next) && errno == EINTR)) {
      s.failed = true;
    }
  }
  s.bytes.clear();
  if (s.bytes.capacity() > kKeptCapacity) std::string().swap(s.bytes);
  return !s.failed;
}

int Write(BIO* b, const char* data, int len) {
  HeldRecords* s = State(b);
  BIO* next = BIO_next(b);
  BIO_clear_retry_flags(b);
  if (s == nullptr || next == nullptr || data == nullptr || len < 0 || s->failed) return -1;
  if (len == 0) return 0;
  const auto size = static_cast<std::size_t>(len);
  if (s->holding && s->bytes.size() + size <= CoalescedAnswerWrites::kHoldLimit) {
    s->bytes.append(data, size);
    return len;
  }
  if (!WriteHeld(*s, next)) return -1;
  const int n = BIO_write(next, data, len);
  if (n <= 0) BIO_copy_next_retry(b);
  return n;
}

long Ctrl(BIO* b, int cmd, long num, void* ptr) {
  HeldRecords* s = State(b);
  BIO* next = BIO_next(b);
  if (s == nullptr) return 0;
  switch (cmd) {
    case kCtrlHold: s->holding = true; return 1;
    case kCtrlRelease: s->holding = false; return next != nullptr && WriteHeld(*s, next) ? 1 : 0;
    case kCtrlHeld: return static_cast<long>(s->bytes.size());
    case BIO_CTRL_FLUSH:
      // OpenSSL flushes after handshake messages and alerts: they leave now, after what is held.
      if (next == nullptr || !WriteHeld(*s, next)) return 0;
      return BIO_ctrl(next, cmd, num, ptr);
    case BIO_CTRL_WPENDING:
      return static_cast<long>(s->bytes.size()) + (next != nullptr ? BIO_ctrl(next, cmd, num, ptr) : 0);
    default: return next != nullptr ? BIO_ctrl(next, cmd, num, ptr) : 0;
  }
}

long CallbackCtrl(BIO* b, int cmd, BIO_info_cb* fp) {
  BIO* next = BIO_next(b);
  return next != nullptr ? BIO_callback_ctrl(next, cmd, fp) : 0;
}

int Create(BIO* b) {
  BIO_set_data(b, new HeldRecords);
  BIO_set_init(b, 1);
  return 1;
}

int Destroy(BIO* b) {
  delete State(b);
  BIO_set_data(b, nullptr);
  return 1;
}

struct FilterMethod {
  int type = 0;
  BIO_METHOD* method = nullptr;
};

// One method for the process, made on first use (thread-safe static).
const FilterMethod& Method() {
  static const FilterMethod filter = [] {
    FilterMethod f;
    f.type = BIO_get_new_index() | BIO_TYPE_FILTER;
    BIO_METHOD* m = BIO_meth_new(f.type, "ray-webhook coalesced answer writes");
    if (m != nullptr &&
        (BIO_meth_set_write(m, Write) != 1 || BIO_meth_set_ctrl(m, Ctrl) != 1 ||
         BIO_meth_set_callback_ctrl(m, CallbackCtrl) != 1 || BIO_meth_set_create(m, Create) != 1 ||
         BIO_meth_set_destroy(m, Destroy) != 1)) {
      BIO_meth_free(m);
      m = nullptr;
    }
    f.method = m;
    return f;
  }();
  return filter;
}

// The connection's filter, or null before its first Hold.
BIO* Filter(const SSL* ssl) {
  if (ssl == nullptr || Method().method == nullptr) return nullptr;
  BIO* w = SSL_get_wbio(ssl);
  return w != nullptr && BIO_method_type(w) == Method().type ? w : nullptr;
}

}  // namespace

bool CoalescedAnswerWrites::Hold(const SSL* ssl) {
  if (ssl == nullptr || Method().method == nullptr) return false;
  BIO* filter = Filter(ssl);
  if (filter == nullptr) {
    // cpp-httplib hands us a const SSL*; the connection is this thread's own.
    SSL* s = const_cast<SSL*>(ssl);
    BIO* socket = SSL_get_wbio(s);
    if (socket == nullptr || (filter = BIO_new(Method().method)) == nullptr) return false;
    // SSL_set0_wbio frees one reference of the BIO it replaces: the filter keeps its own.
    if (BIO_up_ref(socket) != 1) {
      BIO_free(filter);
      return false;
    }
    BIO_push(filter, socket);
    SSL_set0_wbio(s, filter);
  }
  return BIO_ctrl(filter, kCtrlHold, 0, nullptr) == 1;
}

bool CoalescedAnswerWrites::Release(const SSL* ssl) {
  BIO* filter = Filter(ssl);
  return filter == nullptr || BIO_ctrl(filter, kCtrlRelease, 0, nullptr) == 1;
}

std::size_t CoalescedAnswerWrites::Held(const SSL* ssl) {
  BIO* filter = Filter(ssl);
  return filter == nullptr ? 0 : static_cast<std::size_t>(BIO_ctrl(filter, kCtrlHeld, 0, nullptr));
}

}  // namespace ray_webhook
