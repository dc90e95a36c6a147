/// The records log on disk: JSON lines, one per finished trial, only ever appended to.
/// The writer hands every line to the kernel in one write() as soon as the trial ends, so a
/// tuning run killed with SIGKILL loses only the trials in flight (with `fsync`, a power cut
/// too). The reader never fails on a damaged line: a line torn by a kill, or garbage, is
/// skipped and reported with its line number, and the rest of the log is used.
#pragma once
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "tune/Record.h"

namespace tessel::tune {

struct RecordLogWriterOptions {
  /// fsync after every line: survives a power cut, at a few milliseconds per trial.
  bool fsync = false;
};

/// Appends records to a log; opening an existing log appends to it. Thread-safe.
class RecordLogWriter {
 public:
  explicit RecordLogWriter(std::string path, RecordLogWriterOptions options = {});
  ~RecordLogWriter();
  RecordLogWriter(const RecordLogWriter&) = delete;
  RecordLogWriter& operator=(const RecordLogWriter&) = delete;

  /// Writes the record as one line; it is in the file when this returns.
  void append(const TuningRecord& record);
  const std::string& path() const { return path_; }
  int written() const { return written_; }

 private:
  void writeAll(const std::string& bytes);
  std::string path_;
  RecordLogWriterOptions options_;
  int fd_ = -1;
  int written_ = 0;
  std::mutex mutex_;
};

/// Writes `records` as a new log at `path`, whole or not at all (writeFile: a temporary file
/// renamed into place, so a reader never sees half of it and `path` may be the log they came from).
void writeRecordLog(const std::string& path, const std::vector<TuningRecord>& records);

/// A line of the log that was not used.
struct SkippedLine {
  int lineNumber = 0;   ///< 1-based
  bool torn = false;    ///< the last line, without its newline: a write cut short by a kill
  std::string reason;   ///< why it could not be read
  bool startsLikeRecord = false;  ///< begins as a record line does ({"version"...)
};

struct RecordReadReport {
  int lines = 0;  ///< lines in the file, blank ones included
  int good = 0;   ///< records read
  std::vector<SkippedLine> skipped;
  /// "skipped 2 of 120 lines: line 7: not JSON (...); line 120 (torn last line): ...", at most
  /// `maxListed` lines named; empty when nothing was skipped.
  std::string describeSkipped(int maxListed = 5) const;
};

struct RecordFile {
  std::vector<TuningRecord> records;  ///< in file order
  RecordReadReport report;
};

/// The longest line a reader accepts as a record: a record with a step list of thousands of
/// steps is far below it; a longer line is skipped without being held in memory.
inline constexpr uint64_t kMaxRecordLineBytes = uint64_t(16) << 20;

/// Reads a log, streamed line by line. A missing or unreadable file, a directory or a device is
/// an Error naming it; damaged lines are not.
RecordFile readRecords(const std::string& path);
/// Reads log text (the body of readRecords, for callers that have the text already).
RecordFile parseRecords(const std::string& text);
/// Whether a file read as a log is one: empty, or with at least one record or a line that
/// starts as a record does (a log whose only line was torn by a kill is still a log).
bool looksLikeRecordsLog(const RecordFile& file);
/// Prints `warning: PATH: skipped ...` to `out` when lines were skipped; returns whether it did.
bool warnSkippedLines(const RecordFile& file, const std::string& path, std::FILE* out = stderr);

}  // namespace tessel::tune
