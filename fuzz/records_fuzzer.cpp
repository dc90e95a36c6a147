// libFuzzer harness: records logs. Any bytes are a log; every line that reads as a record must
// write back to the same line, rank without crashing (its DAG parsed and its steps replayed),
// and feed apply-history-best.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "support/Error.h"
#include "tune/HistoryBest.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tune::RecordFile file = tune::parseRecords(std::string(reinterpret_cast<const char*>(data), size));
  for (const tune::TuningRecord& record : file.records) {
    std::string line;
    try {
      line = tune::recordToLine(record);
    } catch (const Error&) {
      continue;  // a number JSON cannot write (the reader accepted what the writer refuses)
    }
    // A record that was read must read back from its own line as the same record.
    if (tune::recordToLine(tune::recordFromLine(line)) != line) std::abort();
  }
  std::vector<tune::RejectedRecord> rejected;
  tune::topRecords(file.records, 2, &rejected);
  // Picked for a CPU target and for a CUDA target that does not allow TF32 (which leaves out
  // records whose steps tensorize with TF32), each target parsed once.
  static const target::Target cpu = target::Target::parse("cpu"), cuda = target::Target::parse("cuda");
  for (const target::Target* t : {&cpu, &cuda}) {
    tune::HistoryBest history(file.records, *t);
    (void)history.size();
  }
  return 0;
}
