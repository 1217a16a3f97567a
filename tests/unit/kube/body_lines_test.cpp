#include "kube/body_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ray_webhook {
namespace {

struct Lines {
  std::vector<std::string> got;
  StreamLineSink sink() {
    return [this](std::string_view line) {
      got.emplace_back(line);
      return Status::Ok();
    };
  }
};

AnswerHead Chunked() {
  AnswerHead h;
  h.status = 200;
  h.chunked = true;
  return h;
}

TEST(BodyLinesTest, JoinsLinesAcrossChunksAndAcrossReadsOfAnySize) {
  const std::string body = "5\r\n{\"a\":\r\n4;ext=1\r\n1}\n{\r\nA\r\n\"b\":2}\r\n\r\n\r\n0\r\nTrailer: x\r\n\r\n";
  for (std::size_t piece = 1; piece <= body.size(); ++piece) {
    BodyLines lines(Chunked(), 1024);
    Lines l;
    BodyLines::State state = BodyLines::State::kMore;
    for (std::size_t at = 0; at < body.size(); at += piece) {
      state = lines.Feed(std::string_view(body).substr(at, piece), l.sink());
    }
    EXPECT_EQ(state, BodyLines::State::kEnded) << "pieces of " << piece << ": " << lines.error();
    EXPECT_EQ(l.got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"})) << "pieces of " << piece;
  }
}

TEST(BodyLinesTest, RefusesALineOverTheBoundBeforeHoldingIt) {
  BodyLines lines(Chunked(), 8);
  Lines l;
  EXPECT_EQ(lines.Feed("4\r\nabcd\r\n", l.sink()), BodyLines::State::kMore);
  EXPECT_EQ(lines.Feed("5\r\nefghi\r\n", l.sink()), BodyLines::State::kFailed);
  EXPECT_TRUE(lines.line_too_long());
  EXPECT_TRUE(l.got.empty());
}

TEST(BodyLinesTest, BadFramingAndAnEarlyCloseFail) {
  Lines l;
  BodyLines bad_size(Chunked(), 64);
  EXPECT_EQ(bad_size.Feed("zz\r\n", l.sink()), BodyLines::State::kFailed);
  BodyLines no_crlf(Chunked(), 64);
  EXPECT_EQ(no_crlf.Feed("2\r\nabXY", l.sink()), BodyLines::State::kFailed);
  BodyLines cut(Chunked(), 64);
  EXPECT_EQ(cut.Feed("2\r\nab\r\n", l.sink()), BodyLines::State::kMore);
  EXPECT_EQ(cut.Finish(l.sink()), BodyLines::State::kFailed);
}

TEST(BodyLinesTest, CountsAContentLengthAndReadsAnUnframedBodyToTheClose) {
  AnswerHead counted;
  counted.content_length = 8;
  BodyLines lines(counted, 64);
  Lines l;
  EXPECT_EQ(lines.Feed("one\ntwo", l.sink()), BodyLines::State::kMore);
  EXPECT_EQ(lines.Feed("\nignored", l.sink()), BodyLines::State::kEnded);
  EXPECT_EQ(l.got, (std::vector<std::string>{"one", "two"}));

  BodyLines unframed(AnswerHead{}, 64);
  Lines u;
  EXPECT_EQ(unframed.Feed("a\r\n\nb", u.sink()), BodyLines::State::kMore);
  EXPECT_EQ(unframed.Finish(u.sink()), BodyLines::State::kEnded);
  EXPECT_EQ(u.got, (std::vector<std::string>{"a", "b"}));
}

TEST(BodyLinesTest, TheSinksErrorStopsTheBody) {
  BodyLines lines(AnswerHead{}, 64);
  int calls = 0;
  const StreamLineSink refuse = [&](std::string_view) {
    ++calls;
    return Status::Error("no thanks");
  };
  EXPECT_EQ(lines.Feed("a\nb\n", refuse), BodyLines::State::kFailed);
  EXPECT_EQ(lines.error(), "no thanks");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace ray_webhook
