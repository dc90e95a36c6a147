/// Checks a shared library's ELF headers before dlopen maps it. The dynamic loader maps each
/// loadable segment straight from the file: a library cut short (a failed copy, a full disk)
/// maps pages past its end, and the first touch of one kills the process with SIGBUS and no
/// message. Reading the headers first turns that, and a file that is not a library of this
/// machine at all, into an Error that says what is wrong with which file.
#pragma once
#include <string>

namespace tessel::runtime {

/// Throws Error "<path>: ..." unless `path` is a regular file holding a complete ELF shared
/// library for this machine's architecture: ELF magic, 64-bit, type ET_DYN, this machine's
/// e_machine, and every program header, loadable segment and the section header table inside
/// the file.
void checkLoadableElf(const std::string& path);

}  // namespace tessel::runtime
