#include "ray_webhook/tls_stream.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "tls_pair.h"

namespace ray_webhook {
namespace {

using testing::TlsPair;

class TlsStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sock_ = pair_.Connect();
    ssl_ = pair_.AcceptServerSide();
    ASSERT_TRUE(pair_.ClientReady());
    stream_ = std::make_unique<TlsStream>(ssl_, sock_, &addresses_, std::chrono::seconds(5), std::chrono::seconds(5));
  }
  void TearDown() override {
    stream_.reset();
    SSL_free(ssl_);
  }

  // What the stream reads, in pieces of the given sizes, until n bytes or the end.
  std::string ReadInPieces(std::size_t n, const std::vector<std::size_t>& sizes) {
    std::string got;
    std::vector<char> buf(65536);
    for (std::size_t i = 0; got.size() < n; ++i) {
      const std::size_t want = std::min(sizes[i % sizes.size()], n - got.size());
      const ssize_t r = stream_->read(buf.data(), want);
      if (r <= 0) break;
      EXPECT_LE(static_cast<std::size_t>(r), want);
      got.append(buf.data(), static_cast<std::size_t>(r));
    }
    return got;
  }

  static std::string Pattern(std::size_t n, char seed) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i % 23);
    return s;
  }

  TlsPair pair_;
  int sock_ = -1;
  SSL* ssl_ = nullptr;
  SocketAddresses addresses_;
  std::unique_ptr<TlsStream> stream_;
};

// cpp-httplib 0.11 reads the request line and headers a byte at a time.
TEST_F(TlsStreamTest, ByteReadsOfHeadersComeFromTheBufferAndTheBodyFollowsExactly) {
  const std::string head = "POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 9000\r\n\r\n";
  const std::string body = Pattern(9000, 'a');
  pair_.ClientSend(head + body);
  char c = 0;
  ASSERT_EQ(stream_->read(&c, 1), 1);
  // The first byte's SSL_read took a whole buffer out of the (one) record:
  // the next bytes are served without OpenSSL.
  EXPECT_EQ(SSL_pending(ssl_), static_cast<int>(head.size() + body.size() - TlsStream::kReadBuffer));
  std::string line(1, c);
  while (line.size() < head.size() && stream_->read(&c, 1) == 1) line += c;
  EXPECT_EQ(line, head);
  EXPECT_EQ(ReadInPieces(body.size(), {4096}), body);
  EXPECT_FALSE(stream_->HasBufferedInput());
}

TEST_F(TlsStreamTest, MixedReadSizesAcrossRecordsReturnThePlaintextInOrder) {
  const std::string a = Pattern(100, 'A'), b = Pattern(5000, 'b'), c = Pattern(20000, '0');
  pair_.ClientSend(a);
  pair_.ClientSend(b);
  pair_.ClientSend(c);
  EXPECT_EQ(ReadInPieces(a.size() + b.size() + c.size(), {1, 7, 4096, 5000, 3, 16384, 4095}), a + b + c);
}

TEST_F(TlsStreamTest, WritesAreHeldUntilFlushAndLeaveAsOneRecord) {
  const std::string status = "HTTP/1.1 200 OK\r\nContent-Length: 1300\r\n\r\n";
  const std::string body = Pattern(1300, 'x');
  ASSERT_EQ(stream_->write(status.data(), status.size()), static_cast<ssize_t>(status.size()));
  ASSERT_EQ(stream_->write(body.data(), body.size()), static_cast<ssize_t>(body.size()));
  EXPECT_FALSE(pair_.ClientHasBytesWaiting());
  ASSERT_TRUE(stream_->Flush());
  std::string raw;
  for (int i = 0; i < 100 && raw.empty(); ++i) {
    raw = pair_.ClientPeekRaw();
    if (raw.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A TLS record's header: type 23 (application data), version, 16-bit length.
  // One TLS record: type 23 (application data), version, 16-bit length, and
  // nothing after it.
  ASSERT_GE(raw.size(), 5u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 23);
  const std::size_t length = (static_cast<unsigned char>(raw[3]) << 8) | static_cast<unsigned char>(raw[4]);
  EXPECT_EQ(raw.size(), 5 + length);
  EXPECT_GE(length, status.size() + body.size());
  EXPECT_EQ(pair_.ClientReceive(status.size() + body.size()), status + body);
}

TEST_F(TlsStreamTest, AReadThatMustWaitForThePeerFlushesWhatIsHeldFirst) {
  // Expect: 100-continue: the client sends its body only once it has the interim answer.
  const std::string interim = "HTTP/1.1 100 Continue\r\n\r\n";
  auto client = std::async(std::launch::async, [&] {
    const std::string got = pair_.ClientReceive(interim.size());
    if (got == interim) pair_.ClientSend("body");
    return got;
  });
  ASSERT_EQ(stream_->write(interim.data(), interim.size()), static_cast<ssize_t>(interim.size()));
  char buf[16];
  const ssize_t n = stream_->read(buf, sizeof(buf));
  EXPECT_EQ(client.get(), interim);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(std::string(buf, 4), "body");
}

TEST_F(TlsStreamTest, WritesLargerThanTheHoldKeepTheirOrder) {
  const std::string a = Pattern(100, 'a'), big = Pattern(3 * TlsStream::kWriteHold + 17, 'B'), z = "z";
  auto client = std::async(std::launch::async, [&] { return pair_.ClientReceive(a.size() + big.size() + z.size()); });
  EXPECT_EQ(stream_->write(a.data(), a.size()), static_cast<ssize_t>(a.size()));
  EXPECT_EQ(stream_->write(big.data(), big.size()), static_cast<ssize_t>(big.size()));
  EXPECT_EQ(stream_->write(z.data(), z.size()), 1);
  EXPECT_TRUE(stream_->Flush());
  EXPECT_EQ(client.get(), a + big + z);
}

TEST_F(TlsStreamTest, AFailedWriteFailsEveryLaterWrite) {
  ::shutdown(pair_.client_fd(), SHUT_RDWR);
  const std::string chunk = Pattern(TlsStream::kWriteHold, 'c');
  bool failed = false;
  // The first writes may still land in the kernel's buffers; the peer's reset fails a later one.
  for (int i = 0; i < 1000 && !failed; ++i) failed = stream_->write(chunk.data(), chunk.size()) < 0 || !stream_->Flush();
  ASSERT_TRUE(failed);
  EXPECT_EQ(stream_->write("x", 1), -1);
  EXPECT_FALSE(stream_->Flush());
}

TEST_F(TlsStreamTest, ReadReturnsZeroAtThePeersClose) {
  pair_.ClientSend("last");
  ASSERT_EQ(SSL_shutdown(pair_.client()), 0);  // close_notify sent
  EXPECT_EQ(ReadInPieces(4, {1}), "last");
  char c;
  EXPECT_EQ(stream_->read(&c, 1), 0);
}

TEST_F(TlsStreamTest, AddressesAreThoseOfTheSocket) {
  sockaddr_in client{};
  socklen_t len = sizeof(client);
  ASSERT_EQ(::getsockname(pair_.client_fd(), reinterpret_cast<sockaddr*>(&client), &len), 0);
  std::string ip;
  int port = 0;
  for (int i = 0; i < 2; ++i) {  // the second time from what the first learnt
    EXPECT_EQ(addresses_.known, i == 1);
    stream_->get_remote_ip_and_port(ip, port);
    EXPECT_EQ(ip, "127.0.0.1");
    EXPECT_EQ(port, ntohs(client.sin_port));
    stream_->get_local_ip_and_port(ip, port);
    EXPECT_EQ(ip, "127.0.0.1");
    EXPECT_EQ(port, pair_.server_port());
  }
  EXPECT_EQ(stream_->socket(), sock_);
}

}  // namespace
}  // namespace ray_webhook
