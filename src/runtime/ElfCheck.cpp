#include "runtime/ElfCheck.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "support/Error.h"
#include "support/Files.h"

namespace tessel::runtime {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char* kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char* kHostMachineName = "aarch64";
#else
#error "tessel's runtime knows x86-64 and aarch64 hosts"
#endif

std::string machineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_ARM: return "32-bit ARM";
    case EM_RISCV: return "RISC-V";
    default: return fmt::format("ELF machine {}", machine);
  }
}

/// end = offset + count * size, or fails when that overflows: a corrupt header can hold any value.
bool rangeEnd(uint64_t offset, uint64_t count, uint64_t size, uint64_t& end) {
  if (size != 0 && count > (UINT64_MAX - offset) / size) return false;
  end = offset + count * size;
  return true;
}

class FileReader {
 public:
  explicit FileReader(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    TESSEL_CHECK(fd_ >= 0, "cannot load module '{}': {}", path, std::strerror(errno));
  }
  ~FileReader() { ::close(fd_); }
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  void read(void* to, size_t bytes, uint64_t offset) const {
    size_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pread(fd_, static_cast<char*>(to) + done, bytes - done, off_t(offset + done));
      if (n < 0 && errno == EINTR) continue;
      TESSEL_CHECK(n > 0, "cannot load module '{}': cannot read its headers: {}", path_, n < 0 ? std::strerror(errno) : "unexpected end");
      done += size_t(n);
    }
  }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

void checkLoadableElf(const std::string& path) {
  uint64_t size = checkReadableFile(path, file_kinds::kSharedLibrary);
  auto bad = [&](const std::string& what) { fail("cannot load module '{}': {}", path, what); };
  if (size < EI_NIDENT) bad(fmt::format("not a shared library: the file has only {} bytes", size));
  FileReader file(path);
  unsigned char ident[EI_NIDENT];
  file.read(ident, sizeof ident, 0);
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) bad("not a shared library (it does not start with the ELF magic \\x7fELF)");
  if (ident[EI_CLASS] != ELFCLASS64) bad("a 32-bit ELF file; this machine loads 64-bit libraries");
  if (size < sizeof(Elf64_Ehdr)) bad(fmt::format("truncated: the file has {} bytes, less than an ELF header", size));
  Elf64_Ehdr header;
  file.read(&header, sizeof header, 0);
  if (header.e_type != ET_DYN) bad(fmt::format("not a shared library (ELF type {})", header.e_type));
  if (header.e_machine != kHostMachine)
    bad(fmt::format("built for {}, but this machine is {}", machineName(header.e_machine), kHostMachineName));
  if (header.e_phentsize != sizeof(Elf64_Phdr)) bad(fmt::format("corrupt ELF header (program header size {})", header.e_phentsize));
  uint64_t end = 0;
  if (!rangeEnd(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr), end) || end > size)
    bad(fmt::format("truncated: its program headers end at byte {} but the file has {} bytes", end, size));
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!segments.empty()) file.read(segments.data(), segments.size() * sizeof(Elf64_Phdr), header.e_phoff);
  bool loadable = false;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Elf64_Phdr& p = segments[i];
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
    loadable |= p.p_type == PT_LOAD;
    if (!rangeEnd(p.p_offset, 1, p.p_filesz, end) || end > size)
      bad(fmt::format("truncated: segment {} ends at byte {} but the file has {} bytes (was it cut short while copying?)", i, end,
                      size));
  }
  if (!loadable) bad("not a loadable library (no PT_LOAD segment)");
  if (header.e_shoff != 0 && (!rangeEnd(header.e_shoff, header.e_shnum, header.e_shentsize, end) || end > size))
    bad(fmt::format("truncated: its section headers end at byte {} but the file has {} bytes", end, size));
}

}  // namespace tessel::runtime
