#include "tune/RecordLog.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>
#include <sstream>

#include "support/Error.h"
#include "support/Files.h"

namespace tessel::tune {

namespace {

std::string systemError() { return std::strerror(errno); }

/// Whether the file at `fd` is non-empty and does not end with a newline: the last write of a
/// killed writer was cut short.
bool endsTorn(int fd, const std::string& path) {
  struct stat info {};
  TESSEL_CHECK(::fstat(fd, &info) == 0, "records log {}: {}", path, systemError());
  if (info.st_size == 0) return false;
  char last = 0;
  TESSEL_CHECK(::pread(fd, &last, 1, info.st_size - 1) == 1, "records log {}: cannot read its end: {}", path, systemError());
  return last != '\n';
}

}  // namespace

// ---- writing --------------------------------------------------------------------------------

RecordLogWriter::RecordLogWriter(std::string path, RecordLogWriterOptions options) : path_(std::move(path)), options_(options) {
  // O_APPEND: every write lands at the current end, also when another process appends to the
  // same log; one write() per line keeps lines whole. Read access only to look at the end.
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  TESSEL_CHECK(fd_ >= 0, "cannot open records log {} for appending: {}", path_, systemError());
  try {
    // Without this, the first new record would be glued to a torn line and lost with it.
    if (endsTorn(fd_, path_)) writeAll("\n");
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

RecordLogWriter::~RecordLogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordLogWriter::writeAll(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TESSEL_CHECK(n > 0, "records log {}: write failed: {}", path_, systemError());
    done += size_t(n);
  }
}

void RecordLogWriter::append(const TuningRecord& record) {
  std::string line = recordToLine(record) + "\n";  // serialize outside the lock
  std::lock_guard lock(mutex_);
  writeAll(line);
  if (options_.fsync) TESSEL_CHECK(::fsync(fd_) == 0, "records log {}: fsync failed: {}", path_, systemError());
  ++written_;
}

void writeRecordLog(const std::string& path, const std::vector<TuningRecord>& records) {
  std::string text;
  for (const auto& r : records) text += recordToLine(r) + "\n";
  writeFile(path, text);
}

// ---- reading --------------------------------------------------------------------------------

namespace {

/// Turns lines into records, skipping (and noting) the ones that are not.
class RecordLineReader {
 public:
  void line(std::string_view text, bool complete) {
    ++number_;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;
    try {
      file_.records.push_back(recordFromLine(std::string(text)));
      // The records of one task carry the same DAG text: keep one copy of it.
      auto& dag = file_.records.back().task.dag;
      if (dag) dag = *dags_.emplace(dag).first;
    } catch (const Error& e) {
      size_t first = text.find_first_not_of(" \t");
      bool startsLikeRecord = first != std::string_view::npos && text.substr(first).starts_with("{\"version\"");
      file_.report.skipped.push_back({number_, !complete, e.what(), startsLikeRecord});
    }
  }
  void overlong(uint64_t bytes, bool complete) {
    ++number_;
    file_.report.skipped.push_back(
        {number_, !complete, fmt::format("the line is {} bytes long, more than a record may have ({})", bytes, kMaxRecordLineBytes), false});
  }
  RecordFile finish() {
    file_.report.lines = number_;
    file_.report.good = int(file_.records.size());
    return std::move(file_);
  }

 private:
  struct SameText {
    bool operator()(const std::shared_ptr<const std::string>& a, const std::shared_ptr<const std::string>& b) const { return *a < *b; }
  };
  RecordFile file_;
  int number_ = 0;
  std::set<std::shared_ptr<const std::string>, SameText> dags_;
};

}  // namespace

RecordFile parseRecords(const std::string& text) {
  RecordLineReader reader;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    bool complete = end != std::string::npos;
    if (!complete) end = text.size();
    if (end - start > kMaxRecordLineBytes) reader.overlong(end - start, complete);
    else reader.line(std::string_view(text).substr(start, end - start), complete);
    start = end + 1;
  }
  return reader.finish();
}

RecordFile readRecords(const std::string& path) {
  // A log can be far larger than memory would like as text: it is read in blocks, a line at a
  // time, and a line longer than any record is skipped without being held.
  checkReadableFile(path, {"records log", std::numeric_limits<uint64_t>::max()});
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TESSEL_CHECK(fd >= 0, "cannot read records log {}: {}", path, systemError());
  RecordLineReader reader;
  std::string line;
  uint64_t lineBytes = 0;  // the current line's length, also past the limit
  std::vector<char> block(size_t(1) << 16);
  for (;;) {
    ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string reason = systemError();
      ::close(fd);
      fail("cannot read records log {}: {}", path, reason);
    }
    if (n == 0) break;
    std::string_view chunk(block.data(), size_t(n));
    while (!chunk.empty()) {
      size_t newline = chunk.find('\n');
      std::string_view piece = chunk.substr(0, newline);
      lineBytes += piece.size();
      if (lineBytes <= kMaxRecordLineBytes) line.append(piece);
      else std::string().swap(line);
      if (newline == std::string_view::npos) break;
      if (lineBytes > kMaxRecordLineBytes) reader.overlong(lineBytes, true);
      else reader.line(line, true);
      line.clear();
      lineBytes = 0;
      chunk.remove_prefix(newline + 1);
    }
  }
  ::close(fd);
  if (lineBytes > kMaxRecordLineBytes) reader.overlong(lineBytes, false);
  else if (lineBytes > 0) reader.line(line, false);
  return reader.finish();
}

std::string RecordReadReport::describeSkipped(int maxListed) const {
  if (skipped.empty()) return "";
  std::string text = fmt::format("skipped {} of {} lines", skipped.size(), lines);
  for (size_t i = 0; i < skipped.size() && int(i) < maxListed; ++i) {
    const auto& s = skipped[i];
    // A long reason (nlohmann quotes the whole bad input) is cut to keep the warning readable.
    std::string reason = s.reason.size() > 160 ? s.reason.substr(0, 157) + "..." : s.reason;
    text += fmt::format("{} line {}{}: {}", i == 0 ? ":" : ";", s.lineNumber, s.torn ? " (torn last line)" : "", reason);
  }
  if (int(skipped.size()) > maxListed) text += fmt::format("; and {} more", int(skipped.size()) - maxListed);
  return text;
}

bool looksLikeRecordsLog(const RecordFile& file) {
  if (!file.records.empty() || file.report.skipped.empty()) return true;
  for (const auto& s : file.report.skipped)
    if (s.startsLikeRecord) return true;
  return false;
}

bool warnSkippedLines(const RecordFile& file, const std::string& path, std::FILE* out) {
  if (file.report.skipped.empty()) return false;
  fmt::print(out, "warning: {}: {}\n", path, file.report.describeSkipped());
  return true;
}

}  // namespace tessel::tune
